-- Make a claimed outbox item due again, if the claim is still the item's.
-- KEYS: outbox (id -> due ms)
-- ARGV: 1 id, 2 the claim's lease end (ms), 3 when it is due again (ms)
-- Returns 1 if it was, 0 if the item was sent meanwhile or claimed again after the lease ran out.
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not score or tonumber(score) ~= tonumber(ARGV[2]) then
  return 0
end
redis.call('ZADD', KEYS[1], 'XX', ARGV[3], ARGV[1])
return 1
