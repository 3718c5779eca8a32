-- Count one use of a quota; the count expires with its window, which starts with the first use.
-- KEYS: the quota's counter
-- ARGV: 1 the window (ms)
-- Returns the uses in the current window, this one included.
local count = redis.call('INCR', KEYS[1])
if count == 1 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
end
return count
