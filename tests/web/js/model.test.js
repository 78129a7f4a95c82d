// The table model folded from events (static/model.js).
import assert from "node:assert/strict";
import { test } from "node:test";

import { TableModel, oneof, sameCard } from "../../../server/bisca/server/web/static/model.js";

const event = (kind, body) => ({ event: { belote: { [kind]: body } } });
const TEN = { suit: "SUIT_HEARTS", rank: "RANK_TEN" };
const ACE = { suit: "SUIT_HEARTS", rank: "RANK_ACE" };

test("oneof names the field set, leaving the index out", () => {
  assert.deepEqual(oneof({ index: 3, belote: { pass: {} } }), ["belote", { pass: {} }]);
  assert.deepEqual(oneof(undefined), ["", {}]);
});

test("cards are the same by suit and rank", () => {
  assert.ok(sameCard(TEN, { ...TEN }));
  assert.ok(!sameCard(TEN, ACE));
});

test("a card played leaves the hand for the trick; a trick won clears it", () => {
  const model = new TableModel("belote", ["a", "b", "c", "d"], 0);
  model.apply(event("dealStarted", { dealer: 3 }));
  model.apply(event("cardsDealt", { seat: 0, cards: [TEN, ACE] }));
  assert.deepEqual(model.counts, [2, 5, 5, 5]);
  model.apply(event("cardPlayed", { seat: 0, card: TEN }));
  assert.deepEqual(model.hands[0], [ACE]);
  assert.deepEqual(model.trick, [{ seat: 0, card: TEN }]);
  assert.equal(model.toAct, 1);
  model.apply(event("trickWon", { winner: 2, trickNumber: 0 }));
  assert.deepEqual(model.trick, []);
  assert.deepEqual(model.lastTrick, [{ seat: 0, card: TEN }]);
  assert.deepEqual(model.tricksWon, [0, 0, 1, 0]);
  assert.equal(model.toAct, 2);
});

test("a bid that takes sets trump and the taker", () => {
  const model = new TableModel("belote", ["a", "b", "c", "d"], null);
  model.apply(event("bidMade", { seat: 1, suit: "SUIT_SPADES" }));
  assert.equal(model.trump, "SUIT_SPADES");
  assert.equal(model.taker, 1);
  assert.deepEqual(model.counts, [8, 8, 8, 8]);
});

test("an observation sets the seat's hand and the trick being played", () => {
  const observation = {
    belote: {
      toAct: 1,
      dealer: 0,
      hand: [ACE],
      trump: "SUIT_HEARTS",
      matchScores: [10, 20],
      tricks: [{ plays: [{ seat: 0, card: TEN }] }],
    },
  };
  const model = new TableModel("belote", ["a", "b", "c", "d"], 1).observe(observation, 1);
  assert.deepEqual(model.hands[1], [ACE]);
  assert.deepEqual(model.trick, [{ seat: 0, card: TEN }]);
  assert.deepEqual(model.scores, [10, 20]);
  assert.deepEqual(model.counts, [7, 8, 8, 8]);
});

test("a Bestia match's end clears the pot: the pot of a hand never played is nobody's", () => {
  const bestia = (kind, body) => ({ event: { bestia: { [kind]: body } } });
  const model = new TableModel("bestia", ["a", "b", "c", "d"], 0);
  model.apply(bestia("handEnded", { result: { pot: 40, balances: [10, -10, 0, 0] } }));
  assert.equal(model.pot, 40);
  model.apply(bestia("matchEnded", { balances: [30, -10, -10, -10] }));
  assert.equal(model.pot, null);
  assert.equal(model.over, true);
  assert.deepEqual(model.balances, [30, -10, -10, -10]);
});
