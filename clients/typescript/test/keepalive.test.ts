/**
 * Keepalive pings end a watch stream whose connection died silently, against a live Hearts server
 * (HEARTS_SERVER=host:port, as scripts/with-server.sh sets it). Between client and server sits a
 * TCP relay on loopback that can be cut: it then forwards nothing more either way, but keeps
 * every socket open (no FIN, no RST), as when a NAT entry is dropped or a laptop sleeps. Without
 * the pings the stream would wait forever; with them it fails with a ConnectError.
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { type AddressInfo, type Server, type Socket, createServer, connect } from "node:net";
import { test } from "node:test";
import { BotLevel, Code, ConnectError, SeatOccupant } from "@hearts/client";
import { createTableServiceClient } from "@hearts/client/node";
import { CALL_TIMEOUT_MS, TARGET_SCORE, must } from "./game.js";

// Short pings for the test (the server accepts one every 10 s at most): the stream should fail
// about 12 s after its last data; it must within FAIL_WITHIN_MS.
const PING_INTERVAL_MS = 10_000;
const PING_TIMEOUT_MS = 2_000;
const FAIL_WITHIN_MS = 30_000;

function serverAddress(): string {
  const address = process.env["HEARTS_SERVER"];
  if (!address) {
    throw new Error("HEARTS_SERVER is not set; run the test via scripts/with-server.sh");
  }
  return address;
}

/** A TCP relay on 127.0.0.1 to `target` (host:port); `cut()` stops it forwarding, but closes nothing. */
async function startRelay(target: string) {
  const colon = target.lastIndexOf(":");
  const upstreamAt = { host: target.slice(0, colon), port: Number(target.slice(colon + 1)) };
  let cut = false;
  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => socket.destroy());
  };
  // allowHalfOpen: a FIN from one side is passed on (before the cut), never answered by Node.
  const server: Server = createServer({ allowHalfOpen: true }, (client) => {
    const upstream = connect({ ...upstreamAt, allowHalfOpen: true });
    track(client);
    track(upstream);
    for (const [from, to] of [[client, upstream], [upstream, client]] as const) {
      from.on("data", (chunk) => {
        if (!cut) to.write(chunk);
      });
      from.on("end", () => {
        if (!cut) to.end();
      });
      from.on("close", () => {
        if (!cut) to.destroy();
      });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    address: `127.0.0.1:${port}`,
    connections: () => sockets.size / 2,
    cut: () => {
      cut = true;
    },
    close: () => {
      server.close();
      for (const socket of sockets) socket.destroy();
    },
  };
}

test("a watch stream whose connection went silent fails once a keepalive ping goes unanswered", { timeout: 60_000 }, async (t) => {
  const relay = await startRelay(serverAddress());
  const abort = new AbortController();
  try {
    // A table waiting for its fourth player: nothing happens on it, so the stream stays quiet.
    const direct = createTableServiceClient(serverAddress());
    const created = await direct.createTable(
      {
        table: {
          displayName: "keepalive",
          rules: { targetScore: TARGET_SCORE },
          seats: [1, 2, 3].map((seat) => ({ seat, occupant: SeatOccupant.BOT, botLevel: BotLevel.HEURISTIC })),
        },
        requestId: randomUUID(),
      },
      { timeoutMs: CALL_TIMEOUT_MS },
    );
    const name = must(must(created.view, "CreateTable view").table, "CreateTable table").name;

    const client = createTableServiceClient(relay.address, {
      pingIntervalMs: PING_INTERVAL_MS,
      pingTimeoutMs: PING_TIMEOUT_MS,
    });
    const stream = client.watchTable({ name }, { signal: abort.signal })[Symbol.asyncIterator]();
    const first = await stream.next();
    assert.equal(first.done, false);
    assert.equal(first.value.kind.case, "snapshot", "a spectator's stream starts with a snapshot");
    assert.equal(relay.connections(), 1, "the stream goes through the relay");

    relay.cut();
    const cutAt = performance.now();
    let timer: NodeJS.Timeout | undefined;
    const outcome = await Promise.race([
      (async () => {
        for (;;) {
          const next = await stream.next(); // whatever was still in flight, then the failure
          if (next.done) return new Error("the stream ended without an error");
        }
      })().catch((error: unknown) => error),
      new Promise<string>((resolve) => {
        timer = setTimeout(() => resolve("still waiting"), FAIL_WITHIN_MS);
      }),
    ]);
    clearTimeout(timer);
    const elapsedMs = Math.round(performance.now() - cutAt);
    t.diagnostic(`after the cut: ${outcome instanceof ConnectError ? `${Code[outcome.code]}: ${outcome.message}` : String(outcome)} in ${elapsedMs} ms`);
    assert.ok(outcome instanceof ConnectError, `the stream must fail with a ConnectError within ${FAIL_WITHIN_MS} ms of the cut, got: ${String(outcome)}`);
    assert.equal(outcome.code, Code.Unavailable);
    assert.ok(elapsedMs >= PING_INTERVAL_MS - 1_000, `failed after ${elapsedMs} ms: before any ping could go unanswered`);
  } finally {
    abort.abort();
    relay.close();
  }
});
