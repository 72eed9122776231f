-- rtAppSnapshot (a read, the hot one of interface A): the owner, the in-use flag and the
-- application's counts of channels, users, devices, clients and connections.
local function read_app_snapshot()
  return {
    org = redis.call('HGET', app_key, 'organizationId') or false,
    inUse = redis.call('HGET', app_key, 'inUse') == '1',
    counts = {
      redis.call('HLEN', app_key .. ':channels'), redis.call('HLEN', app_key .. ':users'),
      redis.call('HLEN', app_key .. ':devices'), redis.call('SCARD', app_key .. ':clients'),
      redis.call('SCARD', app_key .. ':conns'),
    },
  }
end
