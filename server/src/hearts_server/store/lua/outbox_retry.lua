-- Make a claimed outbox item due again, if the claim is still the item's.
-- KEYS: outbox (id -> due ms), attempts (id -> deliveries tried)
-- ARGV: 1 id, 2 the claim's lease end (ms), 3 when it is due again (ms), 4 attempts so far
-- Returns 1 if it was, 0 if the item was sent meanwhile or claimed again after the lease ran out.
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not score or tonumber(score) ~= tonumber(ARGV[2]) then
  return 0
end
redis.call('ZADD', KEYS[1], 'XX', ARGV[3], ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[4])
return 1
