-- The media server of a new sfu/mcu connection (KEYS and args: see rtOpen): a downstream sfu
-- connection's (args.remote) is its upstream's; else the channel's server of that type while it keeps
-- it (see media_server_keeps); else the least-loaded eligible one, which the channel then keeps
-- (`keep`: the channel hash field to write). Answers server, failure, keep.
local function place_connection(args, servers_key, channel, now)
  if given(args.remote) then
    local member = redis.call('HGET', channel .. ':cnids', args.remote)
    if not member then return false, 'remote' end
    local upstream = hash_get_all(connection_key(args.ch, member, args.remote))
    if upstream.type ~= 'sfu' or upstream.remoteConnectionId or not upstream.mediaServerId then
      return false, 'remote'
    end
    return upstream.mediaServerId
  end
  local field = args.type .. 'MediaServerId'
  local kept = redis.call('HGET', channel, field)
  if kept and media_server_keeps(servers_key, kept, args.timeoutMs, now) then return kept end
  local picked = pick_media_server(servers_key, args.timeoutMs, now)
  if not picked then return false, 'unavailable' end
  return picked, nil, field
end

-- rtOpen: opens a connection of a member client in a channel. KEYS: the application's base key,
-- the servers base key, the journal. args: u, d, cl, ch, cn, type, fields, claimFlag, app; place
-- (sfu/mcu): placed by place_connection (timeoutMs; remote: a downstream's upstream, escaped), or
-- 'unavailable' / 'remote' first. `:cnids` finds a channel's placed connections by id (the first of an id).
local function open_connection(args, servers_key)
  local user_id, device_id, client_id, channel_id, connection_id = args.u, args.d, args.cl, args.ch, args.cn
  local device_member = user_id .. '/' .. device_id
  local client_member = device_member .. '/' .. client_id
  local key = client_key(client_member)
  local now = now_ms()
  local channel = channel_key(channel_id)
  local media_server_id, keep = false, nil
  if args.place then
    local refused
    media_server_id, refused, keep = place_connection(args, servers_key, channel, now)
    if not media_server_id then return failure(refused) end
  end
  if redis.call('EXISTS', key) == 0 then return failure('client') end
  local claim = redis.call('HGET', channel .. ':clients', client_member)
  if not claim then return failure('membership') end
  if given(args.claimFlag) then
    local ok, decoded = pcall(cjson.decode, claim)
    if ok and type(decoded) == 'table' and decoded[args.claimFlag] == true then
      return failure('claim', args.claimFlag)
    end
  end
  local conn_key = connection_key(channel_id, client_member, connection_id)
  if redis.call('EXISTS', conn_key) == 1 then return failure('exists') end
  -- A media-agent names connections by channel and id: on a `janus` server an id is the channel's once.
  local indexed = media_server_id and redis.call('HGET', channel .. ':cnids', connection_id)
  if indexed and media_server_type(servers_key, media_server_id) == 'janus' then return failure('exists') end
  local fields = { 'state', 'new', 'type', args.type, 'openedAt', integer_text(now) }
  for field, value in pairs(args.fields) do
    fields[#fields + 1] = field
    fields[#fields + 1] = value
  end
  if media_server_id then
    count_pending_on(servers_key, media_server_id, args.app)
    if keep then redis.call('HSET', channel, keep, media_server_id) end
    if not indexed then redis.call('HSET', channel .. ':cnids', connection_id, client_member) end
    fields[#fields + 1] = 'mediaServerId'
    fields[#fields + 1] = media_server_id
  end
  redis.call('HSET', conn_key, unpack(fields))
  -- The record is exactly these fields (it did not exist).
  local connection = {}
  for i = 1, #fields, 2 do connection[fields[i]] = fields[i + 1] end
  redis.call('SADD', channel .. ':conns', client_member .. '/' .. connection_id)
  redis.call('SADD', app_key .. ':conns', channel_id .. '/' .. client_member .. '/' .. connection_id)
  redis.call('SADD', channel .. ':cconn:' .. client_member, connection_id)
  redis.call('HINCRBY', channel .. ':uconns', user_id, 1)
  redis.call('HINCRBY', channel .. ':dconns', device_member, 1)
  return {
    conn = connection, client = read_client(key), org = organization_id(),
    levels = settings_levels(channel_id, user_id, device_member, client_member, connection_id),
  }
end
