/**
 * The Lua scripts of the live model. Every change of one application is ONE script run (atomic,
 * no read-modify-write across round trips), touching only keys that carry the application's hash
 * tag: KEYS[1] is the application's base key (`P rt:app:{a}`), every other key is derived from it.
 * Exceptions, for bookkeeping that always goes with a change: a script may get keys of the servers
 * slot as further KEYS (declared, never derived), e.g. register's gateway client set. One Redis
 * (not a cluster) serves the registry, so a script may touch both slots.
 * Arguments come as one JSON object in ARGV[1] (ids already escaped, see keys.ts); results go back
 * as JSON. Timestamps come from the Redis clock (`TIME`), so every replica agrees on them; a script
 * that changes the live model answers the time of its change (`at`, read once per run), and every
 * event of that change carries it (the moment a `batch: true` webhook groups by).
 *
 * The scripts return raw facts (hashes as read, transitions that happened); the TypeScript side
 * derives effective settings, events and pushes from them.
 *
 * Each app script body is a Lua function of its arguments (P) and second key (K2), so `rtSequence`
 * can run several of them of one application in one script run (a client's register, join, open
 * and state changes, reported together by the edge): each exactly as on its own. What a run reads
 * more than once (the Redis clock, a client hash, the owner, whether settings were ever written) is
 * read once per run; a script that writes it forgets what it read.
 */

/**
 * Placement and media server statistics, shared by the servers scripts and the app scripts that
 * do this bookkeeping in the same script as the change it goes with: an open places, a state change
 * moves the count, and every close of a connection (state change, leave, kick, unregister) frees
 * it in the script that removes the connection (close_conn). `S` is the servers base key.
 */
const MEDIA_FUNCTIONS = `
-- The least-loaded media server that is enabled, has heartbeated within the timeout and is below
-- its capacity (false when none).
local function ms_pick(S, timeoutMs, t)
  local cutoff = t - timeoutMs
  local ranked = redis.call('ZRANGE', S .. ':mediaserver:load', 0, -1, 'WITHSCORES')
  for i = 1, #ranked, 2 do
    local id, load = ranked[i], tonumber(ranked[i + 1])
    local seen = tonumber(redis.call('ZSCORE', S .. ':mediaserver:seen', id) or '0')
    if seen >= cutoff and redis.call('SISMEMBER', S .. ':mediaserver:disabled', id) == 0 then
      local info = redis.call('HGET', S .. ':mediaserver', id)
      local ok, decoded = false, nil
      if info then ok, decoded = pcall(cjson.decode, info) end
      if ok and type(decoded) == 'table' and decoded.stopping ~= true then
        local capacity = decoded.capacity
        if type(capacity) ~= 'number' or load < capacity then return id end
      end
    end
  end
  return false
end
-- Counts a new connection of application app as pending on media server id.
local function ms_place(S, id, app)
  redis.call('ZINCRBY', S .. ':mediaserver:load', 1, id)
  redis.call('HINCRBY', S .. ':mediaserver:stats:' .. id, 'pending', 1)
  redis.call('HINCRBY', S .. ':mediaserver:apps:' .. id, app, 1)
end
-- The phase a connection state counts in on its media server.
local function ms_phase(state)
  if state == 'new' or state == 'initializing' or state == 'connecting' then return 'pending' end
  if state == 'connected' or state == 'failing' or state == 'closing' then return 'active' end
  if state == 'failed' then return 'failed' end
  return 'closed'
end
-- Moves one connection's count on a media server: from phase (pending/active/none) to phase
-- (pending/active/closed/failed/released). Terminal phases free the load and add to the totals.
local function ms_transition(S, id, app, from, to, durationMs)
  if redis.call('HEXISTS', S .. ':mediaserver', id) == 0 then return 0 end
  local stats = S .. ':mediaserver:stats:' .. id
  if from == to then return 0 end
  if from == 'pending' or from == 'active' then
    if redis.call('HINCRBY', stats, from, -1) < 0 then redis.call('HSET', stats, from, 0) end
  end
  if to == 'pending' or to == 'active' then
    redis.call('HINCRBY', stats, to, 1)
    return 1
  end
  if tonumber(redis.call('ZSCORE', S .. ':mediaserver:load', id) or '0') > 0 then redis.call('ZINCRBY', S .. ':mediaserver:load', -1, id) end
  local apps = S .. ':mediaserver:apps:' .. id
  if redis.call('HINCRBY', apps, app, -1) <= 0 then redis.call('HDEL', apps, app) end
  if to == 'closed' or to == 'failed' then
    redis.call('HINCRBY', stats, to, 1)
    redis.call('HINCRBY', stats, 'durationMs', durationMs)
    if to == 'failed' then redis.call('HINCRBY', stats, 'failedDurationMs', durationMs) end
  end
  return 1
end
`;

/** Helpers shared by the application scripts. */
const APP_PRELUDE = `
local B = KEYS[1]
local P = cjson.decode(ARGV[1])
local NULL = cjson.null
-- Read once per script run (rtSequence runs a client's register, join, open and state changes in
-- one): the clock, client hashes (by key), the owner, whether a settings write ever happened. A
-- script that writes one of them forgets what it read (forget_client, ORG = false, SEQ = nil).
local NOW = false
local CLIENTS = {}
local ORG = false
local SEQ = nil

-- The Redis clock (ms), read once per script run: the changes of one run happen at one time.
local function nowms()
  if not NOW then
    local t = redis.call('TIME')
    NOW = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  end
  return NOW
end
local function str(n) return string.format('%.0f', n) end
local function hgetall(key)
  local flat = redis.call('HGETALL', key)
  local out = {}
  for i = 1, #flat, 2 do out[flat[i]] = flat[i + 1] end
  return out
end
-- A client hash as the TypeScript side reads it: every field but \`claims\` (the token's channel
-- claims, kept for diagnostics; with many claims it is the longest field by far, and no caller reads it).
-- Read once per script run (callers do not change the table).
local function clienth(key)
  local cached = CLIENTS[key]
  if cached then return cached end
  local flat = redis.call('HGETALL', key)
  local out = {}
  for i = 1, #flat, 2 do
    if flat[i] ~= 'claims' then out[flat[i]] = flat[i + 1] end
  end
  CLIENTS[key] = out
  return out
end
local function forget_client(key) CLIENTS[key] = nil end
local function given(v) return v ~= nil and v ~= NULL end
local function decr(key, field)
  if redis.call('HINCRBY', key, field, -1) <= 0 then
    redis.call('HDEL', key, field)
    return true
  end
  return false
end
local function split(s)
  local out = {}
  for part in string.gmatch(s, '[^/]+') do out[#out + 1] = part end
  return out
end
local function startswith(s, prefix) return string.sub(s, 1, #prefix) == prefix end

local function kcl(udc) return B .. ':c:' .. udc end
local function kch(ch) return B .. ':ch:' .. ch end
local function kconn(ch, udc, cn) return B .. ':cn:' .. ch .. '/' .. udc .. '/' .. cn end

-- Bumps the in-use generation: time based (ms) and strictly increasing, so the applications index
-- can order updates from different replicas and the bookkeeping may expire while unused.
local function bump_gen(t)
  local g = tonumber(redis.call('HGET', B, 'gen') or '0')
  local n = math.max(g + 1, t)
  redis.call('HSET', B, 'gen', str(n))
  return str(n)
end

-- The five settings levels that reach one connection (cn may be false: no connection level).
-- Only a settings write (LEVEL_UPDATE, which bumps the application's seq first) fills the user,
-- device, client and connection levels: in an application without one they are empty, unread.
local function levels(ch, u, ud, udc, cn)
  local c = kch(ch)
  if SEQ == nil then SEQ = redis.call('HEXISTS', B, 'seq') == 1 end
  if not SEQ then return { ch = hgetall(c .. ':cfg'), u = {}, d = {}, c = {}, n = {} } end
  local n = {}
  if cn then n = hgetall(kconn(ch, udc, cn) .. ':cfg') end
  return { ch = hgetall(c .. ':cfg'), u = hgetall(c .. ':ucfg:' .. u), d = hgetall(c .. ':dcfg:' .. ud), c = hgetall(c .. ':ccfg:' .. udc), n = n }
end

${MEDIA_FUNCTIONS}
-- Removes one connection from the live model; returns what it was (false: already gone, nothing
-- changes). Its count on its media server (M: { S = the servers base key, app = the application
-- id }) moves from its last live phase to the final state's in the same step: once per connection,
-- since only the run that removes it gets here.
local function close_conn(ch, u, d, cl, cn, final, t, M)
  local ud = u .. '/' .. d
  local udc = ud .. '/' .. cl
  local key = kconn(ch, udc, cn)
  if redis.call('EXISTS', key) == 0 then return false end
  local conn = hgetall(key)
  local lv = levels(ch, u, ud, udc, cn)
  local c = kch(ch)
  redis.call('SREM', c .. ':conns', udc .. '/' .. cn)
  redis.call('SREM', B .. ':conns', ch .. '/' .. udc .. '/' .. cn)
  redis.call('SREM', c .. ':cconn:' .. udc, cn)
  decr(c .. ':uconns', u)
  decr(c .. ':dconns', ud)
  redis.call('DEL', key, key .. ':cfg')
  if conn.mediaServerId then
    ms_transition(M.S, conn.mediaServerId, M.app, ms_phase(conn.state or 'new'), ms_phase(final), math.max(0, t - (tonumber(conn.openedAt or '0') or 0)))
  end
  return { ch = ch, u = u, d = d, cl = cl, cn = cn, conn = conn, levels = lv, final = final, at = str(t) }
end

-- Removes a client from a channel, closing its connections there (M: see close_conn); returns
-- what happened (false: not a member, nothing changes).
local function leave(ch, u, d, cl, t, M)
  local ud = u .. '/' .. d
  local udc = ud .. '/' .. cl
  local c = kch(ch)
  local claim = redis.call('HGET', c .. ':clients', udc)
  if not claim then return false end
  local closed = {}
  for _, cn in ipairs(redis.call('SMEMBERS', c .. ':cconn:' .. udc)) do
    local r = close_conn(ch, u, d, cl, cn, 'closed', t, M)
    if r then closed[#closed + 1] = r end
  end
  redis.call('DEL', c .. ':cconn:' .. udc, c .. ':ccfg:' .. udc)
  redis.call('HDEL', c .. ':clients', udc)
  redis.call('SREM', kcl(udc) .. ':channels', ch)
  if decr(c .. ':devices', ud) then
    redis.call('DEL', c .. ':dcfg:' .. ud)
    decr(c .. ':udev', u)
  end
  if decr(c .. ':users', u) then
    redis.call('DEL', c .. ':ucfg:' .. u)
  end
  decr(B .. ':u:' .. u .. ':channels', ch)
  decr(B .. ':d:' .. ud .. ':channels', ch)
  local deactivated = false
  if decr(B .. ':channels', ch) then
    deactivated = true
    redis.call('DEL', c, c .. ':cfg', c .. ':clients', c .. ':users', c .. ':devices', c .. ':udev', c .. ':conns', c .. ':uconns', c .. ':dconns')
  end
  return { ch = ch, u = u, d = d, cl = cl, claim = claim, closed = closed, deactivated = deactivated, at = str(t) }
end

local function fail(what, detail) return { fail = what, detail = detail } end
local function org()
  if not ORG then ORG = redis.call('HGET', B, 'organizationId') or '' end
  return ORG
end
`;

/**
 * Registers (or re-registers) a client, and adds it to the client set of its gateway (K2) in
 * the same round trip. A registration in another session (P.sessionId: the client's previous
 * gateway replica is gone, or it registered again through another one) replaces the previous
 * registration: that one's channels and connections end with it, as an unregister ends them (their
 * media server counts too: the servers base key is K2's own prefix, the same slot), and the new
 * one starts without any, as the client's new session at the edge does. A repeated registration of
 * the same session (a retry) changes nothing.
 */
const REGISTER = `
local u, d, cl = P.u, P.d, P.cl
local ud = u .. '/' .. d
local udc = ud .. '/' .. cl
local key = kcl(udc)
local t = nowms()
local existed = redis.call('EXISTS', key) == 1
local prevGw = false
local replaced = false
if existed then
  prevGw = redis.call('HGET', key, 'gatewayId') or false
  local prevSession = redis.call('HGET', key, 'sessionId')
  if given(P.sessionId) and prevSession and prevSession ~= P.sessionId then
    replaced = { client = clienth(key), lefts = {} }
    local M = { S = string.match(K2, '^(.*):gateway:clients:'), app = P.app }
    for _, ch in ipairs(redis.call('SMEMBERS', key .. ':channels')) do
      local r = leave(ch, u, d, cl, t, M)
      if r then replaced.lefts[#replaced.lefts + 1] = r end
    end
  end
end
-- One HSET (and one HDEL of the optional fields not given) for the whole client hash.
local set = { 'gatewayId', P.gw, 'roles', P.roles, 'protocol', P.protocol, 'claims', P.claims }
local del = {}
for _, f in ipairs({ 'userAlias', 'deviceAlias', 'tag', 'sessionId' }) do
  if given(P[f]) then
    set[#set + 1] = f
    set[#set + 1] = P[f]
  else
    del[#del + 1] = f
  end
end
if not existed or replaced then
  set[#set + 1] = 'registeredAt'
  set[#set + 1] = str(t)
end
redis.call('HSET', key, unpack(set))
if existed and #del > 0 then redis.call('HDEL', key, unpack(del)) end
if given(P.userAlias) then redis.call('HSET', B .. ':u:' .. u, 'alias', P.userAlias) end
if given(P.deviceAlias) then redis.call('HSET', B .. ':d:' .. ud, 'alias', P.deviceAlias) end
if not existed then
  redis.call('SADD', B .. ':clients', udc)
  redis.call('HINCRBY', B .. ':users', u, 1)
  redis.call('HINCRBY', B .. ':devices', ud, 1)
  redis.call('HINCRBY', B .. ':u:' .. u .. ':devices', d, 1)
  redis.call('SADD', B .. ':d:' .. ud .. ':clients', cl)
end
redis.call('HSET', B, 'organizationId', P.org)
ORG = false
forget_client(key)
-- The reporting gateway's client set (K2, servers slot): it holds the client now. Leaving the
-- set of a previous gateway (rare: registered again elsewhere) is the caller's.
redis.call('SADD', K2, P.gwMember)
local result = { new = not existed, prevGatewayId = prevGw, client = clienth(key), replaced = replaced, at = str(t) }
if redis.call('HGET', B, 'inUse') ~= '1' then
  redis.call('HSET', B, 'inUse', '1')
  redis.call('PERSIST', B)
  result.index = { gen = bump_gen(t), state = 1, org = P.org }
end
return (result)
`;

/**
 * Unregisters a client: leaves every channel (closing its connections, and freeing their counts on
 * their media servers, K2: the servers base key) and forgets it.
 */
const UNREGISTER = `
local u, d, cl = P.u, P.d, P.cl
local ud = u .. '/' .. d
local udc = ud .. '/' .. cl
local key = kcl(udc)
if redis.call('EXISTS', key) == 0 then return fail('client') end
local client = clienth(key)
-- Only the registration the caller ends: a client that registered again meanwhile (through another
-- gateway, or in another session of the same one) stays.
if given(P.gw) and client.gatewayId ~= P.gw then return fail('moved') end
if given(P.session) and client.sessionId ~= P.session then return fail('moved') end
local t = nowms()
local M = { S = K2, app = P.app }
local lefts = {}
for _, ch in ipairs(redis.call('SMEMBERS', key .. ':channels')) do
  local r = leave(ch, u, d, cl, t, M)
  if r then lefts[#lefts + 1] = r end
end
redis.call('SREM', B .. ':clients', udc)
redis.call('SREM', B .. ':d:' .. ud .. ':clients', cl)
decr(B .. ':u:' .. u .. ':devices', d)
if decr(B .. ':devices', ud) then
  redis.call('DEL', B .. ':d:' .. ud, B .. ':d:' .. ud .. ':clients', B .. ':d:' .. ud .. ':channels')
end
if decr(B .. ':users', u) then
  redis.call('DEL', B .. ':u:' .. u, B .. ':u:' .. u .. ':devices', B .. ':u:' .. u .. ':channels')
end
redis.call('DEL', key, key .. ':channels')
forget_client(key)
local result = { client = client, lefts = lefts, org = org(), at = str(t) }
if redis.call('SCARD', B .. ':clients') == 0 then
  redis.call('HSET', B, 'inUse', '0')
  result.index = { gen = bump_gen(t), state = 0, org = redis.call('HGET', B, 'organizationId') or '' }
  redis.call('PEXPIRE', B, P.idleTtlMs)
end
return (result)
`;

/**
 * A registered client joins a channel with its claim (a repeated join replaces the claim). `P.rec`
 * ('1'/'0', optional): the channel config's recordingEnabled, stored when this join activates it.
 */
const JOIN = `
local u, d, cl, ch = P.u, P.d, P.cl, P.ch
local ud = u .. '/' .. d
local udc = ud .. '/' .. cl
local key = kcl(udc)
if redis.call('EXISTS', key) == 0 then return fail('client') end
local c = kch(ch)
local t = nowms()
local already = redis.call('HEXISTS', c .. ':clients', udc) == 1
redis.call('HSET', c .. ':clients', udc, P.claim)
local activated = false
if not already then
  redis.call('SADD', key .. ':channels', ch)
  if redis.call('HINCRBY', B .. ':channels', ch, 1) == 1 then
    activated = true
    redis.call('HSET', c, 'activatedAt', str(t))
    -- The channel config's recordingEnabled, resolved for this activation: the channel's default
    -- until it deactivates (settings.ts, CONFIG_RECORDING).
    if given(P.rec) then redis.call('HSET', c .. ':cfg', 'configRecording', P.rec) end
  end
  redis.call('HINCRBY', c .. ':users', u, 1)
  if redis.call('HINCRBY', c .. ':devices', ud, 1) == 1 then redis.call('HINCRBY', c .. ':udev', u, 1) end
  redis.call('HINCRBY', B .. ':u:' .. u .. ':channels', ch, 1)
  redis.call('HINCRBY', B .. ':d:' .. ud .. ':channels', ch, 1)
end
return ({
  already = already, activated = activated, client = clienth(key), org = org(), at = str(t),
  counts = { redis.call('HLEN', c .. ':users'), redis.call('HLEN', c .. ':devices'), redis.call('HLEN', c .. ':clients'), redis.call('SCARD', c .. ':conns') },
  levels = levels(ch, u, ud, udc, false),
})
`;

/**
 * Removes members of a channel: everyone (level channel), a user's or a device's clients, or one
 * client, closing their connections there (and freeing their counts on their media servers, K2:
 * the servers base key). Used by kicks and by a client leaving.
 */
const REMOVE_MEMBERS = `
local ch, level = P.ch, P.level
local c = kch(ch)
local sel
if level == 'channel' then
  if redis.call('HEXISTS', B .. ':channels', ch) == 0 then return fail('channel') end
elseif level == 'user' then
  if redis.call('HEXISTS', c .. ':users', P.u) == 0 then return fail('user') end
  sel = P.u .. '/'
elseif level == 'device' then
  if redis.call('HEXISTS', c .. ':devices', P.u .. '/' .. P.d) == 0 then return fail('device') end
  sel = P.u .. '/' .. P.d .. '/'
else
  sel = P.u .. '/' .. P.d .. '/' .. P.cl
  if redis.call('HEXISTS', c .. ':clients', sel) == 0 then return fail('client') end
  -- P.session: only while that registration of the client holds it.
  if given(P.session) and redis.call('HGET', kcl(sel), 'sessionId') ~= P.session then return fail('client') end
end
local t = nowms()
local M = { S = K2, app = P.app }
local lefts = {}
local clients = {}
for _, m in ipairs(redis.call('HKEYS', c .. ':clients')) do
  local pick = (level == 'channel') or (level == 'client' and m == sel) or (level ~= 'client' and startswith(m, sel))
  if pick then
    local p = split(m)
    clients[m] = clienth(kcl(m))
    local r = leave(ch, p[1], p[2], p[3], t, M)
    if r then lefts[#lefts + 1] = r end
  end
end
return ({ lefts = lefts, clients = clients, org = org() })
`;

/**
 * Opens a connection of a member client in a channel. `P.place`: an sfu/mcu connection, placed on
 * the least-loaded eligible media server (K2: the servers base key) in the same step; none
 * being available fails first ('unavailable'), before the client is looked at.
 */
const OPEN = `
local u, d, cl, ch, cn = P.u, P.d, P.cl, P.ch, P.cn
local ud = u .. '/' .. d
local udc = ud .. '/' .. cl
local key = kcl(udc)
local t = nowms()
local msid = false
if P.place then
  msid = ms_pick(K2, P.timeoutMs, t)
  if not msid then return fail('unavailable') end
end
if redis.call('EXISTS', key) == 0 then return fail('client') end
local c = kch(ch)
local claim = redis.call('HGET', c .. ':clients', udc)
if not claim then return fail('membership') end
if given(P.claimFlag) then
  local ok, decoded = pcall(cjson.decode, claim)
  if ok and type(decoded) == 'table' and decoded[P.claimFlag] == true then return fail('claim', P.claimFlag) end
end
local ck = kconn(ch, udc, cn)
if redis.call('EXISTS', ck) == 1 then return fail('exists') end
local fields = { 'state', 'new', 'type', P.type, 'openedAt', str(t) }
for f, v in pairs(P.fields) do
  fields[#fields + 1] = f
  fields[#fields + 1] = v
end
if msid then
  ms_place(K2, msid, P.app)
  fields[#fields + 1] = 'mediaServerId'
  fields[#fields + 1] = msid
end
redis.call('HSET', ck, unpack(fields))
-- The record is exactly these fields (it did not exist).
local conn = {}
for i = 1, #fields, 2 do conn[fields[i]] = fields[i + 1] end
redis.call('SADD', c .. ':conns', udc .. '/' .. cn)
redis.call('SADD', B .. ':conns', ch .. '/' .. udc .. '/' .. cn)
redis.call('SADD', c .. ':cconn:' .. udc, cn)
redis.call('HINCRBY', c .. ':uconns', u, 1)
redis.call('HINCRBY', c .. ':dconns', ud, 1)
return ({ conn = conn, client = clienth(key), levels = levels(ch, u, ud, udc, cn), org = org() })
`;

/**
 * Moves a connection to a new state; a terminal state removes it from the live model. The count of
 * a connection on its media server moves along in the same step (K2: the servers base key).
 */
const CONN_STATE = `
local u, d, cl, ch, cn = P.u, P.d, P.cl, P.ch, P.cn
local ud = u .. '/' .. d
local udc = ud .. '/' .. cl
local ck = kconn(ch, udc, cn)
local conn = hgetall(ck)
if next(conn) == nil then return fail('connection') end
-- P.session: only while that registration of the client holds it.
if given(P.session) and redis.call('HGET', kcl(udc), 'sessionId') ~= P.session then return fail('connection') end
local old = conn.state or false
if old == P.state then return ({ same = true }) end
local allowed = false
for _, s in ipairs(P.from) do if s == old then allowed = true end end
if not allowed then return fail('transition', old) end
local t = nowms()
if given(P.error) then redis.call('HSET', ck, 'error', P.error) end
if P.terminal then
  -- close_conn returns the record with its last live state; the final state travels beside it.
  local r = close_conn(ch, u, d, cl, cn, P.state, t, { S = K2, app = P.app })
  return ({ old = old, closed = r, client = clienth(kcl(udc)), org = org() })
end
-- The record as read, with what this change writes.
local set = { 'state', P.state }
conn.state = P.state
if given(P.error) then conn.error = P.error end
if P.state == 'connected' and not conn.connectedAt then
  conn.connectedAt = str(t)
  set[3] = 'connectedAt'
  set[4] = conn.connectedAt
end
redis.call('HSET', ck, unpack(set))
if conn.mediaServerId and old then ms_transition(K2, conn.mediaServerId, P.app, ms_phase(old), ms_phase(P.state), 0) end
return ({ old = old, conn = conn, client = clienth(kcl(udc)), levels = levels(ch, u, ud, udc, cn), org = org(), at = str(t) })
`;

/**
 * Writes fields of a connection record (client-reported changes, last stats). A client's unmute
 * (P.unmute: 'audio', 'video') is the TypeScript side's to check (effective settings) while a level
 * reaching the connection stores that kind's unmute-disabled flag set: then nothing is written and the
 * script answers \`check\` (the settings sequence, the record and levels as read); the patch comes
 * again with that sequence (P.seq) and is written only if no settings write came in between.
 */
const CONN_PATCH = `
local u, d, cl, ch, cn = P.u, P.d, P.cl, P.ch, P.cn
local ud = u .. '/' .. d
local udc = ud .. '/' .. cl
local ck = kconn(ch, udc, cn)
if redis.call('EXISTS', ck) == 0 then return fail('connection') end
if P.unmute then
  local L = levels(ch, u, ud, udc, cn)
  local seq = redis.call('HGET', B, 'seq') or '0'
  local check = false
  if P.seq then
    check = P.seq ~= seq
  else
    for _, kind in ipairs(P.unmute) do
      for _, level in pairs(L) do
        if level[kind .. 'UnmuteDisabled'] == '1' then check = true end
      end
    end
  end
  if check then return ({ check = seq, conn = hgetall(ck), client = clienth(kcl(udc)), levels = L, org = org() }) end
end
for f, v in pairs(P.set) do redis.call('HSET', ck, f, v) end
for _, f in ipairs(P.del) do redis.call('HDEL', ck, f) end
return ({ conn = hgetall(ck), client = clienth(kcl(udc)), levels = levels(ch, u, ud, udc, cn), org = org() })
`;

/** Changes a client's aliases, tag or roles (admin client patch, or the client itself). */
const CLIENT_PATCH = `
local u, d, cl = P.u, P.d, P.cl
local ud = u .. '/' .. d
local key = kcl(ud .. '/' .. cl)
if redis.call('EXISTS', key) == 0 then return fail('client') end
for f, v in pairs(P.set) do redis.call('HSET', key, f, v) end
for _, f in ipairs(P.del) do redis.call('HDEL', key, f) end
forget_client(key)
if given(P.set.userAlias) then redis.call('HSET', B .. ':u:' .. u, 'alias', P.set.userAlias) end
if given(P.set.deviceAlias) then redis.call('HSET', B .. ':d:' .. ud, 'alias', P.set.deviceAlias) end
return ({ client = clienth(key), channels = redis.call('SMEMBERS', key .. ':channels'), org = org() })
`;

/**
 * Writes settings at one level (channel, user, device or client in a channel, or a connection) and
 * returns, for every connection below that level, its five settings levels as they now are, plus
 * the level's settings before the write: the caller derives the old and new effective settings.
 */
const LEVEL_UPDATE = `
local ch, level = P.ch, P.level
local c = kch(ch)
local ud, udc
if P.u and P.d then ud = P.u .. '/' .. P.d end
if ud and P.cl then udc = ud .. '/' .. P.cl end
local cfg
if level == 'channel' then
  if redis.call('HEXISTS', B .. ':channels', ch) == 0 then return fail('channel') end
  cfg = c .. ':cfg'
elseif level == 'user' then
  if redis.call('HEXISTS', c .. ':users', P.u) == 0 then return fail('user') end
  cfg = c .. ':ucfg:' .. P.u
elseif level == 'device' then
  if redis.call('HEXISTS', c .. ':devices', ud) == 0 then return fail('device') end
  cfg = c .. ':dcfg:' .. ud
elseif level == 'client' then
  if redis.call('HEXISTS', c .. ':clients', udc) == 0 then return fail('client') end
  cfg = c .. ':ccfg:' .. udc
else
  if redis.call('EXISTS', kconn(ch, udc, P.cn)) == 0 then return fail('connection') end
  cfg = kconn(ch, udc, P.cn) .. ':cfg'
end
local old = hgetall(cfg)
local t = nowms()
local seq = redis.call('HINCRBY', B, 'seq', 1)
SEQ = true
for f, v in pairs(P.set) do redis.call('HSET', cfg, f, v, f .. '@', seq) end
for f, v in pairs(P.lists) do redis.call('HSET', cfg, f, v) end
local claim = false
if given(P.claim) then
  redis.call('HSET', c .. ':clients', udc, P.claim)
  claim = true
end
local members = {}
if level == 'client' then
  for _, cn in ipairs(redis.call('SMEMBERS', c .. ':cconn:' .. udc)) do members[#members + 1] = udc .. '/' .. cn end
elseif level == 'connection' then
  members[1] = udc .. '/' .. P.cn
else
  local sel = false
  if level == 'user' then sel = P.u .. '/' elseif level == 'device' then sel = ud .. '/' end
  for _, m in ipairs(redis.call('SMEMBERS', c .. ':conns')) do
    if not sel or startswith(m, sel) then members[#members + 1] = m end
  end
end
local targets = {}
for _, m in ipairs(members) do
  local p = split(m)
  local mud = p[1] .. '/' .. p[2]
  local mudc = mud .. '/' .. p[3]
  targets[#targets + 1] = {
    u = p[1], d = p[2], cl = p[3], cn = p[4],
    conn = hgetall(kconn(ch, mudc, p[4])), client = clienth(kcl(mudc)),
    levels = levels(ch, p[1], mud, mudc, p[4]),
  }
end
local client = false
if udc then client = clienth(kcl(udc)) end
return ({ old = old, seq = seq, targets = targets, claim = claim, client = client, org = org(), at = str(t) })
`;

/**
 * What the registry holds for some clients of the application (P.cls: their `u/d/cl` members), for
 * a gateway's check of its sessions: per client, false when not registered, else its hash (the
 * gateway and session holding it among the fields), and per channel it is in, its claim and its
 * connections with their settings levels; with the application's settings sequence number. A read:
 * it changes nothing.
 */
const SESSIONS = `
local out = {}
for i, udc in ipairs(P.cls) do
  local key = kcl(udc)
  if redis.call('EXISTS', key) == 0 then
    out[i] = false
  else
    local p = split(udc)
    local ud = p[1] .. '/' .. p[2]
    local channels = {}
    for _, ch in ipairs(redis.call('SMEMBERS', key .. ':channels')) do
      local c = kch(ch)
      local conns = {}
      for _, cn in ipairs(redis.call('SMEMBERS', c .. ':cconn:' .. udc)) do
        conns[#conns + 1] = { cn = cn, levels = levels(ch, p[1], ud, udc, cn) }
      end
      channels[#channels + 1] = { ch = ch, claim = redis.call('HGET', c .. ':clients', udc) or false, conns = conns }
    end
    out[i] = { client = clienth(key), channels = channels }
  end
end
return ({ clients = out, seq = redis.call('HGET', B, 'seq') or '0' })
`;

/** Owner, in-use flag and the application snapshot counts (the hot read of interface A). */
const APP_SNAPSHOT = `
return ({
  org = redis.call('HGET', B, 'organizationId') or false,
  inUse = redis.call('HGET', B, 'inUse') == '1',
  counts = { redis.call('HLEN', B .. ':channels'), redis.call('HLEN', B .. ':users'), redis.call('HLEN', B .. ':devices'), redis.call('SCARD', B .. ':clients'), redis.call('SCARD', B .. ':conns') },
})
`;

/** Applies an in-use transition to the applications index unless a newer one is already there. */
export const INDEX_APPLY = `
local P = cjson.decode(ARGV[1])
local cur = redis.call('HGET', KEYS[1], P.a)
if cur then
  local g = tonumber(string.match(cur, '^(%d+)'))
  if g and g >= tonumber(P.gen) then return 0 end
end
redis.call('HSET', KEYS[1], P.a, P.gen .. ':' .. P.state .. ':' .. P.org)
return 1
`;

// ---------------------------------------------------------------------------------------------
// Servers (slot {servers}); KEYS[1] = `P rt:srv:{servers}`
// ---------------------------------------------------------------------------------------------

const SERVERS_PRELUDE = `
local S = KEYS[1]
local P = cjson.decode(ARGV[1])
local NULL = cjson.null
local function nowms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function str(n) return string.format('%.0f', n) end
local function given(v) return v ~= nil and v ~= NULL end
local function ms(id) return S .. ':mediaserver:' .. id end
${MEDIA_FUNCTIONS}`;

/** Records a heartbeat (idempotent). */
const HEARTBEAT = `
local t = nowms()
redis.call('HSET', S .. ':' .. P.role, P.id, P.info)
redis.call('ZADD', S .. ':' .. P.role .. ':seen', t, P.id)
if P.role == 'mediaserver' then redis.call('ZADD', S .. ':mediaserver:load', 'NX', 0, P.id) end
return str(t)
`;

/**
 * Places a connection on the least-loaded media server that is enabled, has heartbeated within the
 * timeout and is below its capacity; counts it as pending there. Returns the id or false.
 */
const PLACE = `
local id = ms_pick(S, P.timeoutMs, nowms())
if id then ms_place(S, id, P.app) end
return cjson.encode({ id = id })
`;

/** Enables or disables a media server (PATCH active). */
const SET_ACTIVE = `
if redis.call('HEXISTS', S .. ':mediaserver', P.id) == 0 then return 0 end
if P.active then redis.call('SREM', S .. ':mediaserver:disabled', P.id) else redis.call('SADD', S .. ':mediaserver:disabled', P.id) end
return 1
`;

/** Forgets servers of a role whose last heartbeat is older than the retention; returns their ids. */
const EXPIRE_SERVERS = `
local t = nowms()
local ids = redis.call('ZRANGEBYSCORE', S .. ':' .. P.role .. ':seen', '-inf', '(' .. str(t - P.retentionMs))
for _, id in ipairs(ids) do
  redis.call('HDEL', S .. ':' .. P.role, id)
  redis.call('ZREM', S .. ':' .. P.role .. ':seen', id)
  if P.role == 'mediaserver' then
    redis.call('SREM', S .. ':mediaserver:disabled', id)
    redis.call('ZREM', S .. ':mediaserver:load', id)
    redis.call('DEL', ms('stats:' .. id), ms('apps:' .. id))
  end
end
return cjson.encode(ids)
`;

export interface ScriptDef {
  /** Absent: the caller passes the number of keys first (a script with a variable number of keys). */
  numberOfKeys?: number;
  lua: string;
}

/**
 * The application scripts. Each body is the body of a Lua function `(P, K2)`: P the decoded
 * arguments, K2 the script's second key (see APP_SCRIPT_SERVER_KEY); it returns a table, which the
 * script sends back as JSON. `fail(...)` returns the failure table.
 */
export const APP_SCRIPTS = {
  rtRegister: REGISTER,
  rtUnregister: UNREGISTER,
  rtJoin: JOIN,
  rtRemoveMembers: REMOVE_MEMBERS,
  rtOpen: OPEN,
  rtConnState: CONN_STATE,
  rtConnPatch: CONN_PATCH,
  rtClientPatch: CLIENT_PATCH,
  rtLevelUpdate: LEVEL_UPDATE,
  rtAppSnapshot: APP_SNAPSHOT,
  rtSessions: SESSIONS,
} as const;

export const SERVER_SCRIPTS = {
  rtHeartbeat: HEARTBEAT,
  rtPlace: PLACE,
  rtSetActive: SET_ACTIVE,
  rtExpireServers: EXPIRE_SERVERS,
} as const;

export type AppScript = keyof typeof APP_SCRIPTS;
export type ServerScript = keyof typeof SERVER_SCRIPTS;

/**
 * App scripts that get a second key of the servers slot (see the top of this file): register the
 * gateway's client set; every script that opens or closes connections (open, state change, member
 * removal, unregister) the servers base key, for the media server counts.
 */
export const APP_SCRIPT_SERVER_KEY: Partial<Record<AppScript, 'gateway' | 'media'>> = {
  rtRegister: 'gateway',
  rtUnregister: 'media',
  rtRemoveMembers: 'media',
  rtOpen: 'media',
  rtConnState: 'media',
};

/** The app scripts that `rtSequence` can run one after the other (the reports of a client edge sequence). */
export const SEQUENCE_SCRIPTS = [
  'rtRegister',
  'rtJoin',
  'rtOpen',
  'rtConnState',
] as const satisfies readonly AppScript[];
export type SequenceScript = (typeof SEQUENCE_SCRIPTS)[number];

const opFunction = (name: AppScript) => `local function ${name}(P, K2)\n${APP_SCRIPTS[name]}\nend\n`;

/**
 * Several app script runs of ONE application as one script: `P.ops` = [{ s = script name, p = its
 * arguments, k = the index in KEYS of its second key }] (KEYS[1] the application's base key). They
 * run in order, each exactly as its own script would (same checks, same writes, same answer); the
 * first that fails ends the run (the ones after it are not applied). Answers the list of their
 * answers (up to and with the failing one); an answer whose client hash is the one of the answer
 * before it (read once per run) carries `client = 1` instead. One round trip, one script call and one JSON answer
 * instead of one each: what a client's register, join, open and state changes reported together cost.
 */
const SEQUENCE = `${SEQUENCE_SCRIPTS.map(opFunction).join('')}
local OPS = { ${SEQUENCE_SCRIPTS.map((n) => `${n} = ${n}`).join(', ')} }
local out = {}
local client
for i, o in ipairs(P.ops) do
  local r = OPS[o.s](o.p, KEYS[o.k])
  out[i] = r
  if r.fail then break end
  -- A client hash read once in this run (clienth) goes back once: later answers say \`client = 1\`.
  if r.client ~= nil and r.client == client then r.client = 1 elseif r.client ~= nil then client = r.client end
end
local answer = cjson.encode(out)
if out[1] and not out[1].fail then journal(answer) end
return answer
`;

/**
 * The operation journal (see events/journal.ts): an app script run given a journal entry id
 * (ARGV[2], with its context ARGV[3], a JSON text) records, in the same atomic run as its change,
 * `<Redis clock, µs>\n<context>\n<its JSON answer>` under that id in the journal hash, the LAST of
 * its KEYS (every app script gets it, whether it journals or not). A run that changed nothing (a
 * failure, a state change to the same state) records nothing. From an entry, another replica can
 * rebuild the events of a change whose replica died before it published them.
 */
const JOURNAL_FUNCTION = `
local function journal(answer)
  if not ARGV[2] then return end
  local t = redis.call('TIME')
  redis.call('HSET', KEYS[#KEYS], ARGV[2], t[1] .. string.format('%06d', tonumber(t[2])) .. '\\n' .. ARGV[3] .. '\\n' .. answer)
end
`;

/** Every script with its full source (prelude included), ready for `defineCommand`. */
export function scriptDefinitions(): Record<string, ScriptDef> {
  const out: Record<string, ScriptDef> = { rtIndexApply: { numberOfKeys: 1, lua: INDEX_APPLY } };
  for (const name of Object.keys(APP_SCRIPTS) as AppScript[]) {
    const second = APP_SCRIPT_SERVER_KEY[name];
    // KEYS: the application's base key, its second key if it has one, the journal.
    const body = `${opFunction(name)}local r = ${name}(P, ${second ? 'KEYS[2]' : 'nil'})
local answer = cjson.encode(r)
if not r.fail and not r.same then journal(answer) end
return answer
`;
    out[name] = { numberOfKeys: second ? 3 : 2, lua: withHelpers(APP_PRELUDE + JOURNAL_FUNCTION, body) };
  }
  out.rtSequence = { lua: withHelpers(APP_PRELUDE + JOURNAL_FUNCTION, SEQUENCE) };
  for (const [name, body] of Object.entries(SERVER_SCRIPTS))
    out[name] = { numberOfKeys: 1, lua: withHelpers(SERVERS_PRELUDE, body) };
  return out;
}

/**
 * A script: the prelude's opening lines (KEYS, ARGV), the prelude's helper functions that the body
 * calls (directly or through another helper), in the prelude's order, then the body. Every helper
 * is a closure Lua creates on each run of the script, so one a script never calls is left out.
 * A helper starts at a `local function <name>` line (with the comment lines right above it) at the
 * start of a line; the opening lines are what comes before the first helper.
 */
export function withHelpers(prelude: string, body: string): string {
  const chunks: Array<{ name: string | null; text: string[] }> = [{ name: null, text: [] }];
  let comments: string[] = [];
  for (const line of prelude.split('\n')) {
    const fn = /^local function (\w+)/.exec(line);
    if (line.startsWith('--')) comments.push(line);
    else if (fn) {
      chunks.push({ name: fn[1]!, text: [...comments, line] });
      comments = [];
    } else {
      chunks[chunks.length - 1]!.text.push(...comments, line);
      comments = [];
    }
  }
  const calls = (text: string, name: string) => new RegExp(`\\b${name}\\s*\\(`).test(text);
  const used = new Set<string>();
  for (let grew = true, scope = body; grew;) {
    grew = false;
    for (const c of chunks) {
      if (c.name && !used.has(c.name) && calls(scope, c.name)) {
        used.add(c.name);
        scope += `\n${c.text.join('\n')}`;
        grew = true;
      }
    }
  }
  const kept = chunks.filter((c) => c.name === null || used.has(c.name)).map((c) => c.text.join('\n'));
  return `${kept.join('\n')}\n${comments.join('\n')}\n${body}`;
}
