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
const {
  actionText,
  cardName,
  dealSummary,
  decisionTiming,
  eventText,
  gameName,
  meanText,
  reasonText,
  resultText,
  signed,
  suitWord,
} = await import("../../../server/bisca/server/web/static/format.js");

beforeEach(() => stored.clear());

const TEN = { suit: "SUIT_HEARTS", rank: "RANK_TEN" };

test("an event names its seat and card", () => {
  const played = { belote: { cardPlayed: { seat: 1, card: TEN } } };
  assert.equal(eventText("belote", played), "seat 1 plays 10♥.");
  assert.equal(eventText("belote", played, ["a", "greedy"]), "seat 1 (greedy) plays 10♥.");
  stored.set("bisca.language", "it");
  assert.equal(eventText("belote", played), "posto 1 gioca 10♥.");
});

test("every kind of Bestia event is a sentence, in Italian too", () => {
  stored.set("bisca.language", "it");
  const events = [
    { handStarted: { handNumber: 0, dealer: 2 } },
    { antePaid: { seat: 1, amount: 10 } },
    { blindMove: { seat: 1, move: "BLIND_BUIO" } },
    { trumpStolen: { seat: 0, card: { suit: "SUIT_CUPS", rank: "RANK_ACE" } } },
    { stealDeclined: { seat: 0 } },
    { declared: { seat: 3, declaration: "DECLARATION_OPEN" } },
    { exchanged: { seat: 3, count: 2 } },
    { handEnded: { result: { handNumber: 0 } } },
    { potSplit: {} },
    { folded: { seat: 2 } },
  ];
  for (const event of events) {
    const text = eventText("bestia", { bestia: event });
    assert.match(text, /^[^{}]+\.$/, JSON.stringify(event));
    assert.doesNotMatch(text, /[{"]/);
  }
  assert.equal(
    eventText("bestia", { bestia: events[0] }),
    "Comincia la smazzata 1; distribuisce posto 2.",
  );
});

test("a card reads in words, and a reason in the page's language", () => {
  assert.equal(cardName("belote", { suit: "SUIT_SPADES", rank: "RANK_SEVEN" }), "seven of spades");
  const why = {
    code: "follow",
    args: { suit: "SUIT_SPADES" },
    reason: "spades was led: follow suit",
  };
  assert.equal(reasonText("belote", why), "spades was led, follow suit");
  assert.equal(reasonText("belote", { reason: "something new" }), "something new");
  stored.set("bisca.language", "it");
  assert.equal(reasonText("belote", why), "è uscito picche, rispondi al seme");
  assert.equal(cardName("bestia", { suit: "SUIT_CUPS", rank: "RANK_QUEEN" }), "cavallo di coppe");
});

test("a trick won counts from one and shows its points", () => {
  const won = {
    belote: { trickWon: { trickNumber: 2, winner: 3, points: 21 } },
  };
  assert.equal(eventText("belote", won), "seat 3 wins trick 3 (21 points).");
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

test("a game's enum name becomes its short name", () => {
  assert.equal(gameName("GAME_BESTIA"), "bestia");
  assert.equal(gameName(undefined), "");
});

test("a mean shows its sign, and its interval when known", () => {
  assert.equal(signed(1.25, 1), "+1.3");
  assert.equal(signed(-0.04, 2), "-0.04");
  assert.equal(meanText(2, null), "+2.0");
  assert.equal(meanText(1.5, 0.5), "+1.5 ± 0.5  [+1.0, +2.0]");
});

test("a result is the teams' scores for Belote, each seat's for Bestia", () => {
  const belote = {
    game: "GAME_BELOTE",
    results: [0, 1, 2, 3].map((seat) => ({ seat, score: seat % 2 ? 80 : 162 })),
  };
  assert.equal(resultText(belote), "162 – 80");
  const bestia = {
    game: "GAME_BESTIA",
    results: [
      { seat: 0, score: 5 },
      { seat: 1, score: -5 },
    ],
  };
  assert.equal(resultText(bestia), "0:5 1:-5");
  assert.equal(
    resultText({ game: "GAME_BELOTE", results: [], reason: "a bot left" }),
    "a bot left",
  );
});

test("a deal's end reads its points and its contract", () => {
  const deal = {
    cardPoints: [100, 62],
    belotePoints: [20, 0],
    contractMade: true,
    capot: false,
  };
  assert.equal(dealSummary(deal), "card points: 100 – 62 · Belote: 20 – 0 · contract made");
  const capot = { cardPoints: [162, 0], contractMade: false, capot: true };
  assert.equal(dealSummary(capot), "card points: 162 – 0 · Belote:  · contract failed · capot");
});

test("a decision's time is in milliseconds, the bank left in seconds", () => {
  assert.equal(
    decisionTiming({ usedUs: "1500", bankLeftUs: "2250000" }),
    "took 2 ms, bank left 2.3 s",
  );
});
