-- rtIndexApply: applies an in-use transition to the applications index unless a newer one (a
-- higher generation) is already there. KEYS: the index. args: a, gen, state, org.
local index_key = KEYS[1]
local args = cjson.decode(ARGV[1])
local current = redis.call('HGET', index_key, args.a)
if current then
  local generation = tonumber(string.match(current, '^(%d+)'))
  if generation and generation >= tonumber(args.gen) then return 0 end
end
redis.call('HSET', index_key, args.a, args.gen .. ':' .. args.state .. ':' .. args.org)
return 1
