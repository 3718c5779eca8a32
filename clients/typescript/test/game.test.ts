/** The order the conformance tests demand of a watch stream (inSequence), checked without a server. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { create } from "@bufbuild/protobuf";
import { HeartbeatSchema, Reaction, type TableEvent, TableEventSchema, TableViewSchema, WatchTableResponseSchema } from "@hearts/client";
import { inSequence } from "./game.js";

const reaction = create(TableEventSchema, { event: { case: "reaction", value: { seat: 0, reaction: Reaction.WAVE } } });
const presence = create(TableEventSchema, { event: { case: "presenceChanged", value: { seat: 1, connected: true } } });
const played = create(TableEventSchema, { event: { case: "cardPlayed", value: { seat: 0 } } });
const event = (sequence: bigint, value: TableEvent) =>
  create(WatchTableResponseSchema, { sequence, kind: { case: "event", value } });
const heartbeat = (sequence: bigint) =>
  create(WatchTableResponseSchema, { sequence, kind: { case: "heartbeat", value: create(HeartbeatSchema) } });

test("only an unstored message (a reaction, a presence change, a heartbeat) repeats the number before it, and nothing goes back", () => {
  const snapshot = create(WatchTableResponseSchema, { sequence: 7n, kind: { case: "snapshot", value: create(TableViewSchema) } });
  const cases: [string, ReturnType<typeof event>, boolean][] = [
    ["an event numbered after the last", event(8n, played), true],
    ["a reaction numbered after the last (the event before it was another seat's)", event(8n, reaction), true],
    ["a reaction repeating the last number", event(7n, reaction), true],
    ["an event repeating the last number", event(7n, played), false],
    ["a snapshot repeating the last number", snapshot, false],
    ["a reaction numbered before the last", event(6n, reaction), false],
    ["a presence change repeating the last number", event(7n, presence), true],
    ["a presence change numbered after the last (the event before it was another seat's)", event(8n, presence), true],
    ["a presence change numbered before the last", event(6n, presence), false],
    ["a heartbeat repeating the last number", heartbeat(7n), true],
    ["a heartbeat numbered after the last (the event before it was another seat's)", heartbeat(8n), true],
    ["a heartbeat numbered before the last", heartbeat(6n), false],
  ];
  for (const [what, message, allowed] of cases) {
    assert.equal(inSequence(7n, message), allowed, what);
  }
});
