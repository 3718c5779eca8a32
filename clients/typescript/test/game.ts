/**
 * What the conformance game needs in Node (conformance.ts) and in a browser (browser/page.ts):
 * the settings of the game, the seeded choices, a table with three bots and the seat joined, the
 * watch stream read to game_over, the presence messages it starts with and the order its messages
 * must keep, and the texts that failure messages compare. It imports nothing from Node, so that
 * the browser test's page can bundle it; failures here throw plain errors.
 */
import {
  BotLevel,
  type Card,
  type HeartsErrorDetails,
  type RoundScore,
  SeatOccupant,
  type TableServiceClient,
  type Trick,
  type WatchTableResponse,
  errorDetails,
  formatCard,
} from "@hearts/client";

export const CALL_TIMEOUT_MS = 15_000;
// Low enough for a fast game, high enough for several rounds (and pass directions) most of the time.
export const TARGET_SCORE = 50;
export const TRICKS_PER_ROUND = 13;

/** mulberry32: a small seeded generator, so that a failing game can be played again. */
export function seededRandom(state: number): () => number {
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

export function must<T>(value: T | undefined, what: string): T {
  if (value === undefined) {
    throw new Error(`${what} is missing`);
  }
  return value;
}

export function cardsText(cards: readonly Card[]): string {
  return cards.map(formatCard).join(" ");
}

export function trickText(trick: Trick): string {
  const cards = trick.cards.map((played) => `${played.seat}:${formatCard(must(played.card, "card"))}`);
  return `trick ${trick.number} led by ${trick.leader} [${cards.join(" ")}] won by ${trick.winner} for ${trick.points}`;
}

export function scoreText(score: RoundScore): string {
  return `round ${score.roundNumber}: points ${score.points.join(",")} totals ${score.totalScores.join(",")}`;
}

/** The details of the error `call` fails with; throws if the call succeeds. */
export async function failureOf(call: Promise<unknown>): Promise<HeartsErrorDetails> {
  try {
    await call;
  } catch (error) {
    return errorDetails(error);
  }
  throw new Error("the call succeeded, but it should have failed");
}

/** A table with heuristic bots in seats 1 to 3 and the deck of `seed`, and seat 0 joined. */
export async function createTableWithThreeBots(
  client: TableServiceClient,
  displayName: string,
  seed: number,
  player: string,
) {
  const created = await client.createTable(
    {
      table: {
        displayName,
        rules: { targetScore: TARGET_SCORE },
        seats: [1, 2, 3].map((seat) => ({
          seat,
          occupant: SeatOccupant.BOT,
          botLevel: BotLevel.HEURISTIC,
        })),
        deckSeed: BigInt(seed),
      },
      requestId: crypto.randomUUID(),
    },
    { timeoutMs: CALL_TIMEOUT_MS },
  );
  const name = must(must(created.view, "CreateTable view").table, "CreateTable table").name;
  const joined = await client.joinTable(
    { name, playerDisplayName: player, requestId: crypto.randomUUID() },
    { timeoutMs: CALL_TIMEOUT_MS },
  );
  return { name, creatorToken: created.creatorToken, joined };
}

/** Every message of a watch stream up to and including the game_over event. */
export async function collectUntilGameOver(
  stream: AsyncIterator<WatchTableResponse>,
  messages: WatchTableResponse[],
): Promise<void> {
  for (;;) {
    const next = await stream.next();
    if (next.done) {
      throw new Error(`the watch stream ended before game_over, after ${messages.length} messages`);
    }
    messages.push(next.value);
    const { kind } = next.value;
    if (kind.case === "event" && kind.value.event.case === "gameOver") {
      return;
    }
  }
}

/**
 * Whether a watch stream may deliver `message` after a message numbered `last`: numbers grow,
 * except that an unstored message (a reaction, a presence change, a heartbeat), which has no
 * number of its own, repeats the number of the event before it.
 */
export function inSequence(last: bigint, message: WatchTableResponse): boolean {
  const { sequence, kind } = message;
  const unstored =
    kind.case === "heartbeat" ||
    (kind.case === "event" && (kind.value.event.case === "reaction" || kind.value.event.case === "presenceChanged"));
  return sequence > last || (sequence === last && unstored);
}

/** The seat and connection a presence_changed message reports; undefined for any other message. */
export function presenceOf(message: WatchTableResponse): { seat: number; connected: boolean } | undefined {
  const { kind } = message;
  if (kind.case !== "event" || kind.value.event.case !== "presenceChanged") {
    return undefined;
  }
  const { seat, connected } = kind.value.event.value;
  return { seat, connected };
}

/**
 * Reads the presence messages a watch stream starts with, right after its snapshot (pushed onto
 * `messages`, whose last is the snapshot): one for each seat of `humanSeats` (the seats players
 * hold; bots are never reported), each numbered as the snapshot. Returns `seat:connected` texts in
 * seat order, for comparisons and failure messages.
 */
export async function readOpeningPresence(
  stream: AsyncIterator<WatchTableResponse>,
  messages: WatchTableResponse[],
  humanSeats: readonly number[],
): Promise<string[]> {
  const snapshot = must(messages.at(-1), "the snapshot");
  const opening: { seat: number; connected: boolean }[] = [];
  for (const _ of humanSeats) {
    const next = await stream.next();
    if (next.done) {
      throw new Error(`the watch stream ended before its presence messages, after ${messages.length} messages`);
    }
    messages.push(next.value);
    const presence = presenceOf(next.value);
    if (presence === undefined || next.value.sequence !== snapshot.sequence) {
      throw new Error(
        `after the snapshot (sequence ${snapshot.sequence}) came ${next.value.kind.case} ` +
          `${next.value.kind.case === "event" ? next.value.kind.value.event.case : ""} with sequence ` +
          `${next.value.sequence}; want presence_changed for each of seats ${humanSeats.join(",")}, numbered as the snapshot`,
      );
    }
    opening.push(presence);
  }
  const seats = opening.map(({ seat }) => seat).sort((a, b) => a - b);
  if (seats.join(",") !== [...humanSeats].sort((a, b) => a - b).join(",")) {
    throw new Error(`the opening presence messages report seats ${seats.join(",")}, want the players' seats ${humanSeats.join(",")}`);
  }
  return opening.sort((a, b) => a.seat - b.seat).map(({ seat, connected }) => `${seat}:${connected}`);
}
