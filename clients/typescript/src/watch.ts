/**
 * A table's stream that resumes by itself, as docs/guide.md ("Disconnects") asks of every client:
 * the one loop each app would otherwise write around `watchTable`.
 *
 * When the stream drops with an error that says the server or the network failed (not the
 * request), it is opened again, after a backoff, with `afterSequence` set to the last stored
 * event delivered; events delivered already are skipped, so the app sees no gap and no duplicate.
 * A reaction or a presence change repeats the sequence of the event before it and is never sent
 * again by a resumed stream, so it is passed on as it comes; so is a heartbeat. A resumed stream
 * may start with a new snapshot (the server no longer holds the missed events): take it as the
 * current state. The iteration ends after a `tableDeleted` event, or quietly when `signal`
 * aborts; any other error is thrown (after `maxReconnects` failed attempts in a row, the last).
 */
import { Code } from "@connectrpc/connect";
import type { Client } from "@connectrpc/connect";
import { errorDetails } from "./errors.js";
import type { TableService, WatchTableResponse } from "./gen/hearts/v1/table_service_pb.js";

/** How {@link watchTableResumable} watches. */
export interface WatchOptions {
  /** Deliver only what follows this sequence (the last one the app has); unset: a snapshot first. */
  readonly afterSequence?: bigint;
  /** Headers of every attempt: `bearer(seatToken)` for a seat's own view and private events. */
  readonly headers?: Record<string, string>;
  /** Ask for a heartbeat whenever the stream has been quiet this long (5 to 600 s). */
  readonly heartbeatIntervalSeconds?: number;
  /** Hangs up: the iteration then ends without an error. */
  readonly signal?: AbortSignal;
  /** Failed attempts in a row before the error is thrown (default 5). */
  readonly maxReconnects?: number;
  /** The first wait before a new attempt, doubled each time up to 10 s, with jitter (default 200). */
  readonly backoffMs?: number;
}

const UNSTORED = new Set(["reaction", "presenceChanged"]);
// RESOURCE_EXHAUSTED reasons that are the caller's own limits: trying again at once does not help.
const NOT_NOW = new Set(["TOO_MANY_REACTIONS", "TOO_MANY_TABLES", "TOO_MANY_STREAMS_FROM_ADDRESS"]);

/** Whether a failed stream may be opened again: the server or the network failed, not the request. */
function resumable(error: unknown): boolean {
  const { code, reason } = errorDetails(error);
  switch (code) {
    case Code.Unavailable:
    case Code.DeadlineExceeded:
      return true;
    case Code.ResourceExhausted:
      return reason !== undefined && !NOT_NOW.has(reason); // none: a message over the size limit
    case Code.Canceled:
      return reason === undefined; // the server shed the call (a hang-up of ours is seen first)
    default:
      return false;
  }
}

function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
  });
}

/** The table's stream as `client.watchTable` gives it, resumed after failures; see the module. */
export async function* watchTableResumable(
  client: Client<typeof TableService>,
  name: string,
  options: WatchOptions = {},
): AsyncGenerator<WatchTableResponse, void, undefined> {
  const { headers, signal } = options;
  const limit = options.maxReconnects ?? 5;
  const heartbeat = options.heartbeatIntervalSeconds;
  let last = options.afterSequence;
  let failures = 0;
  for (;;) {
    try {
      const stream = client.watchTable(
        {
          name,
          ...(last === undefined ? {} : { afterSequence: last }),
          ...(heartbeat === undefined
            ? {}
            : {
                heartbeatInterval: {
                  seconds: BigInt(Math.floor(heartbeat)),
                  nanos: Math.round((heartbeat % 1) * 1e9),
                },
              }),
        },
        // No deadline: a stream runs for as long as the player watches.
        {
          timeoutMs: 0,
          ...(headers === undefined ? {} : { headers }),
          ...(signal === undefined ? {} : { signal }),
        },
      );
      for await (const message of stream) {
        failures = 0;
        if (message.kind.case === "event") {
          if (UNSTORED.has(message.kind.value.event.case ?? "")) {
            yield message; // unstored: repeats the sequence before it, never sent again
            continue;
          }
          if (last !== undefined && message.sequence <= last) continue; // delivered before
          last = message.sequence;
          yield message;
          if (message.kind.value.event.case === "tableDeleted") return;
        } else if (message.kind.case === "heartbeat") {
          yield message; // the sequence of the last event: nothing to keep
        } else {
          last = message.sequence; // a snapshot: the view as of this sequence
          yield message;
        }
      }
      return; // the server ended the stream (it does after tableDeleted)
    } catch (error) {
      if (signal?.aborted) return;
      failures += 1;
      if (!resumable(error) || failures > limit) throw error;
    }
    const first = options.backoffMs ?? 200;
    const delay = Math.min(10_000, first * 2 ** (failures - 1));
    await pause(delay * (0.5 + Math.random() / 2), signal);
    if (signal?.aborted) return;
  }
}
