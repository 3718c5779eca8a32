/**
 * The conformance tests (conformance.ts) as a web page would run them: over gRPC-Web (binary)
 * and the Connect protocol (JSON), with the Fetch API, through hearts-gateway
 * (HEARTS_GATEWAY=host:port, as deploy/gateway/with-gateway.sh sets it) to a live server; and the
 * heartbeats a web page asks for on a quiet table's watch stream, over both protocols.
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, test } from "node:test";
import { timestampMs } from "@bufbuild/protobuf/wkt";
import { BotLevel, Code, ERROR_DOMAIN, SeatOccupant, bearer, type TableServiceClient, type WatchTableResponse } from "@hearts/client";
import { type WebProtocol, createTableServiceWebClient } from "@hearts/client/web";
import { conformanceTests } from "./conformance.js";
import { CALL_TIMEOUT_MS, failureOf, inSequence, must } from "./game.js";

function gatewayUrl(): string {
  const address = process.env["HEARTS_GATEWAY"];
  if (!address) {
    throw new Error("HEARTS_GATEWAY is not set; run the test via deploy/gateway/with-gateway.sh");
  }
  return `http://${address}`;
}

conformanceTests("gRPC-Web", () => createTableServiceWebClient(gatewayUrl()));
conformanceTests("Connect JSON", () => createTableServiceWebClient(gatewayUrl(), { protocol: "connect" }));
heartbeatTests("gRPC-Web", "grpc-web");
heartbeatTests("Connect JSON", "connect");

// The shortest heartbeat_interval the server accepts, and how long the test waits for the first
// heartbeat after the snapshot (the interval plus slack for a loaded machine).
const HEARTBEAT_SECONDS = 5n;
const HEARTBEAT_WITHIN_MS = 8_000;

/** `promise`, or a rejection naming `what` if it has not settled within `ms`. */
async function within<T>(ms: number, what: string, promise: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no ${what} within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A quiet table (three bots and a free seat: the game waits for a player) watched by a spectator
 * with heartbeat_interval 5 s gets, after its snapshot, nothing but a heartbeat within about 8 s
 * (not before about 5 s), numbered as the snapshot, with the server's clock; an interval under
 * 5 s is refused with INVALID_ARGUMENT / INVALID_REQUEST.
 */
function heartbeatTests(name: string, protocol: WebProtocol): void {
  const newClient = (): TableServiceClient => createTableServiceWebClient(gatewayUrl(), { protocol });

  test(`${name}: a quiet table's watch stream gets a heartbeat after the interval asked for`, { timeout: 30_000 }, async (t) => {
    const client = newClient();
    const created = await client.createTable(
      {
        table: {
          displayName: `TypeScript heartbeats (${name})`,
          seats: [1, 2, 3].map((seat) => ({ seat, occupant: SeatOccupant.BOT, botLevel: BotLevel.HEURISTIC })),
        },
        requestId: randomUUID(),
      },
      { timeoutMs: CALL_TIMEOUT_MS },
    );
    const table = must(created.view?.table, "CreateTable table");
    t.after(() =>
      client.deleteTable(
        { name: table.name, requestId: randomUUID() },
        { headers: bearer(created.creatorToken), timeoutMs: CALL_TIMEOUT_MS },
      ),
    );

    const abort = new AbortController();
    t.after(() => abort.abort());
    const stream = client
      .watchTable({ name: table.name, heartbeatInterval: { seconds: HEARTBEAT_SECONDS } }, { signal: abort.signal })
      [Symbol.asyncIterator]();
    const next = async (what: string, ms: number): Promise<WatchTableResponse> => {
      const result = await within(ms, what, stream.next());
      assert.ok(!result.done, `the watch stream ended before ${what}`);
      return result.value;
    };
    const snapshot = await next("snapshot", CALL_TIMEOUT_MS);
    assert.equal(snapshot.kind.case, "snapshot", "the first message of a watch is a snapshot");
    const snapshotAt = Date.now();

    // A spectator's stream of a table without players: no presence, no events; only heartbeats.
    const beat = await next("heartbeat", HEARTBEAT_WITHIN_MS);
    const waited = Date.now() - snapshotAt;
    assert.equal(beat.kind.case, "heartbeat", `after the snapshot came ${beat.kind.case}, want a heartbeat`);
    assert.ok(waited >= 4_000, `the heartbeat came ${waited} ms after the snapshot, before the ${HEARTBEAT_SECONDS} s asked for`);
    assert.equal(beat.sequence, snapshot.sequence, "a heartbeat repeats the number of the message before it");
    assert.ok(inSequence(snapshot.sequence, beat), "inSequence lets a heartbeat through");
    const serverTime = must(beat.kind.value.serverTime, "server_time");
    const skew = Math.abs(timestampMs(serverTime) - Date.now());
    assert.ok(skew < 3_000, `server_time ${new Date(timestampMs(serverTime)).toISOString()} is ${skew} ms from now`);
  });

  test(`${name}: a heartbeat interval under 5 s is refused as INVALID_REQUEST`, { timeout: 30_000 }, async (t) => {
    const client = newClient();
    const created = await client.createTable(
      { table: { displayName: `TypeScript heartbeats refused (${name})` }, requestId: randomUUID() },
      { timeoutMs: CALL_TIMEOUT_MS },
    );
    const tableName = must(created.view?.table, "CreateTable table").name;
    t.after(() =>
      client.deleteTable(
        { name: tableName, requestId: randomUUID() },
        { headers: bearer(created.creatorToken), timeoutMs: CALL_TIMEOUT_MS },
      ),
    );
    const stream = client.watchTable(
      { name: tableName, heartbeatInterval: { seconds: 1n } },
      { timeoutMs: CALL_TIMEOUT_MS },
    );
    const refused = await failureOf(stream[Symbol.asyncIterator]().next());
    assert.equal(refused.code, Code.InvalidArgument, refused.message);
    assert.equal(refused.errorInfo?.domain, ERROR_DOMAIN);
    assert.equal(refused.reason, "INVALID_REQUEST");
  });
}

// The Fetch API's connection pool (Node's built-in undici) can keep a pooled keep-alive socket
// to the gateway referenced after the tests that make concurrent calls (QuickJoin's), which
// keeps Node from exiting when every test has passed (seen in about one run in five). Closing
// the pool once all tests are done lets the process end.
after(async () => {
  const pool = (globalThis as Record<symbol, { destroy(): Promise<void> } | undefined>)[
    Symbol.for("undici.globalDispatcher.1")
  ];
  await pool?.destroy();
});
