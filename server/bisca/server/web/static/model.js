// The table as a model folded from observations and events (canonical JSON of bisca.v1
// messages), with no DOM. One model serves the person's seat, the replay viewer and the live
// view: an observation sets it, events move it on.

export function oneof(message) {
  const keys = Object.keys(message || {}).filter((key) => key !== "index");
  return keys.length ? [keys[0], message[keys[0]]] : ["", {}];
}

export function sameCard(a, b) {
  return a && b && a.suit === b.suit && a.rank === b.rank;
}

export class TableModel {
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
    this.held = null; // a completed trick still on the table: {plays, winner}
    this.phase = null;
    this.over = false;
    this.lastHand = null; // Bestia: the last hand's result
    this.handNumber = null; // the deal's (Belote) or the hand's (Bestia), from 0
    this.inHand = [];
  }

  // Everything the observation of `seat` says (its own hand among it).
  observe(observation, seat) {
    const [game, o] = oneof(observation);
    if (!game) return this;
    this.toAct = o.toAct ?? null;
    this.dealer = o.dealer ?? 0;
    this.phase = o.phase ?? null;
    this.held = null;
    this.hands[seat] = o.hand || [];
    const tricks = o.tricks || [];
    const current =
      tricks.length && tricks[tricks.length - 1].winner === undefined
        ? tricks[tricks.length - 1]
        : null;
    const done = tricks.filter((trick) => trick.winner !== undefined);
    this.trick = current ? current.plays || [] : [];
    this.lastTrick = done.length ? done[done.length - 1].plays || [] : [];
    this.lastWinner = done.length ? (done[done.length - 1].winner ?? 0) : null;
    this.over = o.phase === "PHASE_MATCH_OVER";
    this.tricksWon = this.names.map((_, s) => done.filter((trick) => trick.winner === s).length);
    if (game === "belote") {
      this.handNumber = o.dealNumber ?? 0;
      this.bids = o.bids || [];
      this.trump = o.trump ?? null;
      this.taker = o.taker ?? null;
      this.turned =
        o.phase === "PHASE_BIDDING_ROUND_1" || o.phase === "PHASE_BIDDING_ROUND_2"
          ? o.turnedCard
          : null;
      this.scores = o.matchScores || [0, 0];
      this.cardPoints = o.cardPoints || [0, 0];
      this.announcements = o.announcements || [];
      const results = o.dealResults || [];
      this.lastDeal = results.length ? results[results.length - 1] : this.lastDeal;
      const bidding = this.trump === null;
      this.counts = this.names.map((_, s) => {
        const played = tricks.reduce(
          (sum, trick) => sum + (trick.plays || []).filter((p) => (p.seat ?? 0) === s).length,
          0,
        );
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
      this.handNumber = o.handNumber ?? 0;
      this.inHand = o.inHand || [];
      this.taker = o.opener ?? null;
      const results = o.results || [];
      this.lastHand = results.length ? results[results.length - 1] : this.lastHand;
    }
    return this;
  }

  // Keep the last completed trick on the table (a replay's step that completed it).
  holdLastTrick() {
    if (!this.trick.length && this.lastTrick.length)
      this.held = { plays: this.lastTrick, winner: this.lastWinner ?? 0 };
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
        this.trick = [];
        this.lastTrick = [];
        this.bids = [];
        this.trump = null;
        this.taker = null;
        this.hands = this.names.map(() => null);
        this.tricksWon = this.names.map(() => 0);
        this.announcements = [];
        this.dealer = e.dealer ?? 0;
        this.handNumber = e.dealNumber ?? e.handNumber ?? 0;
        this.counts = this.names.map(() => (this.game === "belote" ? 5 : 4));
        break;
      case "cardsDealt":
        this.hands[seat] = [...(this.hands[seat] || []), ...(e.cards || [])];
        this.counts[seat] = this.hands[seat].length;
        break;
      case "cardTurned":
        this.turned = e.card;
        break;
      case "trumpTurned":
        this.turned = e.card;
        this.trump = e.card.suit;
        break;
      case "bidMade":
        this.bids = [...this.bids, e];
        if (e.suit) {
          this.trump = e.suit;
          this.taker = seat;
          this.turned = null;
          this.counts = this.names.map(() => 8);
        }
        break;
      case "cardPlayed":
        if (this.trick.length >= this.n) this.trick = [];
        this.held = null;
        this.trick = [...this.trick, { seat, card: e.card }];
        if (this.hands[seat])
          this.hands[seat] = this.hands[seat].filter((c) => !sameCard(c, e.card));
        this.counts[seat] = Math.max(0, (this.counts[seat] || 0) - 1);
        this.toAct = (seat + 1) % this.n;
        break;
      case "beloteAnnounced":
        this.announcements = [...this.announcements, e];
        break;
      case "trickWon":
        this.held = { plays: this.trick, winner: e.winner ?? 0 };
        this.lastTrick = this.trick;
        this.trick = [];
        this.tricksWon[e.winner ?? 0] = (this.tricksWon[e.winner ?? 0] || 0) + 1;
        this.toAct = e.winner ?? 0;
        break;
      case "dealScored":
        this.scores = e.matchScores || this.scores;
        this.lastDeal = e.result || this.lastDeal;
        if (e.result && e.result.cardPoints) this.cardPoints = e.result.cardPoints;
        break;
      case "handEnded":
        this.lastHand = e.result || this.lastHand;
        if (e.result && e.result.balances) this.balances = e.result.balances;
        if (e.result && e.result.pot !== undefined) this.pot = e.result.pot;
        break;
      case "matchEnded":
        this.toAct = null;
        this.over = true;
        this.pot = null; // the pot of a hand that will not be played is nobody's
        if (e.matchScores) this.scores = e.matchScores;
        if (e.balances) this.balances = e.balances;
        break;
      default:
        break;
    }
    return this;
  }
}
