-- A player's list of tables (ListPlayerTables): drop the tables found gone, each only if its
-- entry still has the score it was read with. A table made again under the same id (a rematch's
-- or a quick game's, after it expired) where the player took a seat since has a new score.
-- KEYS: 1 the list
-- ARGV: pairs of a table id and the score it was read with
-- returns how many entries it dropped.
local dropped = 0
for i = 1, #ARGV, 2 do
  local score = redis.call('ZSCORE', KEYS[1], ARGV[i])
  if score and tonumber(score) == tonumber(ARGV[i + 1]) then
    redis.call('ZREM', KEYS[1], ARGV[i])
    dropped = dropped + 1
  end
end
return dropped
