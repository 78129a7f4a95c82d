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
  handSummaryLines,
  meanText,
  reasonText,
  resultText,
  signed,
  suitWord,
  tableVoice,
  turnWords,
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

// Review 45b M3: a Bestia table as the person at it hears it.
const CUPS_ACE = { suit: "SUIT_CUPS", rank: "RANK_ACE" };
const SWORDS_SEVEN = { suit: "SUIT_SWORDS", rank: "RANK_SEVEN" };
const heard = (event, me = 0) =>
  eventText("bestia", { bestia: event }, ["", "greedy"], tableVoice("bestia", me));

test("the person's own Bestia moves are said in the second person, in Italian too", () => {
  const cases = [
    [{ declared: { seat: 0, declaration: "DECLARATION_OPEN" } }, "You open (batto).", "Batti."],
    [{ declared: { seat: 0, declaration: "DECLARATION_ASSIST" } }, "You assist.", "Vai in aiuto."],
    [{ declared: { seat: 0, declaration: "DECLARATION_PASS" } }, "You pass.", "Passi."],
    [{ blindMove: { seat: 0, move: "BLIND_BUIO" } }, "You raise blind (buio).", "Rilanci al buio."],
    [{ blindMove: { seat: 0, move: "BLIND_FOLD" } }, "You fold.", "Lasci."],
    [{ folded: { seat: 0 } }, "You leave the hand.", "Esci dalla smazzata."],
    [
      { trumpStolen: { seat: 0, card: CUPS_ACE } },
      "You steal the briscola asso of coppe (cups).",
      "Rubi la briscola asso di coppe.",
    ],
    [{ stealDeclined: { seat: 0 } }, "You do not steal the briscola.", "Non rubi la briscola."],
    [{ exchanged: { seat: 0, count: 0 } }, "You keep your cards.", "Tieni le tue carte."],
    [
      { discarded: { seat: 0, cards: [CUPS_ACE, SWORDS_SEVEN] } },
      "You discard asso of coppe (cups), seven of spade (swords).",
      "Scarti asso di coppe, sette di spade.",
    ],
    [
      { cardsDealt: { seat: 0, cards: [SWORDS_SEVEN] } },
      "You receive seven of spade (swords).",
      "Ricevi sette di spade.",
    ],
    [
      { antePaid: { seat: 0, amount: 10 } },
      "You pay 10 chips into the pot.",
      "Metti 10 gettoni nel piatto.",
    ],
  ];
  for (const [event, english, italian] of cases) {
    assert.equal(heard(event), english);
    stored.set("bisca.language", "it");
    assert.equal(heard(event), italian);
    stored.clear();
  }
  // Another seat: by its number, in the third person.
  assert.equal(
    heard({ declared: { seat: 2, declaration: "DECLARATION_OPEN" } }),
    "Seat 2 opens (batto).",
  );
});

test("exchanges are said by count, the person's cards by the private event that names them", () => {
  assert.equal(heard({ exchanged: { seat: 3, count: 2 } }), "Seat 3 changes 2 cards.");
  assert.equal(heard({ exchanged: { seat: 3, count: 0 } }), "Seat 3 keeps the cards.");
  // The person's own: "You discard …" follows (sent to the person alone), nothing said twice.
  assert.equal(heard({ exchanged: { seat: 0, count: 2 } }), "");
  assert.equal(heard({ dealerDiscarded: { seat: 0 } }), "");
  assert.equal(heard({ dealerDiscarded: { seat: 4 } }), "Seat 4 discards a card.");
});

test("a hand's end is heard with its summary, the person as 'you', no bot's name", () => {
  const ended = {
    handEnded: {
      result: {
        handNumber: 1,
        end: "HAND_END_SHOWDOWN",
        settlement: {
          opener: 1,
          openerMade: true,
          tricks: [0, 4, 0, 0],
          bestia: [-40, 0, 0, 0],
          net: [-40, 70, -15, -15],
        },
      },
    },
  };
  assert.equal(
    heard(ended),
    "Hand 2 is over. Seat 1 made the two tricks. Seat 1: 4 tricks." +
      " Seat 0 (you) went to bestia and pays 40 chips." +
      " Seat 0 (you): -40 chips. Seat 1: +70 chips. Seat 2: -15 chips. Seat 3: -15 chips.",
  );
  const voice = tableVoice("bestia", 0);
  const lines = handSummaryLines(ended.handEnded.result, voice.who);
  assert.ok(
    lines.every((line) => !line.includes("greedy")),
    lines,
  );
  // Without a voice (the replay, the live page): the event alone, as before.
  assert.equal(eventText("bestia", { bestia: ended }), "Hand 2 is over.");
});

test("a turn says what it asks: a discard, or Bestia's decision by its phase", () => {
  const discard = turnWords("bestia", "PHASE_DEALER_DISCARD", { cards: true, discard: true });
  assert.equal(discard.said, "Select a card to discard, then confirm.");
  assert.equal(discard.shown, discard.said);
  const rubata = turnWords("bestia", "PHASE_RUBATA", {});
  assert.equal(rubata.shown, "Rubata");
  assert.equal(
    rubata.said,
    "Rubata. The dealer may take the turned briscola and become the opener.",
  );
  stored.set("bisca.language", "it");
  assert.equal(
    turnWords("bestia", "PHASE_ASSISTING", {}).said,
    "Aiuto. Qualcuno ha battuto: vai in aiuto per impegnarti a fare 1 presa, o passa.",
  );
  stored.clear();
  // Belote's bids and cards, as before.
  assert.equal(
    turnWords("belote", "PHASE_BIDDING_ROUND_1", {}).said,
    "Select a bid, then confirm it.",
  );
  assert.equal(
    turnWords("bestia", "PHASE_PLAYING", { cards: true }).said,
    "Select a card, then confirm the play.",
  );
});
