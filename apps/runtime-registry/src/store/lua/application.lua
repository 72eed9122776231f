-- Helpers of the application scripts, after the prelude. KEYS[1] is the application's base key, the
-- last of KEYS the operation journal; ARGV[1] the arguments (JSON), ARGV[2] and ARGV[3] optionally
-- a journal entry's id and context (see `journal`).
local app_key = KEYS[1]
local journal_key = KEYS[#KEYS]
local journal_entry_id = ARGV[2]
local journal_context = ARGV[3]

-- Read once per script run (rtSequence runs a client's register, join, open and state changes in
-- one): client hashes by key, the owner, whether a settings write ever happened. A script that
-- writes one of them forgets what it read.
local client_hashes = {}
local owner_id = false
local settings_ever_written = nil

-- A client hash without `claims` (the token's channel claims, kept for diagnostics: the longest
-- field by far, and no caller reads it). Callers do not change the table.
local function read_client(key)
  local cached = client_hashes[key]
  if cached then return cached end
  local flat = redis.call('HGETALL', key)
  local hash = {}
  for i = 1, #flat, 2 do
    if flat[i] ~= 'claims' then hash[flat[i]] = flat[i + 1] end
  end
  client_hashes[key] = hash
  return hash
end
local function forget_client(key) client_hashes[key] = nil end

-- Decrements a count field, removing it at zero; true when it reached zero.
local function decrement_count(key, field)
  if redis.call('HINCRBY', key, field, -1) <= 0 then
    redis.call('HDEL', key, field)
    return true
  end
  return false
end
local function split_member(member)
  local parts = {}
  for part in string.gmatch(member, '[^/]+') do parts[#parts + 1] = part end
  return parts
end
local function starts_with(text, prefix) return string.sub(text, 1, #prefix) == prefix end

local function client_key(client_member) return app_key .. ':c:' .. client_member end
local function channel_key(channel_id) return app_key .. ':ch:' .. channel_id end
local function connection_key(channel_id, client_member, connection_id)
  return app_key .. ':cn:' .. channel_id .. '/' .. client_member .. '/' .. connection_id
end

-- Bumps the in-use generation: time based (ms) and strictly increasing, so the applications index
-- can order updates from different replicas and the bookkeeping may expire while unused.
local function bump_generation(now)
  local generation = tonumber(redis.call('HGET', app_key, 'gen') or '0')
  local next_generation = math.max(generation + 1, now)
  redis.call('HSET', app_key, 'gen', integer_text(next_generation))
  return integer_text(next_generation)
end

-- The five settings levels that reach one connection (connection_id false: no connection level).
-- Only a settings write (rtLevelUpdate, which bumps the application's seq first) fills the user,
-- device, client and connection levels: in an application without one they are empty, unread.
local function settings_levels(channel_id, user_id, device_member, client_member, connection_id)
  local channel = channel_key(channel_id)
  if settings_ever_written == nil then settings_ever_written = redis.call('HEXISTS', app_key, 'seq') == 1 end
  if not settings_ever_written then return { ch = hash_get_all(channel .. ':cfg'), u = {}, d = {}, c = {}, n = {} } end
  local connection_level = {}
  if connection_id then
    connection_level = hash_get_all(connection_key(channel_id, client_member, connection_id) .. ':cfg')
  end
  return {
    ch = hash_get_all(channel .. ':cfg'),
    u = hash_get_all(channel .. ':ucfg:' .. user_id),
    d = hash_get_all(channel .. ':dcfg:' .. device_member),
    c = hash_get_all(channel .. ':ccfg:' .. client_member),
    n = connection_level,
  }
end

-- Removes one connection from the live model; returns what it was (false: already gone). Its count
-- on its media server (media: { servers_key, app_id }) moves to the final state's phase here: once
-- per connection, since only the run that removes it gets here.
local function close_connection(channel_id, user_id, device_id, client_id, connection_id, final_state, now, media)
  local device_member = user_id .. '/' .. device_id
  local client_member = device_member .. '/' .. client_id
  local key = connection_key(channel_id, client_member, connection_id)
  if redis.call('EXISTS', key) == 0 then return false end
  local connection = hash_get_all(key)
  local levels = settings_levels(channel_id, user_id, device_member, client_member, connection_id)
  local channel = channel_key(channel_id)
  redis.call('SREM', channel .. ':conns', client_member .. '/' .. connection_id)
  redis.call('SREM', app_key .. ':conns', channel_id .. '/' .. client_member .. '/' .. connection_id)
  redis.call('SREM', channel .. ':cconn:' .. client_member, connection_id)
  decrement_count(channel .. ':uconns', user_id)
  decrement_count(channel .. ':dconns', device_member)
  if redis.call('HGET', channel .. ':cnids', connection_id) == client_member then
    redis.call('HDEL', channel .. ':cnids', connection_id)
  end
  redis.call('DEL', key, key .. ':cfg')
  if connection.mediaServerId then
    local duration_ms = math.max(0, now - (tonumber(connection.openedAt or '0') or 0))
    local from = media_phase(connection.state or 'new')
    move_media_count(media.servers_key, connection.mediaServerId, media.app_id, from, media_phase(final_state), duration_ms)
  end
  return {
    ch = channel_id, u = user_id, d = device_id, cl = client_id, cn = connection_id,
    conn = connection, levels = levels, final = final_state, at = integer_text(now),
  }
end

-- Removes a client from a channel, closing its connections there (media: see close_connection);
-- returns what happened (false: not a member, nothing changes).
local function leave_channel(channel_id, user_id, device_id, client_id, now, media)
  local device_member = user_id .. '/' .. device_id
  local client_member = device_member .. '/' .. client_id
  local channel = channel_key(channel_id)
  local claim = redis.call('HGET', channel .. ':clients', client_member)
  if not claim then return false end
  local closed = {}
  for _, connection_id in ipairs(redis.call('SMEMBERS', channel .. ':cconn:' .. client_member)) do
    local removed = close_connection(channel_id, user_id, device_id, client_id, connection_id, 'closed', now, media)
    if removed then closed[#closed + 1] = removed end
  end
  redis.call('DEL', channel .. ':cconn:' .. client_member, channel .. ':ccfg:' .. client_member)
  redis.call('HDEL', channel .. ':clients', client_member)
  redis.call('SREM', client_key(client_member) .. ':channels', channel_id)
  if decrement_count(channel .. ':devices', device_member) then
    redis.call('DEL', channel .. ':dcfg:' .. device_member)
    decrement_count(channel .. ':udev', user_id)
  end
  if decrement_count(channel .. ':users', user_id) then
    redis.call('DEL', channel .. ':ucfg:' .. user_id)
  end
  decrement_count(app_key .. ':u:' .. user_id .. ':channels', channel_id)
  decrement_count(app_key .. ':d:' .. device_member .. ':channels', channel_id)
  local deactivated = false
  if decrement_count(app_key .. ':channels', channel_id) then
    deactivated = true
    redis.call('DEL', channel, channel .. ':cfg', channel .. ':clients', channel .. ':users', channel .. ':devices',
      channel .. ':udev', channel .. ':conns', channel .. ':uconns', channel .. ':dconns', channel .. ':cnids')
  end
  return {
    ch = channel_id, u = user_id, d = device_id, cl = client_id,
    claim = claim, closed = closed, deactivated = deactivated, at = integer_text(now),
  }
end

local function failure(what, detail) return { fail = what, detail = detail } end
local function organization_id()
  if not owner_id then owner_id = redis.call('HGET', app_key, 'organizationId') or '' end
  return owner_id
end

-- Records `<Redis clock, µs>\n<context>\n<answer>` under the journal entry id, in the same atomic
-- run as the change (see events/journal.ts); a run without an entry id records nothing.
local function journal(answer)
  if not journal_entry_id then return end
  local time = redis.call('TIME')
  local stamp = time[1] .. string.format('%06d', tonumber(time[2]))
  redis.call('HSET', journal_key, journal_entry_id, stamp .. '\n' .. journal_context .. '\n' .. answer)
end

-- Runs one application script on its own: its answer as JSON, journaled when it changed something.
local function run_alone(script, second_key)
  local result = script(cjson.decode(ARGV[1]), second_key)
  local answer = cjson.encode(result)
  if not result.fail and not result.same then journal(answer) end
  return answer
end
