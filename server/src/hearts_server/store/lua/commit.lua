-- Compare-and-set a table's record, append events, remember the request, refresh the TTL and
-- publish the batch: all or nothing, in one round trip.
-- KEYS: table, events, requests, outbox, outbox items, due
-- ARGV: 1 expected_version, 2 data, 3 ttl_ms, 4 caller, 5 request_id,
--       6 request mode ("0" none, "1" check, "2" check and remember), 7 response,
--       8 open ("" unchanged, "1", "0"), 9 max_events, 10 channel, 11 batch,
--       12 expected stamp ("-": unknown, which never matches), 13 new stamp,
--       14 outbox item id ("": none), 15 its payload, 16 when it is due (ms),
--       17 the record's second part ("": none, so the field is cleared; "k": the stored one,
--       whose length is 18; "s": 18 is the new one), 19 when the table is due ("": never),
--       20 the table's id (the due set's member),
--       then (sequence, audience, payload) triples, sequences increasing and >= 1.
-- The record is replaced only if both its version and its stamp are the expected ones: after
-- Redis was restored from older data, a version may come back with other moves (see load.lua).
-- Returns {1, new_version} applied, {0, version, open} conflict (version 0: no table),
-- {2, version, response, open} replayed, {-1, version, error} events out of order, {3, version}
-- the stored second part is not the one the caller meant to keep (nothing written for these two). "open" is the record's current flag, so the caller can repair a listing hint it sent.
local current = redis.call('HMGET', KEYS[1], 'v', 'o', 's')
if not current[1] then
  return {0, 0, ''}
end
local version = tonumber(current[1])
if ARGV[6] ~= '0' then
  local remembered = redis.call('HGET', KEYS[3], ARGV[4])
  if remembered then
    local colon = string.find(remembered, ':', 1, true)
    local n = tonumber(string.sub(remembered, 1, colon - 1))
    if string.sub(remembered, colon + 1, colon + n) == ARGV[5] then
      return {2, version, string.sub(remembered, colon + n + 1), current[2] or ''}
    end
  end
end
if version ~= tonumber(ARGV[1]) or (current[3] or '') ~= ARGV[12] then
  return {0, version, current[2] or ''}
end
-- The record's second part (its finished rounds) changes once a round: the caller sends it only
-- then, and otherwise names the length of the one it read or wrote at this version. The check
-- guards against a caller's mistake; it cannot fail for a record the caller holds.
if ARGV[17] == 'k' and redis.call('HSTRLEN', KEYS[1], 'f') ~= tonumber(ARGV[18]) then
  return {3, version}
end
local first = 21
if #ARGV >= first then
  -- Scripts are not rolled back on error, so the one write that can fail (an id not above the
  -- stream's top) goes first and is caught before anything else is written.
  local added = redis.pcall('XADD', KEYS[2], ARGV[first] .. '-0',
    'a', ARGV[first + 1], 'p', ARGV[first + 2])
  if type(added) == 'table' and added.err then
    if string.sub(added.err, 1, 4) == 'OOM ' then
      return redis.error_reply(added.err) -- Redis at maxmemory: nothing written, retry later
    end
    return {-1, version, added.err}
  end
  for i = first + 3, #ARGV, 3 do
    redis.call('XADD', KEYS[2], ARGV[i] .. '-0', 'a', ARGV[i + 1], 'p', ARGV[i + 2])
  end
  redis.call('XTRIM', KEYS[2], 'MAXLEN', ARGV[9])
end
redis.call('HSET', KEYS[1], 'v', version + 1, 'd', ARGV[2], 's', ARGV[13])
if ARGV[17] == 's' then
  redis.call('HSET', KEYS[1], 'f', ARGV[18])
elseif ARGV[17] == '' then
  redis.call('HDEL', KEYS[1], 'f')
end
if ARGV[8] ~= '' then
  redis.call('HSET', KEYS[1], 'o', ARGV[8])
end
if ARGV[19] ~= '' then
  redis.call('ZADD', KEYS[6], ARGV[19], ARGV[20])
else
  redis.call('ZREM', KEYS[6], ARGV[20])
end
if ARGV[14] ~= '' and redis.call('ZADD', KEYS[4], 'NX', ARGV[16], ARGV[14]) == 1 then
  redis.call('HSET', KEYS[5], ARGV[14], ARGV[15])
end
if ARGV[6] == '2' then
  redis.call('HSET', KEYS[3], ARGV[4], string.len(ARGV[5]) .. ':' .. ARGV[5] .. ARGV[7])
  -- A join is remembered under its own request id (the joiner has no seat yet), so a table
  -- joined and left over and over would remember every join: past 64 callers, only this one.
  if string.sub(ARGV[4], 1, 5) == 'join:' and redis.call('HLEN', KEYS[3]) > 64 then
    for _, field in ipairs(redis.call('HKEYS', KEYS[3])) do
      if string.sub(field, 1, 5) == 'join:' and field ~= ARGV[4] then
        redis.call('HDEL', KEYS[3], field)
      end
    end
  end
end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('PEXPIRE', KEYS[2], ARGV[3])
redis.call('PEXPIRE', KEYS[3], ARGV[3])
if #ARGV >= first then
  redis.call('PUBLISH', ARGV[10], ARGV[11])
end
return {1, version + 1}
