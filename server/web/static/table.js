// The table as a model folded from observations and events (canonical JSON of bisca.v1
// messages), and its drawing. One model serves the person's seat, the replay viewer and the
// live view: an observation sets it, events move it on.
"use strict";

(() => {
const { cardSvg, cardBack, cardLabel, suitMark } = window.BiscaCards;
const { t } = window.BiscaWords;

function oneof(message) {
  const keys = Object.keys(message || {}).filter((key) => key !== "index");
  return keys.length ? [keys[0], message[keys[0]]] : ["", {}];
}

function sameCard(a, b) {
  return a && b && a.suit === b.suit && a.rank === b.rank;
}

function suitWord(game, suit) {
  return t(game === "bestia" && suit === "SUIT_CLUBS" ? "suit.SUIT_CLUBS.bestia" : `suit.${suit}`);
}

function actionText(game, action) {
  const [, inner] = oneof(action);
  const [kind, value] = oneof(inner);
  switch (kind) {
    case "playCard": return cardLabel(game, value.card);
    case "pass": return t("t.pass");
    case "take": return t("t.take", { suit: suitWord(game, value.suit) });
    case "exchange": return `exchange ${(value.discards || []).map((c) => cardLabel(game, c)).join(" ") || "—"}`;
    case "discard": return `discard ${cardLabel(game, value.card)}`;
    default: return kind;
  }
}

function eventText(game, event) {
  const [, inner] = oneof(event);
  const [kind, e] = oneof(inner);
  const seat = (n) => `${t("r.seat", { n: n ?? 0, bot: "" }).replace(" ()", "")}`;
  switch (kind) {
    case "dealStarted": return `— deal ${e.dealNumber ?? 0} (${t("t.dealer")}: ${seat(e.dealer)}) —`;
    case "handStarted": return `— hand ${e.handNumber ?? 0} (${t("t.dealer")}: ${seat(e.dealer)}) —`;
    case "cardsDealt": return `${seat(e.seat)}: ${(e.cards || []).map((c) => cardLabel(game, c)).join(" ")}`;
    case "cardTurned": return `${t("t.turned")}: ${cardLabel(game, e.card)}`;
    case "trumpTurned": return `${t("t.trump")}: ${cardLabel(game, e.card)}`;
    case "bidMade": return `${seat(e.seat)}: ${e.suit ? t("t.take", { suit: suitWord(game, e.suit) }) : t("t.pass")}`;
    case "cardPlayed": return `${seat(e.seat)}: ${cardLabel(game, e.card)}`;
    case "beloteAnnounced": return `${seat(e.seat)}: ${e.announcement === "ANNOUNCEMENT_REBELOTE" ? t("t.rebelote") : t("t.belote")}`;
    case "trickWon": return `${t("r.trick")} ${(e.trickNumber ?? 0) + 1} → ${seat(e.winner)}${e.points !== undefined ? ` (${e.points})` : ""}`;
    case "dealScored": return `${t("t.score")}: ${(e.matchScores || []).join(" – ")}`;
    case "matchEnded": return t("r.end");
    default: return `${kind} ${JSON.stringify(e)}`;
  }
}

class TableModel {
  constructor(game, names, me) {
    this.game = game;
    this.names = names;
    this.n = names.length;
    this.me = me; // the seat drawn at the bottom (null: seat 0, nobody's hand in particular)
    this.hands = names.map(() => null); // known cards, or null
    this.counts = names.map(() => 0);
    this.trick = [];
    this.lastTrick = [];
    this.bids = [];
    this.trump = null;
    this.turned = null;
    this.taker = null;
    this.dealer = null;
    this.toAct = null;
    this.scores = [];
    this.cardPoints = [];
    this.tricksWon = names.map(() => 0);
    this.announcements = [];
    this.balances = [];
    this.pot = null;
    this.lastDeal = null;
  }

  // Everything the observation of `seat` says (its own hand among it).
  observe(observation, seat) {
    const [game, o] = oneof(observation);
    if (!game) return this;
    this.toAct = o.toAct ?? null;
    this.dealer = o.dealer ?? 0;
    this.hands[seat] = o.hand || [];
    const tricks = o.tricks || [];
    const current = tricks.length && tricks[tricks.length - 1].winner === undefined ? tricks[tricks.length - 1] : null;
    const done = tricks.filter((trick) => trick.winner !== undefined);
    this.trick = current ? current.plays || [] : [];
    this.lastTrick = done.length ? done[done.length - 1].plays || [] : [];
    this.tricksWon = this.names.map((_, s) => done.filter((trick) => trick.winner === s).length);
    if (game === "belote") {
      this.bids = o.bids || [];
      this.trump = o.trump ?? null;
      this.taker = o.taker ?? null;
      this.turned = o.phase === "PHASE_BIDDING_ROUND_1" || o.phase === "PHASE_BIDDING_ROUND_2" ? o.turnedCard : null;
      this.scores = o.matchScores || [0, 0];
      this.cardPoints = o.cardPoints || [0, 0];
      this.announcements = o.announcements || [];
      const results = o.dealResults || [];
      this.lastDeal = results.length ? results[results.length - 1] : this.lastDeal;
      const bidding = this.trump === null;
      this.counts = this.names.map((_, s) => {
        const played = tricks.reduce((sum, trick) => sum + (trick.plays || []).filter((p) => (p.seat ?? 0) === s).length, 0);
        return bidding ? 5 : 8 - played;
      });
    } else {
      this.counts = o.handSizes || this.counts;
      this.trump = o.trump ?? null;
      const turned = o.turnedCards || [];
      this.turned = turned.length ? turned[turned.length - 1] : null;
      this.balances = o.balances || [];
      this.pot = o.pot ?? null;
      this.bids = o.declarations || [];
    }
    return this;
  }

  // An event moves the table on (a card played, a trick won, a bid ...).
  apply(watched) {
    const event = watched.event || watched;
    const [, inner] = oneof(event);
    const [kind, e] = oneof(inner);
    const seat = e.seat ?? 0;
    switch (kind) {
      case "dealStarted":
      case "handStarted":
        this.trick = []; this.lastTrick = []; this.bids = []; this.trump = null; this.taker = null;
        this.hands = this.names.map(() => null); this.tricksWon = this.names.map(() => 0);
        this.announcements = []; this.dealer = e.dealer ?? 0;
        this.counts = this.names.map(() => (this.game === "belote" ? 5 : 4));
        break;
      case "cardsDealt":
        this.hands[seat] = [...(this.hands[seat] || []), ...(e.cards || [])];
        this.counts[seat] = this.hands[seat].length;
        break;
      case "cardTurned": this.turned = e.card; break;
      case "trumpTurned": this.turned = e.card; this.trump = e.card.suit; break;
      case "bidMade":
        this.bids = [...this.bids, e];
        if (e.suit) { this.trump = e.suit; this.taker = seat; this.turned = null; this.counts = this.names.map(() => 8); }
        break;
      case "cardPlayed":
        if (this.trick.length >= this.n) this.trick = [];
        this.trick = [...this.trick, { seat, card: e.card }];
        if (this.hands[seat]) this.hands[seat] = this.hands[seat].filter((c) => !sameCard(c, e.card));
        this.counts[seat] = Math.max(0, (this.counts[seat] || 0) - 1);
        this.toAct = (seat + 1) % this.n;
        break;
      case "beloteAnnounced": this.announcements = [...this.announcements, e]; break;
      case "trickWon":
        this.lastTrick = this.trick; this.trick = [];
        this.tricksWon[e.winner ?? 0] = (this.tricksWon[e.winner ?? 0] || 0) + 1;
        this.toAct = e.winner ?? 0;
        break;
      case "dealScored":
        this.scores = e.matchScores || this.scores; this.lastDeal = e.result || this.lastDeal;
        if (e.result && e.result.cardPoints) this.cardPoints = e.result.cardPoints;
        break;
      case "matchEnded":
        this.toAct = null;
        if (e.matchScores) this.scores = e.matchScores;
        if (e.balances) this.balances = e.balances;
        break;
      default: break;
    }
    return this;
  }
}

// Where seat `seat` sits around the table, the viewer's seat at the bottom: [x%, y%].
function place(model, seat, radius) {
  const bottom = model.me ?? 0;
  const k = (seat - bottom + model.n) % model.n;
  const angle = Math.PI / 2 + (k * 2 * Math.PI) / model.n;
  return [50 + radius[0] * Math.cos(angle), 50 + radius[1] * Math.sin(angle)];
}

// Draw the table into `root`. options.onCard(card, element) makes the viewer's cards
// clickable; options.illegal maps "SUIT/RANK" to a reason; options.selected is "SUIT/RANK".
function drawTable(root, model, options = {}) {
  root.replaceChildren();
  root.className = `table game-${model.game}`;
  const felt = document.createElement("div");
  felt.className = "felt";
  root.append(felt);
  for (let seat = 0; seat < model.n; seat += 1) {
    const [x, y] = place(model, seat, model.n === 4 ? [36, 38] : [38, 40]);
    const box = document.createElement("div");
    box.className = "seat";
    if (seat === model.toAct) box.classList.add("to-act");
    if (seat === (model.me ?? -1)) box.classList.add("mine");
    box.dataset.seat = String(seat);
    box.style.left = `${x}%`;
    box.style.top = `${y}%`;
    const name = document.createElement("div");
    name.className = "seat-name";
    let label = `${seat} · ${model.names[seat]}`;
    if (model.me !== null && seat === model.me && options.person) label = `${seat} · ${t("t.you")}`;
    if (model.game === "belote" && model.me !== null && seat === (model.me + 2) % 4 && options.person) label += ` (${t("t.partner")})`;
    if (seat === model.dealer) label += " · D";
    if (seat === model.taker) label += ` · ${t("t.taker")}`;
    if (model.game === "bestia" && model.balances.length) label += ` · ${model.balances[seat]}`;
    name.textContent = label;
    const hand = document.createElement("div");
    hand.className = "hand";
    hand.dataset.seat = String(seat);
    const cards = model.hands[seat];
    if (cards) {
      for (const card of cards) {
        const element = cardSvg(model.game, card);
        const key = `${card.suit}/${card.rank}`;
        if (options.illegal && seat === model.me && key in options.illegal) {
          element.classList.add("illegal");
          element.title = t("p.illegal", { why: options.illegal[key] });
        }
        if (options.selected === key && seat === model.me) element.classList.add("selected");
        if (options.onCard && seat === model.me) {
          element.classList.add("playable");
          element.tabIndex = 0;
          element.addEventListener("click", () => options.onCard(card, element));
          element.addEventListener("keydown", (ev) => { if (ev.key === "Enter") options.onCard(card, element); });
        }
        hand.append(element);
      }
    } else {
      for (let i = 0; i < (model.counts[seat] || 0); i += 1) hand.append(cardBack());
    }
    const won = document.createElement("div");
    won.className = "seat-tricks";
    won.textContent = `${t("t.tricks")}: ${model.tricksWon[seat] || 0}`;
    box.append(name, hand, won);
    felt.append(box);
  }
  const centre = document.createElement("div");
  centre.className = "trick";
  for (const play of model.trick) {
    const [x, y] = place(model, play.seat ?? 0, [13, 15]);
    const element = cardSvg(model.game, play.card);
    element.style.left = `${x}%`;
    element.style.top = `${y}%`;
    element.dataset.seat = String(play.seat ?? 0);
    centre.append(element);
  }
  if (model.turned) {
    const element = cardSvg(model.game, model.turned);
    element.classList.add("turned");
    element.title = t("t.turned");
    centre.append(element);
  }
  felt.append(centre);
  root.append(tableInfo(model));
}

function tableInfo(model) {
  const info = document.createElement("div");
  info.className = "table-info";
  const line = (label, ...value) => {
    const row = document.createElement("div");
    const name = document.createElement("b");
    name.textContent = `${label}: `;
    row.append(name, ...value);
    info.append(row);
    return row;
  };
  if (model.trump) line(t("t.trump"), suitMark(model.game, model.trump, 18), " ", suitWord(model.game, model.trump)).className = "trump";
  if (model.game === "belote") {
    const bids = model.bids.map((bid) => `${bid.seat ?? 0}: ${bid.suit ? t("t.take", { suit: suitWord("belote", bid.suit) }) : t("t.pass")}`);
    if (bids.length) line(t("t.bids"), bids.join(", ")).className = "bids";
    if (model.announcements.length) {
      line(t("t.belote"), model.announcements.map((a) => `${a.seat ?? 0}: ${a.announcement === "ANNOUNCEMENT_REBELOTE" ? t("t.rebelote") : t("t.belote")}`).join(", "));
    }
    const scores = model.scores.length ? model.scores : [0, 0];
    line(t("t.score"), `${t("t.team", { n: 0 })} ${scores[0] ?? 0} – ${scores[1] ?? 0} ${t("t.team", { n: 1 })}`).className = "scores";
    if (model.cardPoints.length) line(t("t.points"), `${model.cardPoints[0] ?? 0} – ${model.cardPoints[1] ?? 0}`);
  } else {
    if (model.pot !== null) line(t("t.pot"), String(model.pot));
    if (model.balances.length) line(t("t.balance"), model.balances.join(" · ")).className = "scores";
  }
  if (model.lastTrick.length) {
    const cards = document.createElement("span");
    cards.className = "last-trick";
    cards.textContent = model.lastTrick.map((p) => `${p.seat ?? 0}:${cardLabel(model.game, p.card)}`).join("  ");
    line(t("t.lasttrick"), cards);
  }
  return info;
}

window.BiscaTable = { TableModel, drawTable, actionText, eventText, oneof, sameCard, suitWord };
})();
