-- rtJoin: a registered client joins a channel with its claim (a repeated join replaces the claim).
-- KEYS: the application's base key, the journal. args: u, d, cl, ch, claim; rec ('1'/'0',
-- optional): the channel config's recordingEnabled, stored when this join activates the channel.
local function join_channel(args)
  local user_id, device_id, client_id, channel_id = args.u, args.d, args.cl, args.ch
  local device_member = user_id .. '/' .. device_id
  local client_member = device_member .. '/' .. client_id
  local key = client_key(client_member)
  if redis.call('EXISTS', key) == 0 then return failure('client') end
  local channel = channel_key(channel_id)
  local now = now_ms()
  local already = redis.call('HEXISTS', channel .. ':clients', client_member) == 1
  redis.call('HSET', channel .. ':clients', client_member, args.claim)
  local activated = false
  if not already then
    redis.call('SADD', key .. ':channels', channel_id)
    if redis.call('HINCRBY', app_key .. ':channels', channel_id, 1) == 1 then
      activated = true
      redis.call('HSET', channel, 'activatedAt', integer_text(now))
      -- The channel's default until it deactivates (settings.ts, CONFIG_RECORDING).
      if given(args.rec) then redis.call('HSET', channel .. ':cfg', 'configRecording', args.rec) end
    end
    redis.call('HINCRBY', channel .. ':users', user_id, 1)
    if redis.call('HINCRBY', channel .. ':devices', device_member, 1) == 1 then
      redis.call('HINCRBY', channel .. ':udev', user_id, 1)
    end
    redis.call('HINCRBY', app_key .. ':u:' .. user_id .. ':channels', channel_id, 1)
    redis.call('HINCRBY', app_key .. ':d:' .. device_member .. ':channels', channel_id, 1)
  end
  return {
    already = already, activated = activated, client = read_client(key), org = organization_id(),
    at = integer_text(now),
    counts = {
      redis.call('HLEN', channel .. ':users'), redis.call('HLEN', channel .. ':devices'),
      redis.call('HLEN', channel .. ':clients'), redis.call('SCARD', channel .. ':conns'),
    },
    levels = settings_levels(channel_id, user_id, device_member, client_member, false),
  }
end
