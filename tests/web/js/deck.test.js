// The decks and a card's short text (static/deck.js).
import assert from "node:assert/strict";
import { test } from "node:test";

import { cardLabel, deckOf } from "../../../server/bisca/server/web/static/deck.js";

test("a Belote card reads rank then suit symbol", () => {
  assert.equal(cardLabel("belote", { suit: "SUIT_HEARTS", rank: "RANK_TEN" }), "10♥");
  assert.equal(cardLabel("belote", { suit: "SUIT_CLUBS", rank: "RANK_JACK" }), "J♣");
});

test("a Bestia card reads rank, a space, the Italian suit", () => {
  assert.equal(cardLabel("bestia", { suit: "SUIT_CUPS", rank: "RANK_SEVEN" }), "7 coppe");
  assert.equal(cardLabel("bestia", { suit: "SUIT_CLUBS", rank: "RANK_KING" }), "R bastoni");
});

test("a card the deck does not hold reads as question marks", () => {
  assert.equal(cardLabel("belote", { suit: "SUIT_CUPS", rank: "RANK_TWO" }), "??");
});

test("clubs are drawn French in Belote and Italian in Bestia", () => {
  const french = deckOf("belote").mark("SUIT_CLUBS")("#000");
  const italian = deckOf("bestia").mark("SUIT_CLUBS")("#000");
  assert.match(french, /<circle/);
  assert.notEqual(french, italian);
  assert.deepEqual(Object.keys(deckOf("bestia").suits).length, 4);
});
