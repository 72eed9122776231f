-- rtOpen: opens a connection of a member client in a channel. KEYS: the application's base key,
-- the servers base key, the journal. args: u, d, cl, ch, cn, type, fields, claimFlag, app; place
-- (sfu/mcu): placed on the least-loaded eligible media server (timeoutMs), or 'unavailable' first.
local function open_connection(args, servers_key)
  local user_id, device_id, client_id, channel_id, connection_id = args.u, args.d, args.cl, args.ch, args.cn
  local device_member = user_id .. '/' .. device_id
  local client_member = device_member .. '/' .. client_id
  local key = client_key(client_member)
  local now = now_ms()
  local media_server_id = false
  if args.place then
    media_server_id = pick_media_server(servers_key, args.timeoutMs, now)
    if not media_server_id then return failure('unavailable') end
  end
  if redis.call('EXISTS', key) == 0 then return failure('client') end
  local channel = channel_key(channel_id)
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
  local fields = { 'state', 'new', 'type', args.type, 'openedAt', integer_text(now) }
  for field, value in pairs(args.fields) do
    fields[#fields + 1] = field
    fields[#fields + 1] = value
  end
  if media_server_id then
    count_pending_on(servers_key, media_server_id, args.app)
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
