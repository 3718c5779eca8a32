-- Update a table's presence: which seats have a player's stream open, as leases in a sorted set
-- (members '<seat>:<lease id>', scored by when the lease runs out, in ms; the service's lease
-- ids are '<epoch>:<process id>': one a seat, token epoch and process, whatever its streams).
-- KEYS: 1 the table's presence set
-- ARGV: 1 now (ms), 2 when new and renewed leases run out (ms), 3 the table's channel,
--       4 how many event batches follow (8 or 0): seats 0-3 connected, then seats 0-3
--       disconnected, then how many members to drop and those members, then how many
--       prefixes to vacate (every member that starts with one ends) and those prefixes, then
--       the members to hold
-- Returns the seats with a lease after the update, as bits (1 << seat). Each seat whose bit
-- changed (a lease that ran out counts as dropped) has its batch published, in this one step.
local function seats()
  local on = {false, false, false, false}
  for _, member in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
    on[tonumber(string.sub(member, 1, 1)) + 1] = true
  end
  return on
end

local before = seats()
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
local batches = tonumber(ARGV[4])
local first = 5 + batches
local drops = tonumber(ARGV[first])
for i = first + 1, first + drops do
  redis.call('ZREM', KEYS[1], ARGV[i])
end
local vacating = first + drops + 1
local vacates = tonumber(ARGV[vacating])
if vacates > 0 then
  for _, member in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
    for i = vacating + 1, vacating + vacates do
      if string.sub(member, 1, #ARGV[i]) == ARGV[i] then
        redis.call('ZREM', KEYS[1], member)
        break
      end
    end
  end
end
for i = vacating + vacates + 1, #ARGV do
  redis.call('ZADD', KEYS[1], ARGV[2], ARGV[i])
end
-- The set goes one lease after its last lease runs out (an empty set is gone already): until
-- then an update still finds the leases that ran out, and announces their seats gone.
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
if last[2] then
  local expiry = tonumber(last[2]) + tonumber(ARGV[2]) - tonumber(ARGV[1])
  redis.call('PEXPIREAT', KEYS[1], string.format('%.0f', expiry))
end
local after = seats()
local bits = 0
for seat = 1, 4 do
  if batches > 0 and after[seat] ~= before[seat] then
    redis.call('PUBLISH', ARGV[3], ARGV[after[seat] and 4 + seat or 8 + seat])
  end
  if after[seat] then
    bits = bits + 2 ^ (seat - 1)
  end
end
return bits
