-- rtHeartbeat: records a server's heartbeat (idempotent); answers its Redis clock time.
-- KEYS: the servers base key. args: role, id, info (the stored server, JSON).
local servers_key = KEYS[1]
local args = cjson.decode(ARGV[1])
local now = now_ms()
redis.call('HSET', servers_key .. ':' .. args.role, args.id, args.info)
redis.call('ZADD', servers_key .. ':' .. args.role .. ':seen', now, args.id)
if args.role == 'mediaserver' then redis.call('ZADD', servers_key .. ':mediaserver:load', 'NX', 0, args.id) end
return integer_text(now)
