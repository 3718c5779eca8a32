-- Delete a table if it is still at the expected version, publishing its last events first.
-- KEYS: table, events, requests
-- ARGV: expected_version, channel, batch ("" when there are no events)
-- Returns 1 if deleted, 0 otherwise.
local version = redis.call('HGET', KEYS[1], 'v')
if not version or tonumber(version) ~= tonumber(ARGV[1]) then
  return 0
end
if ARGV[3] ~= '' then
  redis.call('PUBLISH', ARGV[2], ARGV[3])
end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])
return 1
