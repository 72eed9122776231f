-- rtRemoveMembers (kicks, a leave): removes everyone, a user's or device's clients, or one client
-- (only while registration `session` holds it) from a channel, closing their connections. KEYS: the
-- application's base key, the servers base key, the journal. args: app, ch, level, u, d, cl, session.
local function remove_members(args, servers_key)
  local channel_id, level = args.ch, args.level
  local channel = channel_key(channel_id)
  local selected
  if level == 'channel' then
    if redis.call('HEXISTS', app_key .. ':channels', channel_id) == 0 then return failure('channel') end
  elseif level == 'user' then
    if redis.call('HEXISTS', channel .. ':users', args.u) == 0 then return failure('user') end
    selected = args.u .. '/'
  elseif level == 'device' then
    if redis.call('HEXISTS', channel .. ':devices', args.u .. '/' .. args.d) == 0 then return failure('device') end
    selected = args.u .. '/' .. args.d .. '/'
  else
    selected = args.u .. '/' .. args.d .. '/' .. args.cl
    if redis.call('HEXISTS', channel .. ':clients', selected) == 0 then return failure('client') end
    if given(args.session) and redis.call('HGET', client_key(selected), 'sessionId') ~= args.session then
      return failure('client')
    end
  end
  local now = now_ms()
  local media = { servers_key = servers_key, app_id = args.app }
  local lefts = {}
  local clients = {}
  for _, member in ipairs(redis.call('HKEYS', channel .. ':clients')) do
    local picked = (level == 'channel')
      or (level == 'client' and member == selected)
      or (level ~= 'client' and starts_with(member, selected))
    if picked then
      local ids = split_member(member)
      clients[member] = read_client(client_key(member))
      local left = leave_channel(channel_id, ids[1], ids[2], ids[3], now, media)
      if left then lefts[#lefts + 1] = left end
    end
  end
  return { lefts = lefts, clients = clients, org = organization_id() }
end
