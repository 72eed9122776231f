-- rtConnState: moves a connection to a new state; a terminal state removes it from the live model.
-- Its media server count moves along. KEYS: the application's base key, the servers base key, the
-- journal. args: u, d, cl, ch, cn, app, state, from, terminal, error; session: as in rtRemoveMembers;
-- server: only a connection on that media server; reported: the client's own report, whose `connected`
-- a `janus` media server's connection takes only from its media server (failure 'media').
local function change_connection_state(args, servers_key)
  local user_id, device_id, client_id, channel_id, connection_id = args.u, args.d, args.cl, args.ch, args.cn
  local device_member = user_id .. '/' .. device_id
  local client_member = device_member .. '/' .. client_id
  local conn_key = connection_key(channel_id, client_member, connection_id)
  local connection = hash_get_all(conn_key)
  if next(connection) == nil then return failure('connection') end
  if given(args.session) and redis.call('HGET', client_key(client_member), 'sessionId') ~= args.session then
    return failure('connection')
  end
  if given(args.server) and connection.mediaServerId ~= args.server then return failure('connection') end
  local old_state = connection.state or false
  if old_state == args.state then return { same = true } end
  if args.reported and args.state == 'connected' and connection.mediaServerId
    and media_server_type(servers_key, connection.mediaServerId) == 'janus' then
    return failure('media')
  end
  local allowed = false
  for _, state in ipairs(args.from) do if state == old_state then allowed = true end end
  if not allowed then return failure('transition', old_state) end
  local now = now_ms()
  if given(args.error) then redis.call('HSET', conn_key, 'error', args.error) end
  if args.terminal then
    -- close_connection returns the record with its last live state; the final state travels beside it.
    local media = { servers_key = servers_key, app_id = args.app }
    local closed = close_connection(channel_id, user_id, device_id, client_id, connection_id, args.state, now, media)
    return { old = old_state, closed = closed, client = read_client(client_key(client_member)), org = organization_id() }
  end
  -- The record as read, with what this change writes.
  local set = { 'state', args.state }
  connection.state = args.state
  if given(args.error) then connection.error = args.error end
  if args.state == 'connected' and not connection.connectedAt then
    connection.connectedAt = integer_text(now)
    set[3] = 'connectedAt'
    set[4] = connection.connectedAt
  end
  redis.call('HSET', conn_key, unpack(set))
  if connection.mediaServerId and old_state then
    local from, to = media_phase(old_state), media_phase(args.state)
    move_media_count(servers_key, connection.mediaServerId, args.app, from, to, 0)
  end
  return {
    old = old_state, conn = connection, client = read_client(client_key(client_member)), org = organization_id(),
    levels = settings_levels(channel_id, user_id, device_member, client_member, connection_id),
    at = integer_text(now),
  }
end
