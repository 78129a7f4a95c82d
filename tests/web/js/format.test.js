// Actions and events as text (static/format.js), in the language the browser would choose:
// its localStorage and navigator stand in here as plain objects.
import assert from "node:assert/strict";
import { beforeEach, test } from "node:test";

const stored = new Map();
globalThis.localStorage = { getItem: (key) => stored.get(key) ?? null };
Object.defineProperty(globalThis, "navigator", {
  value: { language: "en-GB" },
  configurable: true,
});
const { actionText, eventText, suitWord } = await import("../../../server/web/static/format.js");

beforeEach(() => stored.clear());

const TEN = { suit: "SUIT_HEARTS", rank: "RANK_TEN" };

test("an event names its seat and card", () => {
  const played = { belote: { cardPlayed: { seat: 1, card: TEN } } };
  assert.equal(eventText("belote", played), "seat 1: 10♥");
  stored.set("bisca.language", "it");
  assert.equal(eventText("belote", played), "posto 1: 10♥");
});

test("a trick won counts from one and shows its points", () => {
  const won = { belote: { trickWon: { trickNumber: 2, winner: 3, points: 21 } } };
  assert.equal(eventText("belote", won), "trick 3 → seat 3 (21)");
});

test("an action reads as the card or the bid", () => {
  assert.equal(actionText("belote", { belote: { playCard: { card: TEN } } }), "10♥");
  assert.equal(actionText("belote", { belote: { pass: {} } }), "pass");
  assert.equal(actionText("belote", { belote: { take: { suit: "SUIT_SPADES" } } }), "take spades");
});

test("Bestia's clubs are bastoni", () => {
  assert.equal(suitWord("bestia", "SUIT_CLUBS"), "bastoni (clubs)");
  assert.equal(suitWord("belote", "SUIT_CLUBS"), "clubs");
});
