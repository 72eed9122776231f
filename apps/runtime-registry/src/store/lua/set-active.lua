-- rtSetActive: enables or disables a media server (PATCH active); 0 when it is unknown.
-- KEYS: the servers base key. args: id, active.
local servers_key = KEYS[1]
local args = cjson.decode(ARGV[1])
if redis.call('HEXISTS', servers_key .. ':mediaserver', args.id) == 0 then return 0 end
if args.active then
  redis.call('SREM', servers_key .. ':mediaserver:disabled', args.id)
else
  redis.call('SADD', servers_key .. ':mediaserver:disabled', args.id)
end
return 1
