/**
 * The conformance tests of the TypeScript client, for any transport: a whole game played against
 * a live Hearts server, the watch stream checked against the final table, the error details of
 * a refused move and of a forged token read back, a rematch of the finished game (refused
 * while it is still in play), a player's reactions on another seat's watch stream (limited, and
 * changing nothing), an identity token naming its player on the seat, a signed-in player's
 * tables listed (ListPlayerTables) and its seat found again from a new device, and four QuickJoin
 * callers seated together at one game, played out. conformance.test.ts runs them over gRPC against
 * the server itself; web.test.ts over gRPC-Web and Connect through hearts-gateway.
 *
 * The test plays only what its own view says is legal (legal_cards, cards_to_pass); it never
 * computes the rules itself. Its choices and the deck come from one seed, printed in the test name
 * so that a failure can be replayed with HEARTS_TEST_SEED=<seed>.
 */
import assert from "node:assert/strict";
import { createHmac, randomInt, randomUUID } from "node:crypto";
import { test } from "node:test";
import { equals } from "@bufbuild/protobuf";
import {
  BotLevel,
  type Card,
  Code,
  ERROR_DOMAIN,
  type HeartsErrorDetails,
  Phase,
  Reaction,
  type RoundScore,
  RoundScoreSchema,
  SeatOccupant,
  type TableEvent,
  type TableView,
  type Trick,
  TrickSchema,
  type WatchTableResponse,
  bearer,
  formatCard,
  sameCard,
} from "@hearts/client";
import type { TableServiceClient } from "@hearts/client";
import {
  CALL_TIMEOUT_MS,
  TARGET_SCORE,
  TRICKS_PER_ROUND,
  cardsText,
  collectUntilGameOver,
  createTableWithThreeBots,
  failureOf,
  inSequence,
  must,
  presenceOf,
  readOpeningPresence,
  scoreText,
  seededRandom,
  trickText,
} from "./game.js";

const MOVE_REASONS = new Set([
  "MUST_FOLLOW_SUIT",
  "NOT_YOUR_TURN",
  "CARD_NOT_IN_HAND",
  "MUST_LEAD_TWO_OF_CLUBS",
  "NO_POINTS_ON_FIRST_TRICK",
  "HEARTS_NOT_BROKEN",
  "WRONG_PASS_COUNT",
  "DUPLICATE_CARD",
  "ALREADY_PASSED",
  "WRONG_PHASE",
  "GAME_OVER",
]);

// The quick game's target score, which no other test asks for: the four QuickJoin callers of one
// test must not sit down at another test's table.
const QUICK_TARGET_SCORE = 30;

const seed = Number(process.env["HEARTS_TEST_SEED"] ?? Math.floor(Math.random() * 2 ** 31));

/**
 * Registers the conformance tests for clients that `newClient` makes (one a test), under the
 * name of their `protocol`.
 */
export function conformanceTests(protocol: string, newClient: () => TableServiceClient): void {
  test(`${protocol}: a seat plays a whole game against three heuristic bots (seed ${seed})`, { timeout: 180_000 }, async (t) => {
    const client = newClient();
    const random = seededRandom(seed);
    const { name, joined } = await createTableWithThreeBots(
      client,
      `TypeScript conformance (${protocol}) ${seed}`,
      seed,
      "TypeScript conformance",
    );
    const seat = joined.seat;
    const asSeat = { headers: bearer(joined.seatToken), timeoutMs: CALL_TIMEOUT_MS };
    const seats = must(joined.view?.table, "JoinTable table").seats;
    assert.deepEqual(
      seats.map((s) => [s.seat, SeatOccupant[s.occupant], BotLevel[s.botLevel]]),
      [[0, "HUMAN", "UNSPECIFIED"], [1, "BOT", "HEURISTIC"], [2, "BOT", "HEURISTIC"], [3, "BOT", "HEURISTIC"]],
    );
    assert.equal(seat, 0, "the one free seat");

    // Watch as the seat before the first move, so that every trick of the game arrives as an event.
    // Hanging up needs the signal: leaving the iterator does not end the call, and an open call
    // keeps Node from exiting.
    const abort = new AbortController();
    t.after(() => abort.abort());
    const stream = client
      .watchTable({ name }, { headers: bearer(joined.seatToken), signal: abort.signal })
      [Symbol.asyncIterator]();
    const first = await stream.next();
    assert.ok(!first.done, "the watch stream ended before its snapshot");
    const messages: WatchTableResponse[] = [first.value];
    assert.equal(first.value.kind.case, "snapshot", "the first message of a watch is a snapshot");
    const snapshot = first.value.kind.value as TableView;
    assert.equal(snapshot.viewerSeat, seat);
    assert.equal(snapshot.table?.roundNumber, 1);
    assert.equal(snapshot.completedTricks.length, 0, "no trick is played before the seat passes");
    assert.equal(first.value.sequence, snapshot.sequence);
    assert.equal(cardsText(snapshot.hand), cardsText(must(joined.view, "JoinTable view").hand));
    // Right after the snapshot, the presence of each seat a player holds (never a bot's), numbered
    // as the snapshot: here only this seat's, connected, since this very stream is open.
    assert.deepEqual(await readOpeningPresence(stream, messages, [seat]), [`${seat}:true`], "the opening presence");
    const watching = collectUntilGameOver(stream, messages);
    watching.catch(() => undefined); // Awaited below; this only keeps an early failure from going unhandled.

    // (5) A rematch before game over is refused.
    const early = await failureOf(client.rematchTable({ name, requestId: randomUUID() }, asSeat));
    assert.equal(early.code, Code.FailedPrecondition, early.message);
    assert.equal(early.errorInfo?.domain, ERROR_DOMAIN);
    assert.equal(early.reason, "GAME_NOT_OVER");

    let view = must(joined.view, "JoinTable view");
    let refusal: { card: Card; legal: Card[]; etag: string; details: HeartsErrorDetails } | undefined;
    for (let moves = 0; view.table?.phase !== Phase.GAME_OVER; moves++) {
      assert.ok(moves < 2000, "the game did not end after 2000 moves of this seat");
      if (view.cardsToPass > 0) {
        // While passing, legal_cards holds the cards this seat may choose its passes from.
        const choices = [...view.legalCards];
        assert.ok(choices.length >= view.cardsToPass, `${view.cardsToPass} to pass from [${cardsText(choices)}]`);
        const cards = Array.from({ length: view.cardsToPass }, () =>
          must(choices.splice(Math.floor(random() * choices.length), 1)[0], "card to pass"),
        );
        view = must((await client.passCards({ name, cards, requestId: randomUUID() }, asSeat)).view, "view");
      } else if (view.legalCards.length > 0) {
        const legal = view.legalCards;
        const illegal = view.hand.find((card) => !legal.some((ok) => sameCard(ok, card)));
        if (refusal === undefined && illegal !== undefined) {
          const details = await failureOf(client.playCard({ name, card: illegal }, asSeat));
          refusal = { card: illegal, legal, etag: view.table?.etag ?? "", details };
          const after = must((await client.getTable({ name }, asSeat)).view, "view");
          assert.equal(after.table?.etag, refusal.etag, "a refused move must not change the table");
        }
        let card = must(legal[Math.floor(random() * legal.length)], "legal card");
        let etag = "";
        if (moves % 4 === 0) {
          // (6) SuggestMove: one legal card, decided on this version of the table, changing nothing.
          const hint = await client.suggestMove({ name }, asSeat);
          assert.equal(hint.etag, view.table?.etag, "a suggestion is made on the current table");
          assert.equal(hint.cards.length, 1, "a play suggests one card");
          card = must(hint.cards[0], "suggested card");
          assert.ok(legal.some((ok) => sameCard(ok, card)), `suggested ${cardsText([card])} of [${cardsText(legal)}]`);
          etag = hint.etag;
        }
        view = must((await client.playCard({ name, card, etag, requestId: randomUUID() }, asSeat)).view, "view");
      } else {
        // This seat owes nothing yet (bots that think off the request); read the table again.
        await new Promise((resolve) => setTimeout(resolve, 50));
        view = must((await client.getTable({ name }, asSeat)).view, "view");
      }
    }

    const timer = setTimeout(() => abort.abort(), 10_000); // game_over is due at once
    try {
      await watching;
    } finally {
      clearTimeout(timer);
      abort.abort();
    }
    const final = must((await client.getTable({ name }, asSeat)).view, "final view");
    const table = must(final.table, "final table");
    t.diagnostic(`table ${name}, seat ${seat}, ${messages.length} stream messages`);
    t.diagnostic(`final totals ${table.totalScores.join(",")} after ${final.scoreHistory.length} rounds`);

    // (4) The refused move: code, ErrorInfo and MoveRejection, read from the trailer's details.
    assert.ok(refusal, "no turn of the game offered a card that was not legal");
    const { details } = refusal;
    t.diagnostic(`refused ${formatCard(refusal.card)}: ${details.reason} (${details.message})`);
    assert.equal(details.code, Code.FailedPrecondition, details.message);
    assert.equal(details.errorInfo?.domain, ERROR_DOMAIN);
    assert.ok(MOVE_REASONS.has(details.reason ?? ""), `unexpected reason ${details.reason}`);
    assert.equal(details.errorInfo?.metadata["table"], name, "ErrorInfo metadata names the table");
    const rejection = must(details.moveRejection, "MoveRejection detail");
    assert.equal(rejection.reason, details.reason, "MoveRejection and ErrorInfo give one reason");
    assert.equal(cardsText(rejection.legalCards), cardsText(refusal.legal));
    assert.equal(rejection.cardsToPass, 0);

    // (3) The stream: growing sequence numbers, one snapshot, every trick and score in order.
    const sequences = messages.map((message) => message.sequence);
    messages.slice(1).forEach((message, i) => {
      assert.ok(inSequence(sequences[i]!, message), `sequence numbers must grow: ${sequences.join(",")}`);
    });
    const events: TableEvent[] = messages.slice(1).map((message) => {
      assert.equal(message.kind.case, "event", "only the first message is a snapshot here");
      return message.kind.value as TableEvent;
    });
    let round = 1;
    const tricks: Trick[][] = [[]];
    const scores: RoundScore[] = [];
    const handsDealt: number[] = [];
    let gameOver: { totalScores: number[]; result: unknown } | undefined;
    for (const { event } of events) {
      switch (event.case) {
        case "roundStarted":
          assert.equal(event.value.roundNumber, round + 1, "rounds start in order");
          round = event.value.roundNumber;
          tricks.push([]);
          break;
        case "trickWon":
          tricks[round - 1]!.push(must(event.value.trick, "trick_won trick"));
          break;
        case "roundScored":
          scores.push(must(event.value.score, "round_scored score"));
          break;
        case "gameOver":
          gameOver = { totalScores: event.value.totalScores, result: event.value.result };
          break;
        case "handDealt":
          assert.equal(event.value.seat, seat, "a stream carries only its own seat's hand");
          assert.equal(event.value.cards.length, TRICKS_PER_ROUND);
          handsDealt.push(round);
          break;
        case "cardsPassed":
        case "cardsReceived":
          assert.equal(event.value.seat, seat, "a stream carries only its own seat's passes");
          break;
        case "presenceChanged":
          // No bot is ever reported, and this seat's stream stays open throughout.
          assert.deepEqual([event.value.seat, event.value.connected], [seat, true], "presence_changed of the one player");
          break;
        default:
          break;
      }
    }
    const rounds = final.scoreHistory.length;
    assert.ok(rounds >= 1);
    assert.equal(tricks.length, rounds, "the stream's rounds are the table's rounds");
    assert.deepEqual(handsDealt, Array.from({ length: rounds - 1 }, (_, i) => i + 2));
    assert.equal(final.gameHistory.length, rounds, "game_history holds every round once over");
    tricks.forEach((roundTricks, index) => {
      const numbers = roundTricks.map((trick) => trick.number);
      assert.deepEqual(numbers, Array.from({ length: TRICKS_PER_ROUND }, (_, i) => i + 1),
        `round ${index + 1}: 13 trick_won events, numbered in order`);
      const history = must(final.gameHistory[index], `game_history[${index}]`).tricks;
      assert.deepEqual(roundTricks.map(trickText), history.map(trickText), `round ${index + 1} tricks`);
      roundTricks.forEach((trick, i) => assert.ok(equals(TrickSchema, trick, history[i]!)));
    });
    assert.deepEqual(scores.map(scoreText), final.scoreHistory.map(scoreText), "round scores, in order");
    scores.forEach((score, i) => assert.ok(equals(RoundScoreSchema, score, final.scoreHistory[i]!)));
    const over = must(gameOver, "game_over event");
    assert.deepEqual(over.totalScores, table.totalScores, "game_over totals are GetTable's totals");
    assert.deepEqual(over.totalScores, scores.at(-1)?.totalScores, "the last round's totals are final");
    assert.deepEqual(over.result, table.result);
    assert.ok(Math.max(...table.totalScores) >= TARGET_SCORE, "the game ends at the target score");

    // (5) The rematch: the seat's token of the finished table seats it at the same seat of a new
    // table, and each table names the other.
    const rematch = await client.rematchTable({ name, requestId: randomUUID() }, asSeat);
    const next = must(must(rematch.view, "RematchTable view").table, "RematchTable table");
    t.diagnostic(`rematch of ${name} at ${next.name}`);
    assert.equal(rematch.seat, seat, "a rematch keeps the seat");
    assert.equal(rematch.view?.viewerSeat, seat);
    assert.ok(rematch.seatToken !== "" && rematch.seatToken !== joined.seatToken, "a new seat token");
    assert.ok(next.name.startsWith("tables/") && next.name !== name, `a new table, not ${next.name}`);
    assert.equal(next.rematchOf, name, "the new table names the finished one");
    const finished = must((await client.getTable({ name }, asSeat)).view?.table, "finished table");
    assert.equal(finished.rematchTable, next.name, "the finished table names its rematch");
  });

  test(`${protocol}: a forged seat token is refused as TOKEN_INVALID (seed ${seed})`, { timeout: 60_000 }, async () => {
    const client = newClient();
    const { name, creatorToken, joined } = await createTableWithThreeBots(
      client,
      `TypeScript forged token (${protocol}) ${seed}`,
      seed,
      "TypeScript conformance",
    );
    const card = must(must(joined.view, "JoinTable view").hand[0], "a card in hand");
    const token = joined.seatToken;
    // The real token with its last character changed (its signature no longer matches), and one
    // that was never a token at all.
    const tampered = token.slice(0, -1) + (token.endsWith("A") ? "B" : "A");
    for (const forged of [tampered, "forged-token"]) {
      const details = await failureOf(
        client.playCard({ name, card }, { headers: bearer(forged), timeoutMs: CALL_TIMEOUT_MS }),
      );
      assert.equal(details.code, Code.Unauthenticated, details.message);
      assert.equal(details.errorInfo?.domain, ERROR_DOMAIN);
      assert.equal(details.reason, "TOKEN_INVALID");
      assert.equal(details.moveRejection, undefined, "an unauthenticated call is not a move");
    }

    // The creator token deletes the table; afterwards it is not found.
    await client.deleteTable({ name, requestId: randomUUID() }, { headers: bearer(creatorToken), timeoutMs: CALL_TIMEOUT_MS });
    const gone = await failureOf(client.getTable({ name }, { timeoutMs: CALL_TIMEOUT_MS }));
    assert.equal(gone.code, Code.NotFound, gone.message);
    assert.equal(gone.reason, "TABLE_NOT_FOUND");
  });

  // Two players and two bots. Seat 1's stream starts with both players' presence (seat 0 has no
  // stream open, seat 1 this one), and reports seat 0's first stream opening and its last closing.
  // While seat 1 watches, seat 0 sends five reactions: each reaches seat 1's stream, in order,
  // numbered as the table's last event (a reaction is not stored, so it repeats the number of the
  // event before it), and the table's etag and sequence stay as they were. A sixth within the
  // window is TOO_MANY_REACTIONS; the creator token, which has no seat, is NOT_A_PLAYER. Deleting
  // the table ends the stream, whose order (inSequence) holds throughout.
  test(`${protocol}: a reaction reaches another seat's stream and changes nothing (seed ${seed})`, { timeout: 60_000 }, async (t) => {
    const client = newClient();
    const created = await client.createTable(
      {
        table: {
          displayName: `TypeScript reactions (${protocol}) ${seed}`,
          seats: [2, 3].map((seat) => ({ seat, occupant: SeatOccupant.BOT, botLevel: BotLevel.HEURISTIC })),
          deckSeed: BigInt(seed),
        },
        requestId: randomUUID(),
      },
      { timeoutMs: CALL_TIMEOUT_MS },
    );
    const name = must(created.view?.table, "CreateTable table").name;
    const asCreator = { headers: bearer(created.creatorToken), timeoutMs: CALL_TIMEOUT_MS };
    const join = async (seat: number) => {
      const joined = await client.joinTable(
        { name, seat, playerDisplayName: `TypeScript reactions ${seat}`, requestId: randomUUID() },
        { timeoutMs: CALL_TIMEOUT_MS },
      );
      return joined.seatToken;
    };
    const sender = 0;
    const senderToken = await join(sender);
    const asSender = { headers: bearer(senderToken), timeoutMs: CALL_TIMEOUT_MS };
    const watcherToken = await join(1); // the fourth seat: the first round is dealt

    // The snapshot shows that the stream is open (the server subscribes before it reads the
    // table): a reaction reaches only the streams open when it is sent.
    const abort = new AbortController();
    t.after(() => abort.abort());
    const stream = client
      .watchTable({ name }, { headers: bearer(watcherToken), signal: abort.signal })
      [Symbol.asyncIterator]();
    const next = async (what: string) => {
      const result = await stream.next();
      assert.ok(!result.done, `the watch stream ended before ${what}`);
      return result.value;
    };
    const messages = [await next("its snapshot")];
    assert.equal(messages[0]?.kind.case, "snapshot", "the first message of a watch is a snapshot");
    assert.deepEqual(await readOpeningPresence(stream, messages, [sender, 1]), [`${sender}:false`, "1:true"],
      "the opening presence: seat 0 has no stream open, seat 1 this one");
    // Presence changes, kept apart from the game's messages: the next one that is not presence.
    const nextOfGame = async (what: string) => {
      for (;;) {
        const message = await next(what);
        messages.push(message);
        if (presenceOf(message) === undefined) {
          return message;
        }
      }
    };

    // Seat 0's first stream opens, then closes (its last): seat 1's stream is told both.
    const senderAbort = new AbortController();
    t.after(() => senderAbort.abort());
    const senderStream = client
      .watchTable({ name }, { headers: bearer(senderToken), signal: senderAbort.signal })
      [Symbol.asyncIterator]();
    const senderFirst = await senderStream.next();
    assert.equal(senderFirst.done ? "end" : senderFirst.value.kind.case, "snapshot", "seat 0's stream starts");
    const opened = await next("seat 0's stream is reported");
    messages.push(opened);
    assert.deepEqual(presenceOf(opened), { seat: sender, connected: true }, "seat 0's first stream opened");
    senderAbort.abort();
    const closed = await next("seat 0's stream is reported closed");
    messages.push(closed);
    assert.deepEqual(presenceOf(closed), { seat: sender, connected: false }, "seat 0's last stream closed");

    const before = must((await client.getTable({ name }, asSender)).view, "view");

    const sent = [Reaction.THUMBS_UP, Reaction.CLAP, Reaction.LAUGH, Reaction.WOW, Reaction.WAVE];
    for (const reaction of sent) {
      await client.sendReaction({ name, reaction }, asSender);
    }
    const tooMany = await failureOf(client.sendReaction({ name, reaction: Reaction.THINKING }, asSender));
    assert.equal(tooMany.code, Code.ResourceExhausted, tooMany.message);
    assert.equal(tooMany.errorInfo?.domain, ERROR_DOMAIN);
    assert.equal(tooMany.reason, "TOO_MANY_REACTIONS", "a sixth reaction within the window");
    const notAPlayer = await failureOf(client.sendReaction({ name, reaction: Reaction.THINKING }, asCreator));
    assert.equal(notAPlayer.code, Code.PermissionDenied, notAPlayer.message);
    assert.equal(notAPlayer.errorInfo?.domain, ERROR_DOMAIN);
    assert.equal(notAPlayer.reason, "NOT_A_PLAYER", "a reaction with the creator token");

    for (const _ of sent) {
      await nextOfGame("the reactions");
    }
    const after = must((await client.getTable({ name }, asSender)).view, "view");
    assert.deepEqual([after.table?.etag, after.sequence], [before.table?.etag, before.sequence], "reactions change nothing");

    await client.deleteTable({ name, requestId: randomUUID() }, asCreator);
    const deleted = await nextOfGame("table_deleted");
    assert.ok((await stream.next()).done, "the stream ends after table_deleted");
    assert.equal(deleted.kind.case === "event" && deleted.kind.value.event.case, "tableDeleted");

    const sequences = messages.map((message) => message.sequence);
    messages.slice(1).forEach((message, i) => {
      assert.ok(inSequence(sequences[i]!, message), `message ${i + 1} out of order: sequences ${sequences.join(",")}`);
    });
    const reactions = messages.slice(1, -1).filter((message) => presenceOf(message) === undefined).map(({ sequence, kind }) => {
      const event = kind.case === "event" ? kind.value.event : undefined;
      return event?.case === "reaction"
        ? [sequence, event.value.seat, Reaction[event.value.reaction]]
        : [sequence, event?.case ?? kind.case];
    });
    assert.deepEqual(
      reactions,
      sent.map((reaction) => [before.sequence, sender, Reaction[reaction]]),
      "seat 0's reactions, in order, each with the number of the table's last event",
    );
  });

  // An identity token (a JWT an app's backend signs) names the player on the seat. The server's
  // secret comes as HEARTS_IDENTITY_SECRET (scripts/with-server.sh sets it); without it, skipped.
  const identitySecret = process.env["HEARTS_IDENTITY_SECRET"];
  test(`${protocol}: an identity token names the player on its seat (seed ${seed})`, { timeout: 60_000, skip: !identitySecret }, async () => {
    const client = newClient();
    const secret = must(identitySecret, "HEARTS_IDENTITY_SECRET");
    const player = `ts-player-${seed}-${randomUUID()}`;
    const created = await client.createTable(
      { table: { displayName: `TypeScript identity (${protocol}) ${seed}` }, requestId: randomUUID() },
      { timeoutMs: CALL_TIMEOUT_MS },
    );
    const name = must(created.view?.table, "CreateTable table").name;
    const join = (identityToken: string, seat?: number) =>
      client.joinTable(
        { name, seat, playerDisplayName: "TypeScript conformance", identityToken, requestId: randomUUID() },
        { timeoutMs: CALL_TIMEOUT_MS },
      );
    const first = await join(signIdentity(secret, player), 1);
    assert.equal(first.seat, 1);
    assert.equal(must(first.view?.table, "JoinTable table").seats[1]?.playerId, player);
    // The same player again (another device), without a seat: the same seat.
    const again = await join(signIdentity(secret, player));
    assert.equal(again.seat, 1, "the player's seat, found by identity");
    // A token signed with another secret.
    const forged = await failureOf(join(signIdentity(`${secret}-not`, "someone-else")));
    assert.equal(forged.code, Code.Unauthenticated, forged.message);
    assert.equal(forged.reason, "IDENTITY_INVALID");
    await client.deleteTable(
      { name, requestId: randomUUID() },
      { headers: bearer(created.creatorToken), timeoutMs: CALL_TIMEOUT_MS },
    );
  });

  // ListPlayerTables: a signed-in player of its own (a random subject, so that no other test,
  // protocol or run on the same server adds to its list) takes a seat at two tables with its
  // identity token: a game with three bots, which deals the round, and then an unlisted table
  // that waits for players. The list holds exactly those two, the newer first, each with the
  // player's seat. On a "new device" (JoinTable with only the identity token) the game's seat
  // comes back, with a token that reads the seat's hand; once the player leaves the waiting table,
  // before its game starts, the table is no longer listed. Without an identity token (a seat token
  // names one seat of one table, not a player) the call is IDENTITY_REQUIRED.
  test(`${protocol}: a signed-in player finds its tables again, newest first (seed ${seed})`, { timeout: 60_000, skip: !identitySecret }, async () => {
    const client = newClient();
    const secret = must(identitySecret, "HEARTS_IDENTITY_SECRET");
    const player = `ts-player-${seed}-${randomUUID()}`;
    const identityToken = signIdentity(secret, player);
    const options = { timeoutMs: CALL_TIMEOUT_MS };
    const join = (name: string, seat?: number) =>
      client.joinTable(
        { name, seat, playerDisplayName: "TypeScript conformance", identityToken, requestId: randomUUID() },
        options,
      );
    const myTables = async () => (await client.listPlayerTables({ identityToken }, options)).tables;

    const gameSeat = 2;
    const game = await client.createTable(
      {
        table: {
          displayName: `TypeScript player tables (${protocol}) ${seed}`,
          rules: { targetScore: TARGET_SCORE },
          seats: [0, 1, 3].map((seat) => ({ seat, occupant: SeatOccupant.BOT, botLevel: BotLevel.HEURISTIC })),
          deckSeed: BigInt(seed),
        },
        requestId: randomUUID(),
      },
      options,
    );
    const gameName = must(game.view?.table, "CreateTable table").name;
    const dealt = await join(gameName, gameSeat);
    const hand = must(dealt.view, "JoinTable view").hand;
    assert.equal(dealt.seat, gameSeat);
    assert.equal(hand.length, TRICKS_PER_ROUND, "the fourth seat taken deals the round");
    const waitingSeat = 1;
    const waiting = await client.createTable(
      { table: { displayName: `TypeScript player tables (${protocol}) ${seed}`, unlisted: true }, requestId: randomUUID() },
      options,
    );
    const waitingName = must(waiting.view?.table, "CreateTable table").name;
    const seated = await join(waitingName, waitingSeat);

    const listed = await myTables();
    assert.deepEqual(
      listed.map(({ table, seat }) => [table?.name, seat, table?.unlisted, table?.seats[seat]?.playerId]),
      [[waitingName, waitingSeat, true, player], [gameName, gameSeat, false, player]],
      "the player's two tables, the newer first, each with the player's seat",
    );

    // A new device: the identity token alone, no seat, no seat token.
    const renewed = await join(gameName);
    assert.equal(renewed.seat, gameSeat, "the player's seat, found by identity");
    assert.ok(renewed.seatToken !== "", "a seat token for it");
    const asNewDevice = { ...options, headers: bearer(renewed.seatToken) };
    const view = must((await client.getTable({ name: gameName }, asNewDevice)).view, "view");
    assert.equal(view.viewerSeat, gameSeat);
    assert.equal(cardsText(view.hand), cardsText(hand), "the new token reads the seat's hand");

    // Leaving the waiting table before its game starts takes it off the list.
    await client.leaveTable({ name: waitingName, requestId: randomUUID() }, { ...options, headers: bearer(seated.seatToken) });
    assert.deepEqual(
      (await myTables()).map(({ table, seat }) => [table?.name, seat]),
      [[gameName, gameSeat]],
      "the table left is no longer listed",
    );

    // Only an identity token names a player: a seat token as authorization does not.
    const anonymous = await failureOf(client.listPlayerTables({}, asNewDevice));
    assert.equal(anonymous.code, Code.Unauthenticated, anonymous.message);
    assert.equal(anonymous.errorInfo?.domain, ERROR_DOMAIN);
    assert.equal(anonymous.reason, "IDENTITY_REQUIRED");

    for (const { name, creatorToken } of [
      { name: gameName, creatorToken: game.creatorToken },
      { name: waitingName, creatorToken: waiting.creatorToken },
    ]) {
      await client.deleteTable({ name, requestId: randomUUID() }, { ...options, headers: bearer(creatorToken) });
    }
  });

  // Four players ask QuickJoin for the same game at once. The rules (QUICK_TARGET_SCORE) are no
  // other test's, and the turn timeout is random to the millisecond, so that no other test,
  // protocol or run on the same server asks for this game and sits down with these four. The
  // server deals a quick game's deck at random: the seed replays only the test's own choices.
  test(`${protocol}: four QuickJoin callers are seated together and play the game out (seed ${seed})`, { timeout: 180_000 }, async (t) => {
    const client = newClient();
    const random = seededRandom(seed);
    const timeoutMs = randomInt(600_000, 1_200_000);
    const requests = [0, 1, 2, 3].map((i) => ({
      rules: { targetScore: QUICK_TARGET_SCORE },
      turnTimeout: { seconds: BigInt(Math.floor(timeoutMs / 1000)), nanos: (timeoutMs % 1000) * 1_000_000 },
      playerDisplayName: `TypeScript quick ${i}`,
      requestId: randomUUID(),
    }));
    const joined = await Promise.all(requests.map((request) => client.quickJoin(request, { timeoutMs: CALL_TIMEOUT_MS })));
    const name = must(joined[0]?.view?.table, "QuickJoin table").name;
    t.diagnostic(`table ${name}, target score ${QUICK_TARGET_SCORE}, turn timeout ${timeoutMs} ms`);
    assert.deepEqual(joined.map((response) => response.view?.table?.name), [name, name, name, name], "one table");
    assert.deepEqual(joined.map((response) => response.seat).sort((a, b) => a - b), [0, 1, 2, 3], "four different seats");
    joined.forEach((response) => {
      assert.ok(response.seatToken !== "", "a seat token");
      assert.equal(response.view?.viewerSeat, response.seat, "the view is the seat's own");
    });
    const bySeat = (seat: number) => joined.findIndex((r) => r.seat === seat); // every seat is someone's (checked above)
    const asSeat = (seat: number) => ({ headers: bearer(joined[bySeat(seat)]!.seatToken), timeoutMs: CALL_TIMEOUT_MS });

    // The fourth join started the game; any seat now sees it passing, with what was asked for.
    let table = must((await client.getTable({ name }, asSeat(0))).view?.table, "GetTable table");
    assert.equal(Phase[table.phase], "PASSING", "the game starts with the fourth player");
    assert.equal(table.rules?.targetScore, QUICK_TARGET_SCORE);
    const timeout = must(table.turnTimeout, "turn_timeout");
    assert.equal(Number(timeout.seconds) * 1000 + timeout.nanos / 1_000_000, timeoutMs);
    assert.deepEqual(
      table.seats.map((s) => [s.seat, SeatOccupant[s.occupant], s.playerDisplayName]),
      [0, 1, 2, 3].map((seat) => [seat, "HUMAN", requests[bySeat(seat)]!.playerDisplayName]),
    );

    // A retry, now that the table is full and the next caller would get another one, answers with
    // the first call's table and seat.
    const again = await Promise.all(requests.map((request) => client.quickJoin(request, { timeoutMs: CALL_TIMEOUT_MS })));
    assert.deepEqual(
      again.map((response) => [response.view?.table?.name, response.seat]),
      joined.map((response) => [name, response.seat]),
      "a retry gets the same table and seat",
    );

    // Play: every seat that still owes its pass, then the seat whose turn it is, each choosing
    // from what its own view offers.
    let moves = 0;
    for (; table.phase !== Phase.GAME_OVER; moves++) {
      assert.ok(moves < 2000, "the game did not end after 2000 moves");
      const seat = table.phase === Phase.PASSING
        ? table.seats.findIndex((s) => !s.hasPassed)
        : must(table.turnSeat, "turn_seat while playing");
      assert.ok(seat >= 0, "the table is passing, but every seat has passed");
      const options = asSeat(seat);
      const view = must((await client.getTable({ name }, options)).view, "view");
      const choices = [...view.legalCards];
      const pick = () => must(choices.splice(Math.floor(random() * choices.length), 1)[0], "a legal card");
      if (view.cardsToPass > 0) {
        const cards = Array.from({ length: view.cardsToPass }, pick);
        table = must((await client.passCards({ name, cards, requestId: randomUUID() }, options)).view?.table, "table");
      } else {
        assert.ok(choices.length > 0, `seat ${seat} owes a move but its view offers none`);
        const card = pick();
        table = must((await client.playCard({ name, card, requestId: randomUUID() }, options)).view?.table, "table");
      }
    }
    t.diagnostic(`game over after ${table.roundNumber} rounds and ${moves} moves, totals ${table.totalScores.join(",")}`);
    assert.ok(Math.max(...table.totalScores) >= QUICK_TARGET_SCORE, "the game ends at the target score");
  });
}

/** An HS256 JWT for `subject`, valid for an hour, as an app's backend signs it. */
function signIdentity(secret: string, subject: string): string {
  const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString("base64url");
  const signing = `${encode({ alg: "HS256", typ: "JWT" })}.${encode({ sub: subject, exp: Math.floor(Date.now() / 1000) + 3600 })}`;
  return `${signing}.${createHmac("sha256", secret).update(signing).digest("base64url")}`;
}
