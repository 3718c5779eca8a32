-- Hand out the outbox items due, each leased to the caller until the lease runs out, and count
-- the delivery each claim is for: a claimer that dies mid-delivery has tried once too.
-- KEYS: outbox (id -> due ms), items (id -> payload), attempts (id -> deliveries tried)
-- ARGV: 1 now (ms), 2 the lease's end (ms), 3 at most how many
-- Returns {id, payload, attempt, ...} (attempt: this delivery's number, from 1); an id whose
-- payload is gone is dropped.
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, ARGV[3])
local claimed = {}
for _, id in ipairs(due) do
  local payload = redis.call('HGET', KEYS[2], id)
  if payload then
    redis.call('ZADD', KEYS[1], 'XX', ARGV[2], id)
    claimed[#claimed + 1] = id
    claimed[#claimed + 1] = payload
    claimed[#claimed + 1] = redis.call('HINCRBY', KEYS[3], id, 1)
  else
    redis.call('ZREM', KEYS[1], id)
    redis.call('HDEL', KEYS[3], id)
  end
end
return claimed
