-- Delete a table if it is still at the expected version, publishing its last events first. Its
-- id is marked gone for ttl_ms, so that no create makes it again (see create.lua); not with ""
-- (a create taken back, whose id may be made again).
-- KEYS: table, events, requests, gone, due
-- ARGV: expected_version, channel, batch ("" when there are no events), ttl_ms or "", the
--       table's id (the due set's member)
-- Returns 1 if deleted, 0 otherwise.
local version = redis.call('HGET', KEYS[1], 'v')
if not version or tonumber(version) ~= tonumber(ARGV[1]) then
  return 0
end
if ARGV[3] ~= '' then
  redis.call('PUBLISH', ARGV[2], ARGV[3])
end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])
redis.call('ZREM', KEYS[5], ARGV[5])
if ARGV[4] ~= '' then
  redis.call('SET', KEYS[4], '1', 'PX', ARGV[4])
end
return 1
