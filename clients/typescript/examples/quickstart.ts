// Creates a table with three bots, joins the fourth seat, watches the table and plays until this
// seat has played one card. README.md shows this file; `npm run build` type-checks it and ci.sh
// runs it against a live server: node dist/examples/quickstart.js host:port
import {
  BotLevel,
  Code,
  SeatOccupant,
  type TableView,
  errorDetails,
  formatCard,
} from "@hearts/client";
import { createTableServiceClient } from "@hearts/client/node";

const client = createTableServiceClient(process.argv[2] ?? "127.0.0.1:50051");

// 1. Create a table: seats 1-3 are bots, seat 0 stays free; unset rules take the defaults.
const created = await client.createTable({
  table: {
    displayName: "Friday night",
    rules: { targetScore: 50 },
    seats: [1, 2, 3].map((seat) => ({
      seat,
      occupant: SeatOccupant.BOT,
      botLevel: BotLevel.HEURISTIC,
    })),
  },
  requestId: crypto.randomUUID(), // a retry with the same id does not create a second table
});
const name = created.view?.table?.name ?? "";

// 2. Join the free seat. The seat token is shown only once; send it with every move.
const joined = await client.joinTable({ name, playerDisplayName: "Ada" });
const asAda = { headers: { authorization: `Bearer ${joined.seatToken}` } }; // or bearer(token)

// 3. Watch the table: a snapshot of Ada's view first, then every event Ada may see, until Ada's
//    own card shows up. Hang up with an AbortSignal: leaving the loop does not end the call.
const hangUp = new AbortController();
const watching = (async () => {
  const stream = client.watchTable({ name }, { ...asAda, signal: hangUp.signal });
  for await (const message of stream) {
    const { kind } = message;
    if (kind.case === "event" && kind.value.event.case === "cardPlayed") {
      const { seat, card } = kind.value.event.value;
      console.log(`#${message.sequence}: seat ${seat} played ${card ? formatCard(card) : "?"}`);
      if (seat === joined.seat) return;
    }
  }
})().catch((error: unknown) => {
  if (errorDetails(error).code !== Code.Canceled) throw error; // Canceled: we hung up
});

// 4. Pass (the first round passes three cards), then play one legal card.
let view: TableView | undefined = joined.view;
if (view && view.cardsToPass > 0) {
  const cards = view.legalCards.slice(0, view.cardsToPass); // while passing: the hand
  view = (await client.passCards({ name, cards }, asAda)).view;
}
const card = view?.legalCards[0];
try {
  if (card) {
    view = (await client.playCard({ name, card }, asAda)).view;
    console.log(`Ada played ${formatCard(card)}; ${view?.hand.length} cards left`);
    await watching;
  }
} catch (error) {
  // A refused move says why (ErrorInfo) and what is legal now (MoveRejection).
  const { reason, moveRejection } = errorDetails(error);
  console.error(`refused: ${reason}; legal: ${moveRejection?.legalCards.map(formatCard)}`);
} finally {
  hangUp.abort();
}
