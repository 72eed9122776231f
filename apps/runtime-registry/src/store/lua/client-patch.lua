-- rtClientPatch: changes a client's aliases, tag or roles (admin client patch, or the client itself).
-- KEYS: the application's base key, the journal. args: u, d, cl, set, del.
local function patch_client(args)
  local user_id, device_id, client_id = args.u, args.d, args.cl
  local device_member = user_id .. '/' .. device_id
  local key = client_key(device_member .. '/' .. client_id)
  if redis.call('EXISTS', key) == 0 then return failure('client') end
  for field, value in pairs(args.set) do redis.call('HSET', key, field, value) end
  for _, field in ipairs(args.del) do redis.call('HDEL', key, field) end
  forget_client(key)
  if given(args.set.userAlias) then redis.call('HSET', app_key .. ':u:' .. user_id, 'alias', args.set.userAlias) end
  if given(args.set.deviceAlias) then
    redis.call('HSET', app_key .. ':d:' .. device_member, 'alias', args.set.deviceAlias)
  end
  return { client = read_client(key), channels = redis.call('SMEMBERS', key .. ':channels'), org = organization_id() }
end
