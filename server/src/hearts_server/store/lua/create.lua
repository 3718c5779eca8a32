-- Create a table at version 1 unless it exists or was deleted (its id marked gone), append its
-- first events, publish them.
-- KEYS: table, events, requests, gone, due
-- ARGV: data, open ("1"/"0"), ttl_ms, max_events, channel, batch, stamp, whether the record has
--       a second part ("s") or not (""), that part, when the table is due ("": never), the
--       table's id (the due set's member), then (sequence, audience, payload) triples. The caller checked that sequences are >= 1 and
--       increasing.
-- Returns 1 if created, 0 if the id is taken.
if redis.call('EXISTS', KEYS[1]) == 1 or redis.call('EXISTS', KEYS[4]) == 1 then
  return 0
end
-- Leftovers cannot outlive the record (same deadline), but a fresh table must not inherit them.
redis.call('DEL', KEYS[2], KEYS[3])
local first = 12
for i = first, #ARGV, 3 do
  redis.call('XADD', KEYS[2], ARGV[i] .. '-0', 'a', ARGV[i + 1], 'p', ARGV[i + 2])
end
if #ARGV >= first then
  redis.call('XTRIM', KEYS[2], 'MAXLEN', ARGV[4])
end
redis.call('HSET', KEYS[1], 'v', 1, 'd', ARGV[1], 'o', ARGV[2], 's', ARGV[7])
if ARGV[8] == 's' then
  redis.call('HSET', KEYS[1], 'f', ARGV[9])
end
if ARGV[10] ~= '' then
  redis.call('ZADD', KEYS[5], ARGV[10], ARGV[11])
else
  redis.call('ZREM', KEYS[5], ARGV[11]) -- a name made again after its first table expired
end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('PEXPIRE', KEYS[2], ARGV[3])
if #ARGV >= first then
  redis.call('PUBLISH', ARGV[5], ARGV[6])
end
return 1
