-- rtUnregister: a client leaves every channel (closing its connections and freeing their media
-- server counts) and is forgotten. KEYS: the application's base key, the servers base key, the
-- journal. args: u, d, cl, app, idleTtlMs; gw, session: only while that registration holds it.
local function unregister_client(args, servers_key)
  local user_id, device_id, client_id = args.u, args.d, args.cl
  local device_member = user_id .. '/' .. device_id
  local client_member = device_member .. '/' .. client_id
  local key = client_key(client_member)
  if redis.call('EXISTS', key) == 0 then return failure('client') end
  local client = read_client(key)
  -- A client that registered again meanwhile (another gateway, or another session) stays.
  if given(args.gw) and client.gatewayId ~= args.gw then return failure('moved') end
  if given(args.session) and client.sessionId ~= args.session then return failure('moved') end
  local now = now_ms()
  local media = { servers_key = servers_key, app_id = args.app }
  local lefts = {}
  for _, channel_id in ipairs(redis.call('SMEMBERS', key .. ':channels')) do
    local left = leave_channel(channel_id, user_id, device_id, client_id, now, media)
    if left then lefts[#lefts + 1] = left end
  end
  local user = app_key .. ':u:' .. user_id
  local device = app_key .. ':d:' .. device_member
  redis.call('SREM', app_key .. ':clients', client_member)
  redis.call('SREM', device .. ':clients', client_id)
  decrement_count(user .. ':devices', device_id)
  if decrement_count(app_key .. ':devices', device_member) then
    redis.call('DEL', device, device .. ':clients', device .. ':channels')
  end
  if decrement_count(app_key .. ':users', user_id) then
    redis.call('DEL', user, user .. ':devices', user .. ':channels')
  end
  redis.call('DEL', key, key .. ':channels')
  forget_client(key)
  local result = { client = client, lefts = lefts, org = organization_id(), at = integer_text(now) }
  if redis.call('SCARD', app_key .. ':clients') == 0 then
    redis.call('HSET', app_key, 'inUse', '0')
    result.index = { gen = bump_generation(now), state = 0, org = redis.call('HGET', app_key, 'organizationId') or '' }
    redis.call('PEXPIRE', app_key, args.idleTtlMs)
  end
  return result
end
