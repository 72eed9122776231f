-- rtExpireServers: forgets the servers of a role whose last heartbeat is older than the retention;
-- answers their ids. KEYS: the servers base key. args: role, retentionMs.
local servers_key = KEYS[1]
local args = cjson.decode(ARGV[1])
local role = servers_key .. ':' .. args.role
local cutoff = now_ms() - args.retentionMs
local expired = redis.call('ZRANGEBYSCORE', role .. ':seen', '-inf', '(' .. integer_text(cutoff))
for _, server_id in ipairs(expired) do
  redis.call('HDEL', role, server_id)
  redis.call('ZREM', role .. ':seen', server_id)
  if args.role == 'mediaserver' then
    local media_server = servers_key .. ':mediaserver:'
    redis.call('SREM', media_server .. 'disabled', server_id)
    redis.call('ZREM', media_server .. 'load', server_id)
    redis.call('DEL', media_server .. 'stats:' .. server_id, media_server .. 'apps:' .. server_id)
  end
end
return cjson.encode(expired)
