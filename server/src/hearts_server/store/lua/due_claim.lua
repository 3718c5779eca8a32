-- Claim the tables due by now (see Store.due_claim): each one's time moves to the end of the
-- claimer's lease, so that another process claims it again only if no commit sets a new time.
-- KEYS: due
-- ARGV: now (ms), lease (ms), limit
-- Returns the ids claimed, soonest due first.
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, ARGV[3])
local until_ms = tonumber(ARGV[1]) + tonumber(ARGV[2])
for _, table_id in ipairs(due) do
  redis.call('ZADD', KEYS[1], 'XX', until_ms, table_id)
end
return due
