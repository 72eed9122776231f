-- rtLevelUpdate: writes settings at one level (stamped with the next seq); answers the level before
-- the write and every connection below it with its five levels now. KEYS: the application's base
-- key, the journal. args: ch, level, u, d, cl, cn, set, lists, claim.
local function update_level(args)
  local channel_id, level = args.ch, args.level
  local channel = channel_key(channel_id)
  local device_member, client_member
  if args.u and args.d then device_member = args.u .. '/' .. args.d end
  if device_member and args.cl then client_member = device_member .. '/' .. args.cl end
  local settings_key
  if level == 'channel' then
    if redis.call('HEXISTS', app_key .. ':channels', channel_id) == 0 then return failure('channel') end
    settings_key = channel .. ':cfg'
  elseif level == 'user' then
    if redis.call('HEXISTS', channel .. ':users', args.u) == 0 then return failure('user') end
    settings_key = channel .. ':ucfg:' .. args.u
  elseif level == 'device' then
    if redis.call('HEXISTS', channel .. ':devices', device_member) == 0 then return failure('device') end
    settings_key = channel .. ':dcfg:' .. device_member
  elseif level == 'client' then
    if redis.call('HEXISTS', channel .. ':clients', client_member) == 0 then return failure('client') end
    settings_key = channel .. ':ccfg:' .. client_member
  else
    local conn_key = connection_key(channel_id, client_member, args.cn)
    if redis.call('EXISTS', conn_key) == 0 then return failure('connection') end
    settings_key = conn_key .. ':cfg'
  end
  local old = hash_get_all(settings_key)
  local now = now_ms()
  local seq = redis.call('HINCRBY', app_key, 'seq', 1)
  settings_ever_written = true
  for field, value in pairs(args.set) do redis.call('HSET', settings_key, field, value, field .. '@', seq) end
  for field, value in pairs(args.lists) do redis.call('HSET', settings_key, field, value) end
  local claim_changed = false
  if given(args.claim) then
    redis.call('HSET', channel .. ':clients', client_member, args.claim)
    claim_changed = true
  end
  local members = {}
  if level == 'client' then
    for _, connection_id in ipairs(redis.call('SMEMBERS', channel .. ':cconn:' .. client_member)) do
      members[#members + 1] = client_member .. '/' .. connection_id
    end
  elseif level == 'connection' then
    members[1] = client_member .. '/' .. args.cn
  else
    local prefix = false
    if level == 'user' then prefix = args.u .. '/' elseif level == 'device' then prefix = device_member .. '/' end
    for _, member in ipairs(redis.call('SMEMBERS', channel .. ':conns')) do
      if not prefix or starts_with(member, prefix) then members[#members + 1] = member end
    end
  end
  local targets = {}
  for _, member in ipairs(members) do
    local ids = split_member(member)
    local target_device = ids[1] .. '/' .. ids[2]
    local target_client = target_device .. '/' .. ids[3]
    targets[#targets + 1] = {
      u = ids[1], d = ids[2], cl = ids[3], cn = ids[4],
      conn = hash_get_all(connection_key(channel_id, target_client, ids[4])),
      client = read_client(client_key(target_client)),
      levels = settings_levels(channel_id, ids[1], target_device, target_client, ids[4]),
    }
  end
  local client = false
  if client_member then client = read_client(client_key(client_member)) end
  return {
    old = old, seq = seq, targets = targets, claim = claim_changed, client = client, org = organization_id(),
    at = integer_text(now),
  }
end
