-- In front of every script of the registry (see scripts.ts): the Redis clock, small helpers,
-- and the media server bookkeeping that the servers scripts and the application scripts share.
local NULL = cjson.null
local clock_ms = false

-- The Redis clock (ms), read once per script run: the changes of one run happen at one time.
local function now_ms()
  if not clock_ms then
    local time = redis.call('TIME')
    clock_ms = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
  end
  return clock_ms
end
local function integer_text(number) return string.format('%.0f', number) end
local function given(value) return value ~= nil and value ~= NULL end
local function hash_get_all(key)
  local flat = redis.call('HGETALL', key)
  local hash = {}
  for i = 1, #flat, 2 do hash[flat[i]] = flat[i + 1] end
  return hash
end

-- The least-loaded media server that is enabled, has heartbeated within the timeout and is below
-- its capacity (false when none).
local function pick_media_server(servers_key, timeout_ms, now)
  local cutoff = now - timeout_ms
  local ranked = redis.call('ZRANGE', servers_key .. ':mediaserver:load', 0, -1, 'WITHSCORES')
  for i = 1, #ranked, 2 do
    local server_id, load = ranked[i], tonumber(ranked[i + 1])
    local seen = tonumber(redis.call('ZSCORE', servers_key .. ':mediaserver:seen', server_id) or '0')
    if seen >= cutoff and redis.call('SISMEMBER', servers_key .. ':mediaserver:disabled', server_id) == 0 then
      local info = redis.call('HGET', servers_key .. ':mediaserver', server_id)
      local ok, decoded = false, nil
      if info then ok, decoded = pcall(cjson.decode, info) end
      if ok and type(decoded) == 'table' and decoded.stopping ~= true then
        local capacity = decoded.capacity
        if type(capacity) ~= 'number' or load < capacity then return server_id end
      end
    end
  end
  return false
end

-- Whether a channel keeps its media server: it heartbeated within the timeout and does not stop
-- (disabled or at capacity, it still takes the channel's further connections).
local function media_server_keeps(servers_key, server_id, timeout_ms, now)
  local seen = tonumber(redis.call('ZSCORE', servers_key .. ':mediaserver:seen', server_id) or '0')
  if seen < now - timeout_ms then return false end
  local info = redis.call('HGET', servers_key .. ':mediaserver', server_id)
  local ok, decoded = false, nil
  if info then ok, decoded = pcall(cjson.decode, info) end
  return ok and type(decoded) == 'table' and decoded.stopping ~= true
end

-- The type a media server heartbeats with (`janus`: an agent commands it), false when none.
local function media_server_type(servers_key, server_id)
  local info = redis.call('HGET', servers_key .. ':mediaserver', server_id)
  local ok, decoded = false, nil
  if info then ok, decoded = pcall(cjson.decode, info) end
  if ok and type(decoded) == 'table' and type(decoded.type) == 'string' then return decoded.type end
  return false
end

-- Counts a new connection of application app_id as pending on a media server.
local function count_pending_on(servers_key, server_id, app_id)
  redis.call('ZINCRBY', servers_key .. ':mediaserver:load', 1, server_id)
  redis.call('HINCRBY', servers_key .. ':mediaserver:stats:' .. server_id, 'pending', 1)
  redis.call('HINCRBY', servers_key .. ':mediaserver:apps:' .. server_id, app_id, 1)
end

-- The phase a connection state counts in on its media server.
local function media_phase(state)
  if state == 'new' or state == 'initializing' or state == 'connecting' then return 'pending' end
  if state == 'connected' or state == 'failing' or state == 'closing' then return 'active' end
  if state == 'failed' then return 'failed' end
  return 'closed'
end

-- Moves one connection's count on a media server from phase (pending/active/none) to phase
-- (pending/active/closed/failed/released). Terminal phases free the load and add to the totals.
local function move_media_count(servers_key, server_id, app_id, from, to, duration_ms)
  if redis.call('HEXISTS', servers_key .. ':mediaserver', server_id) == 0 then return 0 end
  local stats = servers_key .. ':mediaserver:stats:' .. server_id
  if from == to then return 0 end
  if from == 'pending' or from == 'active' then
    if redis.call('HINCRBY', stats, from, -1) < 0 then redis.call('HSET', stats, from, 0) end
  end
  if to == 'pending' or to == 'active' then
    redis.call('HINCRBY', stats, to, 1)
    return 1
  end
  local load = servers_key .. ':mediaserver:load'
  if tonumber(redis.call('ZSCORE', load, server_id) or '0') > 0 then redis.call('ZINCRBY', load, -1, server_id) end
  local apps = servers_key .. ':mediaserver:apps:' .. server_id
  if redis.call('HINCRBY', apps, app_id, -1) <= 0 then redis.call('HDEL', apps, app_id) end
  if to == 'closed' or to == 'failed' then
    redis.call('HINCRBY', stats, to, 1)
    redis.call('HINCRBY', stats, 'durationMs', duration_ms)
    if to == 'failed' then redis.call('HINCRBY', stats, 'failedDurationMs', duration_ms) end
  end
  return 1
end
