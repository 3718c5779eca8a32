-- Read a table's record and, optionally, the caller's remembered response, in one round trip.
-- KEYS: table, requests
-- ARGV: check ("1" to look up the caller's request), caller, request_id, known version ("0": none),
--       known stamp ("-": none)
-- Returns {0} when the table is absent, {version, data, stamp, second} or {version, data, stamp,
-- second, response}: "second" is the record's second part (its finished rounds), false when it
-- has none; data and second are "" when version and stamp are the known ones (the reader holds
-- that record).
-- The stamp, random per commit, tells two records of one version apart: a Redis restored from
-- older data (a snapshot, a promoted replica) may reach a version again with other moves.
local current = redis.call('HMGET', KEYS[1], 'v', 'd', 's', 'f')
if not current[1] then
  return {0}
end
local stamp = current[3] or ''
if current[1] == ARGV[4] and stamp == ARGV[5] then
  current[2] = ''
  current[4] = ''
end
if ARGV[1] == '1' then
  local remembered = redis.call('HGET', KEYS[2], ARGV[2])
  if remembered then
    -- "<len>:<request_id><response>": a length prefix, so ids and responses may hold any byte.
    local colon = string.find(remembered, ':', 1, true)
    local n = tonumber(string.sub(remembered, 1, colon - 1))
    if string.sub(remembered, colon + 1, colon + n) == ARGV[3] then
      return {tonumber(current[1]), current[2], stamp, current[4],
        string.sub(remembered, colon + n + 1)}
    end
  end
end
return {tonumber(current[1]), current[2], stamp, current[4]}
