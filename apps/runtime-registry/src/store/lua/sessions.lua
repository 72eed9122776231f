-- rtSessions (a read, for a gateway's check of its sessions): per client (args.cls: `u/d/cl`
-- members), false when not registered, else its hash and, per channel it is in, its claim and its
-- connections with their settings levels and states; with the application's settings sequence number.
local function read_sessions(args)
  local clients = {}
  for i, client_member in ipairs(args.cls) do
    local key = client_key(client_member)
    if redis.call('EXISTS', key) == 0 then
      clients[i] = false
    else
      local ids = split_member(client_member)
      local device_member = ids[1] .. '/' .. ids[2]
      local channels = {}
      for _, channel_id in ipairs(redis.call('SMEMBERS', key .. ':channels')) do
        local channel = channel_key(channel_id)
        local connections = {}
        for _, connection_id in ipairs(redis.call('SMEMBERS', channel .. ':cconn:' .. client_member)) do
          local levels = settings_levels(channel_id, ids[1], device_member, client_member, connection_id)
          local state = redis.call('HGET', connection_key(channel_id, client_member, connection_id), 'state') or false
          connections[#connections + 1] = { cn = connection_id, levels = levels, state = state }
        end
        local claim = redis.call('HGET', channel .. ':clients', client_member) or false
        channels[#channels + 1] = { ch = channel_id, claim = claim, conns = connections }
      end
      clients[i] = { client = read_client(key), channels = channels }
    end
  end
  return { clients = clients, seq = redis.call('HGET', app_key, 'seq') or '0' }
end
