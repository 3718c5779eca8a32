-- Publish an unstored event batch to a table's watchers, if the table is still at the version
-- that the sender's right to send was checked on, and within the sender's rate limit.
-- KEYS: 1 the table (hash, field v the version), 2 the sender's counter for the current window
-- ARGV: 1 the version, 2 the most per window, 3 the window (ms), 4 the table's channel,
--       5 the batch
-- Returns 1 if published, 0 if the sender had published the most already in this window, -1 if
-- the table is at another version or gone (nothing counted).
if redis.call('HGET', KEYS[1], 'v') ~= ARGV[1] then
  return -1
end
local count = redis.call('INCR', KEYS[2])
if count == 1 then
  redis.call('PEXPIRE', KEYS[2], ARGV[3])
end
if count > tonumber(ARGV[2]) then
  return 0
end
redis.call('PUBLISH', ARGV[4], ARGV[5])
return 1
