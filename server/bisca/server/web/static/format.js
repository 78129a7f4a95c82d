// Actions and events as the words of a line of text, with no DOM.
import { cardLabel as deckLabel } from "./deck.js";
import { t } from "./i18n.js";
import { oneof } from "./model.js";

export function suitWord(game, suit) {
  return t(game === "bestia" && suit === "SUIT_CLUBS" ? "suit.SUIT_CLUBS.bestia" : `suit.${suit}`);
}

// A card in words: "seven of spades", "fante di coppe".
export function cardName(game, card) {
  const face = `rank.${card.rank}.bestia`;
  const rank = game === "bestia" && t(face) !== face ? t(face) : t(`rank.${card.rank}`);
  return t("card.of", { rank, suit: suitWord(game, card.suit) });
}

// The referee's reason in the page's language: its code and arguments when the server sent
// them (suits translated), else the referee's own words.
export function reasonText(game, why) {
  if (!why) return "";
  if (typeof why === "string") return why;
  if (!why.code) return why.reason || "";
  const args = Object.fromEntries(
    Object.entries(why.args || {}).map(([k, v]) => [k, suitWord(game, v)]),
  );
  const key = `why.${why.code}`;
  const text = t(key, args);
  return text === key ? why.reason || "" : text;
}

// An action in the page's words; `words`: its cards named in words ("seven of spades"), as a
// screen reader says them, rather than by their marks ("7♠").
export function actionText(game, action, { words = false } = {}) {
  const [, inner] = oneof(action);
  const [kind, value] = oneof(inner);
  const cardLabel = words ? cardName : deckLabel;
  switch (kind) {
    case "playCard":
      return cardLabel(game, value.card);
    case "pass":
      return t(game === "bestia" ? "b.pass" : "t.pass");
    case "take":
      return t("t.take", { suit: suitWord(game, value.suit) });
    case "exchange": {
      const cards = value.discards || [];
      return cards.length
        ? t("b.exchange", { cards: cards.map((c) => cardLabel(game, c)).join(words ? ", " : " ") })
        : t("b.standpat");
    }
    case "discard":
      return t("b.discard", { card: cardLabel(game, value.card) });
    case "raise":
    case "call":
    case "fold":
    case "steal":
    case "open":
    case "assist":
      return t(`b.${kind}`);
    default:
      return kind;
  }
}

// "seat 2 (greedy)" when the names are known, "seat 2" otherwise.
export function seatText(n, names) {
  const bot = names && names[n ?? 0];
  return bot ? t("t.seatname", { n: n ?? 0, bot }) : t("t.seat", { n: n ?? 0 });
}

// How a person at the table hears the other seats: by their place around it ("your partner",
// "the opponent on your left": the seat after the person's is drawn on its left), else by
// number (Bestia's tables of up to seven). The bots' generated names are left to the eye.
export function tableVoice(game, me) {
  const roles = { 1: "r.left", 2: "r.partner", 3: "r.right" };
  return {
    me,
    who: (seat) => {
      const n = seat ?? 0;
      if (n === me) return `${t("t.seat", { n })} (${t("t.you")})`; // third-person sentences
      const role = game === "belote" && roles[(n - me + 4) % 4];
      return role ? t(role) : t("t.seat", { n });
    },
  };
}

// The line said to a person who comes back to its table (a reload): where the game stands
// in `model` and whose turn it is, the seats as `voice` (tableVoice) says them ("Back at the
// table: hand 2, trick 4; your turn.").
export function backText(model, voice) {
  const where = [
    t(model.game === "belote" ? "p.back.deal" : "p.back.hand", { n: (model.handNumber ?? 0) + 1 }),
  ];
  const tricks = model.tricksWon.reduce((sum, won) => sum + won, 0);
  if (model.phase === "PHASE_PLAYING" || model.trick.length || tricks)
    where.push(t("p.back.trick", { n: tricks + 1 }));
  else if (model.phase) where.push(t(`phase.${model.phase}`).toLowerCase());
  const values = { where: where.join(", ") };
  if (model.toAct === null) return t("p.back.where", values);
  const turn =
    model.toAct === voice.me ? t("p.back.you") : t("p.back.other", { who: voice.who(model.toAct) });
  return t("p.back", { ...values, turn });
}

// An event as a sentence in the page's language. With a `voice` (tableVoice), as the person
// at the table hears it: the cards in words, the seats by their place, the person's own
// events in the second person ("You play the seven of spades.").
export function eventText(game, event, names, voice = null) {
  const text = eventWords(game, event, names, voice);
  return voice ? text.charAt(0).toUpperCase() + text.slice(1) : text;
}

function eventWords(game, event, names, voice) {
  const [, inner] = oneof(event);
  const [kind, e] = oneof(inner);
  const who = (n) => (voice ? voice.who(n) : seatText(n, names));
  const cardWords = (g, card) => (voice ? cardName(g, card) : deckLabel(g, card));
  // Cards in words are told apart by commas ("seven of cups, fante of swords").
  const cards = (list) => (list || []).map((c) => cardWords(game, c)).join(voice ? ", " : " ");
  const mine = (seat) => voice && (seat ?? 0) === voice.me;
  // The person's own event, where its sentence has a second person (`KEY.you`).
  const say = (key, values, seat) => {
    const yours = `${key}.you`;
    return mine(seat) && t(yours) !== yours ? t(yours, values) : t(key, values);
  };
  switch (kind) {
    case "dealStarted":
      return t("e.deal", { n: (e.dealNumber ?? 0) + 1, who: who(e.dealer) });
    case "handStarted":
      return t("e.hand", { n: (e.handNumber ?? 0) + 1, who: who(e.dealer) });
    case "cardsDealt":
      return e.cards && e.cards.length
        ? say("e.dealt", { who: who(e.seat), cards: cards(e.cards) }, e.seat)
        : t("e.dealtn", { who: who(e.seat) });
    case "cardTurned":
      return t("e.turned", { card: cardWords(game, e.card) });
    case "trumpTurned":
      return t("e.briscola", { card: cardWords(game, e.card) });
    case "bidMade":
      return e.suit
        ? say("e.take", { who: who(e.seat), suit: suitWord(game, e.suit) }, e.seat)
        : say("e.pass", { who: who(e.seat) }, e.seat);
    case "dealVoided":
      return t("e.void");
    case "cardPlayed":
      return say("e.plays", { who: who(e.seat), card: cardWords(game, e.card) }, e.seat);
    case "beloteAnnounced":
      return say(
        e.announcement === "ANNOUNCEMENT_REBELOTE" ? "e.rebelote" : "e.belote",
        { who: who(e.seat) },
        e.seat,
      );
    case "trickWon":
      return e.points !== undefined && game === "belote"
        ? say(
            "e.trick",
            { who: who(e.winner), n: (e.trickNumber ?? 0) + 1, points: e.points },
            e.winner,
          )
        : say("e.trickb", { who: who(e.winner), n: (e.trickNumber ?? 0) + 1 }, e.winner);
    case "dealScored":
      return t("e.scored", {
        a: (e.matchScores || [])[0] ?? 0,
        b: (e.matchScores || [])[1] ?? 0,
      });
    case "matchEnded":
      return t("e.end");
    case "antePaid":
      return say("e.ante", { who: who(e.seat), chips: e.amount ?? 0 }, e.seat);
    case "handDealt":
      return t("e.handdealt");
    case "blindMove":
      return say(`e.blind.${e.move}`, { who: who(e.seat) }, e.seat);
    case "folded":
      return say("e.folded", { who: who(e.seat) }, e.seat);
    case "trumpStolen":
      return say("e.stolen", { who: who(e.seat), card: cardWords(game, e.card) }, e.seat);
    case "stealDeclined":
      return say("e.nosteal", { who: who(e.seat) }, e.seat);
    case "handLooked":
      return t("e.looked", { who: who(e.seat) });
    case "declared":
      return say(`e.decl.${e.declaration}`, { who: who(e.seat) }, e.seat);
    case "exchanged":
      // The person's own cards changed are said by the `discarded` sent to it alone, next.
      if (mine(e.seat) && e.count) return "";
      return e.count
        ? t("e.exchanged", { who: who(e.seat), n: e.count })
        : say("e.standpat", { who: who(e.seat) }, e.seat);
    case "discarded":
      return say("e.discarded", { who: who(e.seat), cards: cards(e.cards) }, e.seat);
    case "stockRefilled":
      return t("e.refilled");
    case "cardBurnt":
      return t("e.burnt", { card: cardWords(game, e.card) });
    case "dealerDiscarded":
      // The person's own discard is said, card and all, by the `discarded` that follows.
      return mine(e.seat) ? "" : t("e.dealerdiscarded", { who: who(e.seat) });
    case "handEnded": {
      const ended = t("e.handended", { n: ((e.result || {}).handNumber ?? 0) + 1 });
      if (!voice || !e.result) return ended;
      // Heard as well as seen: who took the pot, who went to bestia, the chips.
      const lines = handSummaryLines(e.result, who).map((line) => sentence(line));
      return [ended, ...lines].join(" ");
    }
    case "potSplit":
      return t("e.potsplit");
    default:
      return t("e.other");
  }
}

// `text` as a sentence of its own: its first letter capital, a full stop at its end.
function sentence(text) {
  const capital = text.charAt(0).toUpperCase() + text.slice(1);
  return /[.!?]$/.test(capital) ? capital : `${capital}.`;
}

// A Bestia hand's end, line by line: how it ended, who took what, who went to bestia, the
// chips; `who(seat)` names a seat (tableVoice's `who` at the person's table).
export function handSummaryLines(result, who) {
  const lines = [];
  const end = result.end;
  if (end === "HAND_END_VOID") lines.push(t("h.void"));
  else if (end === "HAND_END_UNOPPOSED")
    lines.push(t("h.unopposed", { who: who(result.taker ?? 0) }));
  else if (end === "HAND_END_LONE_SURVIVOR")
    lines.push(t("h.survivor", { who: who(result.taker ?? 0) }));
  const settlement = result.settlement;
  if (settlement) {
    const opener = settlement.opener ?? 0;
    lines.push(t(settlement.openerMade ? "h.made" : "h.failed", { who: who(opener) }));
    (settlement.tricks || []).forEach((n, seat) => {
      if (Number(n) > 0) lines.push(t("h.tricks", { who: who(seat), n }));
    });
    (settlement.bestia || []).forEach((chips, seat) => {
      if (Number(chips) !== 0)
        lines.push(t("h.bestia", { who: who(seat), chips: Math.abs(Number(chips)) }));
    });
    (settlement.net || []).forEach((chips, seat) => {
      lines.push(t("h.net", { who: who(seat), chips: signed(Number(chips), 0) }));
    });
  }
  return lines;
}

// What the person's turn asks, as the prompt shows it (`shown`) and as it is announced
// (`said`): a card to play, one to discard, cards to exchange, or a bid. Bestia's bids are
// different decisions (steal the briscola, raise blind, open, assist…): each is said by its
// phase's name and help, the prompt names the phase (its help is shown under it).
export function turnWords(game, phase, { cards = false, discard = false, exchange = false }) {
  const both = (key) => ({ shown: t(key), said: t(key) });
  if (exchange) return both("p.choose");
  if (discard) return both("p.discard");
  if (cards) return both("t.help");
  const help = `help.${phase}`;
  if (game !== "bestia" || !phase || t(help) === help) return both("p.select");
  const name = t(`phase.${phase}`);
  return { shown: name, said: t("p.decision", { phase: name, help: t(help) }) };
}

// "belote" for the enum name "GAME_BELOTE" (an empty name: "").
export function gameName(enumName) {
  return (enumName || "").replace("GAME_", "").toLowerCase();
}

// A number with its sign, to `digits` decimals: "+1.5", "-0.3".
export function signed(x, digits) {
  return `${x >= 0 ? "+" : ""}${x.toFixed(digits)}`;
}

// A mean result, with its 95% confidence interval when there is one: "+1.5 ± 0.5  [+1.0, +2.0]".
export function meanText(mean, half) {
  if (half === undefined || half === null) return signed(mean, 1);
  return `${signed(mean, 1)} ± ${half.toFixed(1)}  [${signed(mean - half, 1)}, ${signed(mean + half, 1)}]`;
}

// A match's result in a line: the teams' scores for Belote, each seat's for Bestia; the
// reason when there is no result (a failed match).
export function resultText(info) {
  const results = info.results || [];
  if (!results.length) return info.reason || "";
  const game = gameName(info.game);
  if (game === "belote") {
    const team = (s) => (results.find((r) => r.seat % 2 === s) || { score: 0 }).score;
    return `${team(0)} – ${team(1)}`;
  }
  return results.map((r) => `${r.seat}:${r.score}`).join(" ");
}

// A Belote deal's end in a line: card points, Belote points, whether the contract was made.
export function dealSummary(deal) {
  const points = `${t("t.points")}: ${(deal.cardPoints || []).join(" – ")}`;
  const belote = `${t("t.belote")}: ${(deal.belotePoints || []).join(" – ")}`;
  const contract = t("p.contract", { made: deal.contractMade ? t("p.made") : t("p.failed") });
  return `${points} · ${belote} · ${contract}${deal.capot ? ` · ${t("p.capot")}` : ""}`;
}

// How long a decision took and the bank it left (the log counts microseconds).
export function decisionTiming(decision) {
  const took = t("r.took", { ms: Math.round(Number(decision.usedUs) / 1000) });
  const bank = t("r.bank", { s: (Number(decision.bankLeftUs) / 1e6).toFixed(1) });
  return `${took}, ${bank}`;
}
