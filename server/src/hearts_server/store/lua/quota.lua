-- Count one use of a quota, unless the use is the retry of a create request already applied;
-- the count expires with its window, which starts with the first use.
-- KEYS: 1 the quota's counter, 2 (optional) the create request's key
-- ARGV: 1 the window (ms)
-- Returns the uses in the current window, this one included; 0 for a retry (not counted).
if KEYS[2] and redis.call('EXISTS', KEYS[2]) == 1 then
  return 0
end
local count = redis.call('INCR', KEYS[1])
if count == 1 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
end
return count
