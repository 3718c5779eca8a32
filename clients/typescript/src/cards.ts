/**
 * Card notation of the project (rank then suit: `2C`, `TD`, `QS`, `AH`) for typed `Card` values.
 *
 * The API carries cards as `Card { suit, rank }`; this text form is only for people: logs, test
 * output, scripted deals. It never replaces the typed value on the wire.
 */
import { create } from "@bufbuild/protobuf";
import { type Card, CardSchema, Rank, Suit } from "./gen/hearts/v1/table_pb.js";

const RANK_LETTERS: ReadonlyMap<Rank, string> = new Map([
  [Rank.TWO, "2"],
  [Rank.THREE, "3"],
  [Rank.FOUR, "4"],
  [Rank.FIVE, "5"],
  [Rank.SIX, "6"],
  [Rank.SEVEN, "7"],
  [Rank.EIGHT, "8"],
  [Rank.NINE, "9"],
  [Rank.TEN, "T"],
  [Rank.JACK, "J"],
  [Rank.QUEEN, "Q"],
  [Rank.KING, "K"],
  [Rank.ACE, "A"],
]);

const SUIT_LETTERS: ReadonlyMap<Suit, string> = new Map([
  [Suit.CLUBS, "C"],
  [Suit.DIAMONDS, "D"],
  [Suit.HEARTS, "H"],
  [Suit.SPADES, "S"],
]);

function invert<K, V>(map: ReadonlyMap<K, V>): ReadonlyMap<V, K> {
  return new Map([...map].map(([key, value]) => [value, key]));
}

const RANKS_BY_LETTER = invert(RANK_LETTERS);
const SUITS_BY_LETTER = invert(SUIT_LETTERS);

/** The card as text, for example `formatCard(card) === "QS"`; throws if suit or rank is unset. */
export function formatCard(card: Card): string {
  const rank = RANK_LETTERS.get(card.rank);
  const suit = SUIT_LETTERS.get(card.suit);
  if (rank === undefined || suit === undefined) {
    throw new RangeError(`not a card: suit ${card.suit}, rank ${card.rank}`);
  }
  return rank + suit;
}

/**
 * The card written as `text`: a rank (`2`-`9`, `T` or `10`, `J`, `Q`, `K`, `A`) then a suit
 * (`C`, `D`, `H`, `S`), in either case, as the other clients read it: `parseCard("QS")`,
 * `parseCard("10d")`. Throws on anything else.
 */
export function parseCard(text: string): Card {
  // ASCII letters only: toUpperCase would read "ſ" (U+017F) as "S".
  let upper = text.replace(/[a-z]/g, (letter) => letter.toUpperCase());
  if (upper.length === 3 && upper.startsWith("10")) upper = "T" + upper.slice(2);
  const rank = upper.length === 2 ? RANKS_BY_LETTER.get(upper[0] ?? "") : undefined;
  const suit = upper.length === 2 ? SUITS_BY_LETTER.get(upper[1] ?? "") : undefined;
  if (rank === undefined || suit === undefined) {
    throw new SyntaxError(`not a card: ${JSON.stringify(text)} (write rank then suit, like "QS")`);
  }
  return create(CardSchema, { suit, rank });
}

/** Whether two cards are the same card. */
export function sameCard(a: Card, b: Card): boolean {
  return a.suit === b.suit && a.rank === b.rank;
}
