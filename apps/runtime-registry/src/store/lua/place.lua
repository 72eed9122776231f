-- rtPlace: places a connection on the least-loaded eligible media server and counts it as pending
-- there. KEYS: the servers base key. args: app, timeoutMs. Answers { id } (false: none).
local servers_key = KEYS[1]
local args = cjson.decode(ARGV[1])
local server_id = pick_media_server(servers_key, args.timeoutMs, now_ms())
if server_id then count_pending_on(servers_key, server_id, args.app) end
return cjson.encode({ id = server_id })
