-- rtConnPatch: writes fields of a connection record (client-reported changes, last stats).
-- KEYS: the application's base key, the journal. args: u, d, cl, ch, cn, set, del; unmute, seq: see
-- the store section of the README (an unmute a level may disable answers `check` instead).
local function patch_connection(args)
  local user_id, device_id, client_id, channel_id, connection_id = args.u, args.d, args.cl, args.ch, args.cn
  local device_member = user_id .. '/' .. device_id
  local client_member = device_member .. '/' .. client_id
  local conn_key = connection_key(channel_id, client_member, connection_id)
  if redis.call('EXISTS', conn_key) == 0 then return failure('connection') end
  if args.unmute then
    local levels = settings_levels(channel_id, user_id, device_member, client_member, connection_id)
    local seq = redis.call('HGET', app_key, 'seq') or '0'
    local check = false
    if args.seq then
      check = args.seq ~= seq
    else
      for _, kind in ipairs(args.unmute) do
        for _, level in pairs(levels) do
          if level[kind .. 'UnmuteDisabled'] == '1' then check = true end
        end
      end
    end
    if check then
      return {
        check = seq, conn = hash_get_all(conn_key), client = read_client(client_key(client_member)),
        levels = levels, org = organization_id(),
      }
    end
  end
  for field, value in pairs(args.set) do redis.call('HSET', conn_key, field, value) end
  for _, field in ipairs(args.del) do redis.call('HDEL', conn_key, field) end
  return {
    conn = hash_get_all(conn_key), client = read_client(client_key(client_member)), org = organization_id(),
    levels = settings_levels(channel_id, user_id, device_member, client_member, connection_id),
  }
end
