/**
 * watchTableResumable against a live Hearts server (HEARTS_SERVER, as scripts/with-server.sh sets
 * it): a stream cut twice mid-game resumes to the same events, in order, without gaps or repeats;
 * a refused stream is not retried; hanging up ends the iteration quietly.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  Code,
  ConnectError,
  type TableServiceClient,
  type WatchTableResponse,
  bearer,
  errorDetails,
  watchTableResumable,
} from "@hearts/client";
import { createTableServiceClient } from "@hearts/client/node";
import { CALL_TIMEOUT_MS, createTableWithThreeBots, must } from "./game.js";

function serverAddress(): string {
  const address = process.env["HEARTS_SERVER"];
  if (!address) throw new Error("HEARTS_SERVER is not set; run the test via scripts/with-server.sh");
  return address;
}

/** `client`, whose first watch streams fail with UNAVAILABLE after `cuts[i]` messages. */
function cutting(client: TableServiceClient, cuts: number[]): { client: TableServiceClient; opened: number[] } {
  const opened: number[] = [];
  const watchTable: TableServiceClient["watchTable"] = (request, options) => {
    const cut = cuts[opened.length];
    opened.push(Number(request.afterSequence ?? -1n));
    const inner = client.watchTable(request, options);
    if (cut === undefined) return inner;
    return (async function* () {
      let sent = 0;
      for await (const message of inner) {
        if (sent === cut) throw new ConnectError("the connection dropped (test)", Code.Unavailable);
        sent += 1;
        yield message;
      }
    })();
  };
  return { client: { ...client, watchTable }, opened };
}

/** Stored messages (snapshot and events, not presence or reactions) up to `until`. */
async function storedUntil(stream: AsyncIterable<WatchTableResponse>, until: bigint): Promise<bigint[]> {
  const sequences: bigint[] = [];
  for await (const message of stream) {
    const kind = message.kind.case === "event" ? message.kind.value.event.case : message.kind.case;
    if (kind === "presenceChanged" || kind === "reaction" || kind === "heartbeat") continue;
    sequences.push(message.sequence);
    if (message.sequence >= until) break;
  }
  return sequences;
}

test("a stream cut twice resumes to the same events, without gaps or repeats", { timeout: 60_000 }, async () => {
  const client = createTableServiceClient(serverAddress());
  const { name, joined } = await createTableWithThreeBots(client, "resumable watch", 11, "Ada");
  const asSeat = { headers: bearer(joined.seatToken), timeoutMs: CALL_TIMEOUT_MS };
  let view = must(joined.view, "JoinTable view");
  view = must((await client.passCards({ name, cards: view.legalCards.slice(0, view.cardsToPass) }, asSeat)).view, "pass");
  for (let move = 0; move < 6 && view.legalCards.length > 0; move++) {
    view = must((await client.playCard({ name, card: view.legalCards[0] }, asSeat)).view, "play");
  }
  const last = view.sequence;
  assert.ok(last > 10n, `enough events to cut: ${last}`);

  const abort = new AbortController();
  try {
    const reference = await storedUntil(
      client.watchTable({ name, afterSequence: 0n }, { headers: bearer(joined.seatToken), signal: abort.signal }),
      last,
    );
    // Strictly increasing, ending at the last move (other seats' private events are skipped).
    assert.ok(reference.every((sequence, i) => i === 0 || sequence > reference[i - 1]!), `${reference}`);
    assert.equal(reference.at(-1), last);
    const flaky = cutting(client, [4, 3]);
    const resumed = await storedUntil(
      watchTableResumable(flaky.client, name, {
        afterSequence: 0n,
        headers: bearer(joined.seatToken),
        signal: abort.signal,
        backoffMs: 10,
      }),
      last,
    );
    assert.deepEqual(resumed, reference);
    assert.equal(flaky.opened.length, 3, "two cuts, two resumes");
    assert.ok(flaky.opened[1]! > 0 && flaky.opened[2]! > flaky.opened[1]!, `resumed after: ${flaky.opened}`);
  } finally {
    abort.abort();
  }
});

test("a refused stream is not opened again", { timeout: 30_000 }, async () => {
  const flaky = cutting(createTableServiceClient(serverAddress()), []);
  const stream = watchTableResumable(flaky.client, "tables/0000nosuchtable00000000", { backoffMs: 10 });
  await assert.rejects(
    (async () => {
      for await (const _ of stream) {
        // nothing comes
      }
    })(),
    (error) => errorDetails(error).code === Code.NotFound,
  );
  assert.equal(flaky.opened.length, 1);
});

test("hanging up ends the iteration without an error", { timeout: 30_000 }, async () => {
  const client = createTableServiceClient(serverAddress());
  const { name } = await createTableWithThreeBots(client, "hang up", 12, "Ada");
  const abort = new AbortController();
  const received: WatchTableResponse[] = [];
  for await (const message of watchTableResumable(client, name, { signal: abort.signal })) {
    received.push(message);
    abort.abort();
  }
  assert.equal(received[0]?.kind.case, "snapshot");
});
