'use strict';
// Belote played again from its seed, as engine/bisca/engine/belote/_state.py plays it: only
// what the deal check needs to replay the moves a seat's first request shows (its bids, then
// the cards of its tricks) and to say what the seat then holds.  No events, no observation but
// the hand and the turned card.  The Python SDK replays on the engine itself
// (bisca/client/_deal.py, _first_hand_differs); tests/client/test_node_deal_vectors.py checks
// this port's verdicts and words against it, move lists across deals included (a first request
// of deal 0 may show anything: the engine goes on as far as the moves are legal).

const cards = require('./belote_cards');

const BELOTE_SEATS = 4;
const RANKS = 8;
const SUITS = ['SPADES', 'HEARTS', 'DIAMONDS', 'CLUBS'];
// By the engine's rank (7 8 9 10 J Q K A): strength inside a suit, higher wins, and points,
// from belote_cards.js (the tables rules.js reads).
const byRank = (table) => cards.RANKS.map((rank) => table[rank] || 0);
const TRUMP_ORDER = byRank(cards.TRUMP_ORDER); // J 9 A 10 K Q 8 7
const PLAIN_ORDER = byRank(cards.PLAIN_ORDER); // A 10 K Q J 9 8 7
const TRUMP_POINTS = byRank(cards.TRUMP_POINTS);
const PLAIN_POINTS = byRank(cards.PLAIN_POINTS);
const QUEEN = 5;
const KING = 6;
const { WIN_TRUMP } = cards; // above every card of the led suit
const TOTAL_CARD_POINTS = 152;
const LAST_TRICK_BONUS = 10;
const CAPOT_POINTS = 252;
const BELOTE_POINTS = 20;

const suitOf = (card) => Math.floor(card / RANKS);
const rankOf = (card) => card % RANKS;

/** A wire Card ({suit: 'SUIT_X', rank: 'RANK_Y'}) as the engine's card index, or null. */
function cardIndex(card) {
  if (!card) return null;
  const suit = SUITS.indexOf(String(card.suit).replace(/^SUIT_/, ''));
  const rank = cards.RANKS.indexOf(card.rank);
  const named = typeof card.suit === 'string' && typeof card.rank === 'string';
  return named &&
    card.suit.startsWith('SUIT_') &&
    card.rank.startsWith('RANK_') &&
    suit >= 0 &&
    rank >= 0
    ? suit * RANKS + rank
    : null;
}

/** A wire suit ('SUIT_HEARTS') as the engine's suit, or null. */
function suitIndex(suit) {
  const at =
    typeof suit === 'string' && suit.startsWith('SUIT_') ? SUITS.indexOf(suit.slice(5)) : -1;
  return at >= 0 ? at : null;
}

function trickStrength(card, led, trump) {
  if (suitOf(card) === trump) return WIN_TRUMP + TRUMP_ORDER[rankOf(card)];
  if (suitOf(card) === led) return PLAIN_ORDER[rankOf(card)];
  return -1;
}

const points = (card, trump) =>
  (suitOf(card) === trump ? TRUMP_POINTS : PLAIN_POINTS)[rankOf(card)];

/** score_deal: the scores of a played deal, per team. */
function scoreDeal(takingTeam, cardPoints, tricksWon, beloteTeam) {
  let capot = false;
  let scored = [cardPoints[0], cardPoints[1]];
  if (tricksWon.includes(8)) {
    capot = true;
    scored = tricksWon[0] === 8 ? [CAPOT_POINTS, 0] : [0, CAPOT_POINTS];
  }
  const belote =
    beloteTeam === null ? [0, 0] : beloteTeam === 0 ? [BELOTE_POINTS, 0] : [0, BELOTE_POINTS];
  const totals = [scored[0] + belote[0], scored[1] + belote[1]];
  const defending = 1 - takingTeam;
  if (totals[takingTeam] >= totals[defending]) return totals;
  const everything =
    (capot ? CAPOT_POINTS : TOTAL_CARD_POINTS + LAST_TRICK_BONUS) + belote[0] + belote[1];
  return defending === 0 ? [everything, 0] : [0, everything];
}

/**
 * A Belote match from its start (settings from deal.js dealSettings(), seed a BigInt), with
 * `shuffled(dealNumber)` giving a deal's {dealer, deck} (deal.js beloteShuffle).
 */
class BeloteReplay {
  constructor(settings, shuffled) {
    this.settings = settings;
    this.shuffled = shuffled;
    this.matchScores = [0, 0];
    this.dealsPlayed = 0;
    this.startDeal(0);
  }

  startDeal(dealNumber) {
    const { dealer, deck } = this.shuffled(dealNumber);
    this.dealNumber = dealNumber;
    this.dealer = dealer;
    this.deck = deck;
    const first = (dealer + 1) % BELOTE_SEATS;
    this.hands = [[], [], [], []];
    let position = 0;
    for (const packet of [3, 2]) {
      for (let offset = 0; offset < BELOTE_SEATS; offset += 1) {
        const seat = (first + offset) % BELOTE_SEATS;
        this.hands[seat].push(...deck.slice(position, position + packet));
        position += packet;
      }
    }
    this.turned = deck[20];
    this.nextCard = 21;
    this.phase = 1; // 1, 2: the bidding rounds; 3: card play
    this.trump = null;
    this.taker = null;
    this.tricks = 0;
    this.trick = [];
    this.trickLeader = first;
    this.bestSeat = -1;
    this.bestStrength = -1;
    this.led = -1;
    this.cardPoints = [0, 0];
    this.tricksWon = [0, 0];
    this.announcements = [];
    this.beloteHolder = null;
    this.toAct = first;
  }

  get isOver() {
    return this.toAct === null;
  }

  /** Whether `move` ({pass: true}, {take: suit} or {card}, engine numbers) is legal now. */
  isLegal(move) {
    if (this.toAct === null) return false;
    if (this.phase !== 3) {
      if (move.pass) return true;
      if (move.take === undefined) return false;
      const turned = suitOf(this.turned);
      return this.phase === 1 ? move.take === turned : move.take !== turned;
    }
    return move.card !== undefined && this.legalCards().includes(move.card);
  }

  /** _legal_cards. */
  legalCards() {
    const seat = this.toAct;
    const hand = this.hands[seat];
    if (this.trick.length === 0) return hand;
    const trump = this.trump;
    const led = this.led;
    const trumps = hand.filter((card) => suitOf(card) === trump);
    const best = this.bestStrength;
    const bestTrump = best >= WIN_TRUMP ? best - WIN_TRUMP : -1;
    const higher = trumps.filter((card) => TRUMP_ORDER[rankOf(card)] > bestTrump);
    if (led !== trump) {
      const follow = hand.filter((card) => suitOf(card) === led);
      if (follow.length > 0) return follow;
      if (trumps.length === 0) return hand;
      if ((this.bestSeat ^ seat) === 2) {
        const free = hand.filter((card) => suitOf(card) !== trump);
        return [...free, ...(higher.length > 0 ? higher : trumps)];
      }
      return higher.length > 0 ? higher : trumps;
    }
    if (trumps.length === 0) return hand;
    return higher.length > 0 ? higher : trumps;
  }

  /** Plays a legal `move` for the seat to act. */
  apply(move) {
    if (this.phase === 3) this.applyCard(move.card);
    else this.applyBid(move);
  }

  applyBid(move) {
    const seat = this.toAct;
    const firstRound = this.phase === 1;
    if (!move.pass) {
      this.trump = move.take;
      this.taker = seat;
      this.completeHands();
      this.phase = 3;
      this.toAct = this.trickLeader;
      return;
    }
    const next = (seat + 1) % BELOTE_SEATS;
    if (next !== (this.dealer + 1) % BELOTE_SEATS) this.toAct = next;
    else if (firstRound) {
      this.phase = 2;
      this.toAct = next;
    } else this.finishDeal(null);
  }

  /** _complete_hands: the taker gets the turned card and 2 more, every other seat 3. */
  completeHands() {
    let position = this.nextCard;
    for (let offset = 1; offset <= BELOTE_SEATS; offset += 1) {
      const seat = (this.dealer + offset) % BELOTE_SEATS;
      if (seat === this.taker) {
        this.hands[seat].push(this.turned, ...this.deck.slice(position, position + 2));
        position += 2;
      } else {
        this.hands[seat].push(...this.deck.slice(position, position + 3));
        position += 3;
      }
    }
    this.nextCard = position;
    this.hands.forEach((hand, seat) => {
      const royals = hand.filter(
        (card) => suitOf(card) === this.trump && (rankOf(card) === KING || rankOf(card) === QUEEN),
      );
      if (royals.length === 2) this.beloteHolder = seat;
    });
  }

  applyCard(card) {
    const seat = this.toAct;
    const hand = this.hands[seat];
    hand.splice(hand.indexOf(card), 1);
    this.trick.push(card);
    const rank = rankOf(card);
    if (
      seat === this.beloteHolder &&
      suitOf(card) === this.trump &&
      (rank === KING || rank === QUEEN)
    ) {
      this.announcements.push(seat);
    }
    if (this.trick.length === 1) this.led = suitOf(card);
    const strength = trickStrength(card, this.led, this.trump);
    if (strength > this.bestStrength) {
      this.bestStrength = strength;
      this.bestSeat = seat;
    }
    if (this.trick.length < BELOTE_SEATS) {
      this.toAct = (seat + 1) % BELOTE_SEATS;
      return;
    }
    const winner = this.bestSeat;
    let won = this.trick.reduce((sum, played) => sum + points(played, this.trump), 0);
    const trickNumber = this.tricks;
    if (trickNumber === 7) won += LAST_TRICK_BONUS;
    this.tricks += 1;
    this.cardPoints[winner & 1] += won;
    this.tricksWon[winner & 1] += 1;
    this.trick = [];
    this.trickLeader = winner;
    this.bestSeat = -1;
    this.bestStrength = -1;
    if (trickNumber === 7) {
      const beloteTeam = this.announcements.length === 2 ? this.announcements[0] & 1 : null;
      this.finishDeal(scoreDeal(this.taker & 1, this.cardPoints, this.tricksWon, beloteTeam));
    } else this.toAct = winner;
  }

  /** _finish_deal: `scores` per team (null: the deal was void). */
  finishDeal(scores) {
    const [a, b] = scores || [0, 0];
    this.dealsPlayed += 1;
    this.matchScores[0] += a;
    this.matchScores[1] += b;
    if (this.matchIsOver()) {
      this.phase = 4;
      this.toAct = null;
    } else this.startDeal(this.dealNumber + 1);
  }

  matchIsOver() {
    const { duplicate, target_score: target, deals, max_deals: maxDeals } = this.settings;
    const played = this.dealsPlayed;
    if (duplicate && played % 2) return false;
    if (played >= (target === null ? deals : maxDeals)) return true;
    return target !== null && Math.max(...this.matchScores) >= target;
  }

  /** The seat's hand, sorted as the observation sorts it (by card index). */
  handOf(seat) {
    return [...this.hands[seat]].sort((x, y) => x - y);
  }
}

module.exports = { BeloteReplay, cardIndex, suitIndex };
