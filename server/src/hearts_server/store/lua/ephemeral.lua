-- Publish an unstored event batch to a table's watchers, within a rate limit.
-- KEYS: the sender's counter for the current window (expires with it)
-- ARGV: 1 the most per window, 2 the window (ms), 3 the table's channel, 4 the batch
-- Returns 1 if published, 0 if the sender had published the most already in this window.
local count = redis.call('INCR', KEYS[1])
if count == 1 then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
if count > tonumber(ARGV[1]) then
  return 0
end
redis.call('PUBLISH', ARGV[3], ARGV[4])
return 1
