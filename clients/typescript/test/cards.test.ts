/** Card notation: every card of the deck round-trips, and malformed text is refused. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { Rank, Suit, formatCard, parseCard } from "@hearts/client";

test("every card of the deck formats and parses back", () => {
  const texts = [];
  for (const suit of [Suit.CLUBS, Suit.DIAMONDS, Suit.HEARTS, Suit.SPADES]) {
    for (let rank = Rank.TWO; rank <= Rank.ACE; rank++) {
      const text = formatCard({ $typeName: "hearts.v1.Card", suit, rank });
      assert.deepEqual(parseCard(text), { $typeName: "hearts.v1.Card", suit, rank });
      texts.push(text);
    }
  }
  assert.equal(new Set(texts).size, 52);
  assert.equal(formatCard(parseCard("QS")), "QS");
});

test("either case and 10 for T are read, as the other clients read them", () => {
  assert.equal(formatCard(parseCard("qs")), "QS");
  assert.equal(formatCard(parseCard("10D")), "TD");
  assert.equal(formatCard(parseCard("10h")), "TH");
  assert.equal(formatCard(parseCard("td")), "TD");
});

test("text that is not rank then suit is refused", () => {
  for (const text of ["", "Q", "SQ", "1C", "10", "100C", "QSS", " QS", "Q♠", "Qſ"]) {
    assert.throws(() => parseCard(text), SyntaxError, text);
  }
});
