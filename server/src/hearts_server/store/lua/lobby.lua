-- A lobby's slot: the table that players asking for the same game are seated at (QuickJoin).
-- KEYS: 1 the slot
-- ARGV: 1 'offer' or 'release', 2 a table id, 3 (offer) the slot's time to live (ms),
--   4 (offer) a table the caller found full, which the offer replaces (else the table again)
-- offer: name the table in the slot unless another is named there already, other than the full
-- one (naming it again renews the slot's time to live); returns the table named.
-- release: empty the slot if it still names the table; returns 1 if it did, else 0.
local current = redis.call('GET', KEYS[1])
if ARGV[1] == 'offer' then
  if current and current ~= ARGV[2] and current ~= ARGV[4] then
    return current
  end
  redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
  return ARGV[2]
end
if current == ARGV[2] then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
