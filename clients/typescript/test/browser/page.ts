/**
 * The script of the browser test's page (index.html): in a real browser, from a page on another
 * origin than the gateway's, it plays a whole game with `@hearts/client/web` (the package's own
 * built output) and writes what happened into `<pre id="result">` as JSON:
 * `{ ok, protocol, seed, table, tricks, rounds, messages, totals, reason, forged }`, or
 * `{ ok: false, stage, code, reason, error }` when a step fails.
 *
 * URL parameters: `gateway` (the gateway's URL), `protocol` (`grpc-web` or `connect`), `seed`
 * (optional: the deck and the page's choices, to replay a failure).
 *
 * The checks are those of test/conformance.ts, which cannot run here (it uses node:test and
 * node:assert); both take the game's helpers from test/game.ts: play only what the seat's own view says is legal, one refused move and its error
 * details, the presence the watch stream starts with (the seat's own, connected; no bot's), every
 * trick and round score of the watch stream equal to GetTable's history, the final totals, and a
 * forged seat token refused as Unauthenticated.
 */
import { equals } from "@bufbuild/protobuf";
import {
  type Card,
  Code,
  ERROR_DOMAIN,
  type HeartsErrorDetails,
  Phase,
  type RoundScore,
  RoundScoreSchema,
  type TableView,
  type Trick,
  TrickSchema,
  type WatchTableResponse,
  bearer,
  errorDetails,
  sameCard,
} from "@hearts/client";
import { type WebProtocol, createTableServiceWebClient } from "@hearts/client/web";
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
} from "../game.js";

/** The step the page is at, reported when it fails. */
let stage = "start";

function check(condition: boolean, what: string): asserts condition {
  if (!condition) {
    throw new Error(`check failed: ${what}`);
  }
}

async function play(gateway: string, protocol: WebProtocol, seed: number) {
  const client = createTableServiceWebClient(gateway, { protocol });
  const random = seededRandom(seed);

  stage = "CreateTable"; // then JoinTable, in the same helper
  const { name, creatorToken, joined } = await createTableWithThreeBots(
    client,
    `browser ${protocol} ${seed}`,
    seed,
    "Browser",
  );
  check(joined.seat === 0, `joined seat ${joined.seat}, want the one free seat 0`);
  const asSeat = { headers: bearer(joined.seatToken), timeoutMs: CALL_TIMEOUT_MS };

  // The watch starts before the first move, so that every trick arrives as an event.
  stage = "WatchTable";
  const hangUp = new AbortController();
  const stream = client
    .watchTable({ name }, { headers: bearer(joined.seatToken), signal: hangUp.signal })
    [Symbol.asyncIterator]();
  const messages: WatchTableResponse[] = [];
  const first = await stream.next();
  check(!first.done && first.value.kind.case === "snapshot", "the watch stream starts with a snapshot");
  messages.push(first.value);
  // Right after the snapshot, the presence of each seat a player holds (never a bot's): here only
  // this seat's, connected, since this very stream is open.
  stage = "presence";
  const opening = await readOpeningPresence(stream, messages, [joined.seat]);
  check(opening.join(" ") === `${joined.seat}:true`, `the opening presence is [${opening.join(" ")}], want [${joined.seat}:true]`);
  stage = "WatchTable";
  const watching = collectUntilGameOver(stream, messages);
  watching.catch(() => undefined); // awaited below; only keeps an early failure from going unhandled

  stage = "play";
  let view: TableView = must(joined.view, "JoinTable view");
  let refusal: { legal: Card[]; details: HeartsErrorDetails } | undefined;
  for (let moves = 0; view.table?.phase !== Phase.GAME_OVER; moves++) {
    check(moves < 2000, "the game did not end after 2000 moves of this seat");
    if (view.cardsToPass > 0) {
      const choices = [...view.legalCards];
      const cards = Array.from({ length: view.cardsToPass }, () =>
        must(choices.splice(Math.floor(random() * choices.length), 1)[0], "a card to pass"),
      );
      view = must((await client.passCards({ name, cards, requestId: crypto.randomUUID() }, asSeat)).view, "view");
    } else if (view.legalCards.length > 0) {
      const legal = view.legalCards;
      const illegal = view.hand.find((card) => !legal.some((ok) => sameCard(ok, card)));
      if (refusal === undefined && illegal !== undefined) {
        stage = "illegal PlayCard";
        const etag = view.table?.etag;
        refusal = { legal, details: await failureOf(client.playCard({ name, card: illegal }, asSeat)) };
        const after = must((await client.getTable({ name }, asSeat)).view, "view");
        check(after.table?.etag === etag, "a refused move must not change the table");
        stage = "play";
      }
      const card = must(legal[Math.floor(random() * legal.length)], "a legal card");
      view = must((await client.playCard({ name, card, requestId: crypto.randomUUID() }, asSeat)).view, "view");
    } else {
      // Nothing owed yet (the bots are still to move): read the table again.
      await new Promise((resolve) => setTimeout(resolve, 50));
      view = must((await client.getTable({ name }, asSeat)).view, "view");
    }
  }

  stage = "game_over on the stream";
  const timer = setTimeout(() => hangUp.abort(), 10_000); // game_over is due at once
  try {
    await watching;
  } finally {
    clearTimeout(timer);
    hangUp.abort();
  }

  stage = "final GetTable";
  const final = must((await client.getTable({ name }, asSeat)).view, "final view");
  const table = must(final.table, "final table");

  stage = "the refused move";
  check(refusal !== undefined, "no turn of the game offered a card that was not legal");
  const { details } = refusal;
  check(details.code === Code.FailedPrecondition, `refused move: code ${Code[details.code]}: ${details.message}`);
  check(details.errorInfo?.domain === ERROR_DOMAIN, "refused move: ErrorInfo domain");
  check(details.errorInfo?.metadata["table"] === name, "refused move: ErrorInfo metadata names the table");
  const rejection = must(details.moveRejection, "MoveRejection detail");
  check(!!details.reason && rejection.reason === details.reason, "MoveRejection and ErrorInfo give one reason");
  check(cardsText(rejection.legalCards) === cardsText(refusal.legal), "MoveRejection lists the legal cards");

  stage = "the stream against GetTable";
  const tricks: Trick[][] = [[]];
  const scores: RoundScore[] = [];
  let totals: number[] | undefined;
  messages.slice(1).forEach((message, i) => {
    check(inSequence(must(messages[i], "message").sequence, message), "sequence numbers grow");
    check(message.kind.case === "event", "only the first message is a snapshot");
    const { event } = message.kind.value;
    const presence = presenceOf(message);
    if (presence !== undefined) {
      // No bot is ever reported, and this seat's stream stays open throughout.
      check(presence.seat === joined.seat && presence.connected, `presence_changed ${presence.seat}:${presence.connected}`);
    }
    if (event.case === "roundStarted") tricks.push([]);
    if (event.case === "trickWon") must(tricks.at(-1), "round").push(must(event.value.trick, "trick"));
    if (event.case === "roundScored") scores.push(must(event.value.score, "score"));
    if (event.case === "gameOver") totals = event.value.totalScores;
  });
  const rounds = final.scoreHistory.length;
  check(rounds >= 1 && tricks.length === rounds, `the stream has ${tricks.length} rounds, GetTable ${rounds}`);
  tricks.forEach((roundTricks, r) => {
    const history = must(final.gameHistory[r], `game_history[${r}]`).tricks;
    check(roundTricks.length === TRICKS_PER_ROUND, `round ${r + 1}: ${roundTricks.length} trick_won events`);
    check(
      roundTricks.map(trickText).join(" ") === history.map(trickText).join(" ") &&
        roundTricks.every((trick, i) => equals(TrickSchema, trick, must(history[i], "trick"))),
      `round ${r + 1}: the stream's tricks are GetTable's`,
    );
  });
  check(
    scores.length === rounds && scores.every((score, i) => equals(RoundScoreSchema, score, must(final.scoreHistory[i], "score"))),
    `round scores: stream [${scores.map(scoreText).join("; ")}], GetTable [${final.scoreHistory.map(scoreText).join("; ")}]`,
  );
  check(totals !== undefined && totals.join(",") === table.totalScores.join(","), `game_over totals ${totals} = GetTable's ${table.totalScores}`);
  check(Math.max(...table.totalScores) >= TARGET_SCORE, "the game ends at the target score");

  stage = "forged token";
  const token = joined.seatToken;
  const card = must(joined.view?.hand[0], "a card of the first hand");
  const forged: string[] = [];
  for (const bad of [token.slice(0, -1) + (token.endsWith("A") ? "B" : "A"), "forged-token"]) {
    const refused = await failureOf(client.playCard({ name, card }, { headers: bearer(bad), timeoutMs: CALL_TIMEOUT_MS }));
    check(refused.code === Code.Unauthenticated, `forged token: code ${Code[refused.code]}: ${refused.message}`);
    check(refused.reason === "TOKEN_INVALID", `forged token: reason ${refused.reason}`);
    check(refused.moveRejection === undefined, "an unauthenticated call is not a move");
    forged.push(`${Code[refused.code]}/${refused.reason}`);
  }

  stage = "DeleteTable";
  await client.deleteTable({ name, requestId: crypto.randomUUID() }, { headers: bearer(creatorToken), timeoutMs: CALL_TIMEOUT_MS });

  return {
    ok: true,
    protocol,
    seed,
    table: name,
    tricks: tricks.flat().length,
    rounds,
    messages: messages.length,
    totals: table.totalScores,
    reason: details.reason,
    forged,
  };
}

function report(result: object): void {
  const element = must(document.getElementById("result") ?? undefined, "#result");
  element.textContent = JSON.stringify(result, null, 2);
  element.dataset["state"] = "done";
}

const params = new URLSearchParams(location.search);
const gateway = params.get("gateway") ?? location.origin;
const protocol = params.get("protocol") ?? "grpc-web";
const seed = Number(params.get("seed") ?? Math.floor(Math.random() * 2 ** 31));
if (protocol !== "grpc-web" && protocol !== "connect") {
  report({ ok: false, stage, error: `unknown protocol ${protocol}` });
} else {
  play(gateway, protocol, seed).then(report, (error: unknown) => {
    const { code, reason, message } = errorDetails(error);
    report({ ok: false, protocol, seed, stage, code: Code[code], reason, error: message });
  });
}
