-- rtRegister: registers a client (replacing a registration of another session) and adds it to its
-- gateway's client set. KEYS: the application's base key, the gateway's client set, the journal.
-- args: u, d, cl (escaped), app, org, gw, gwMember, roles, protocol, claims, the optional fields.
local function register_client(args, gateway_clients_key)
  local user_id, device_id, client_id = args.u, args.d, args.cl
  local device_member = user_id .. '/' .. device_id
  local client_member = device_member .. '/' .. client_id
  local key = client_key(client_member)
  local now = now_ms()
  local existed = redis.call('EXISTS', key) == 1
  local previous_gateway = false
  local replaced = false
  if existed then
    previous_gateway = redis.call('HGET', key, 'gatewayId') or false
    local previous_session = redis.call('HGET', key, 'sessionId')
    if given(args.sessionId) and previous_session and previous_session ~= args.sessionId then
      -- The previous registration's channels and connections end with it, as an unregister ends them.
      replaced = { client = read_client(key), lefts = {} }
      local servers_key = string.match(gateway_clients_key, '^(.*):gateway:clients:')
      local media = { servers_key = servers_key, app_id = args.app }
      for _, channel_id in ipairs(redis.call('SMEMBERS', key .. ':channels')) do
        local left = leave_channel(channel_id, user_id, device_id, client_id, now, media)
        if left then replaced.lefts[#replaced.lefts + 1] = left end
      end
    end
  end
  -- One HSET (and one HDEL of the optional fields not given) for the whole client hash.
  local set = { 'gatewayId', args.gw, 'roles', args.roles, 'protocol', args.protocol, 'claims', args.claims }
  local del = {}
  for _, field in ipairs({ 'userAlias', 'deviceAlias', 'tag', 'sessionId' }) do
    if given(args[field]) then
      set[#set + 1] = field
      set[#set + 1] = args[field]
    else
      del[#del + 1] = field
    end
  end
  if not existed or replaced then
    set[#set + 1] = 'registeredAt'
    set[#set + 1] = integer_text(now)
  end
  redis.call('HSET', key, unpack(set))
  if existed and #del > 0 then redis.call('HDEL', key, unpack(del)) end
  if given(args.userAlias) then redis.call('HSET', app_key .. ':u:' .. user_id, 'alias', args.userAlias) end
  if given(args.deviceAlias) then redis.call('HSET', app_key .. ':d:' .. device_member, 'alias', args.deviceAlias) end
  if not existed then
    redis.call('SADD', app_key .. ':clients', client_member)
    redis.call('HINCRBY', app_key .. ':users', user_id, 1)
    redis.call('HINCRBY', app_key .. ':devices', device_member, 1)
    redis.call('HINCRBY', app_key .. ':u:' .. user_id .. ':devices', device_id, 1)
    redis.call('SADD', app_key .. ':d:' .. device_member .. ':clients', client_id)
  end
  redis.call('HSET', app_key, 'organizationId', args.org)
  owner_id = false
  forget_client(key)
  -- Leaving the set of a previous gateway (rare: registered again elsewhere) is the caller's.
  redis.call('SADD', gateway_clients_key, args.gwMember)
  local result = {
    new = not existed, prevGatewayId = previous_gateway, client = read_client(key), replaced = replaced,
    at = integer_text(now),
  }
  if redis.call('HGET', app_key, 'inUse') ~= '1' then
    redis.call('HSET', app_key, 'inUse', '1')
    redis.call('PERSIST', app_key)
    result.index = { gen = bump_generation(now), state = 1, org = args.org }
  end
  return result
end
