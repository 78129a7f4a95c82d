'use strict';
// Belote's cards (docs/rules/belote.md, "Cards"; the engine's belote/_cards.py): the one copy
// of their order of strength and their points that the SDK keeps.  rules.js (the helpers bots
// use, by wire name) and belote_replay.js (the deal check's replay, by engine card index) both
// read these tables, so a change to Belote's cards is made here once.

/** Each rank name's order of strength, from the names low to high. */
function orderOf(ranksLowToHigh) {
  return Object.freeze(Object.fromEntries(ranksLowToHigh.map((rank, order) => [rank, order])));
}

/** The ranks in the engine's order: a card's index is its suit * 8 + its rank's place here. */
const RANKS = Object.freeze([
  'RANK_SEVEN',
  'RANK_EIGHT',
  'RANK_NINE',
  'RANK_TEN',
  'RANK_JACK',
  'RANK_QUEEN',
  'RANK_KING',
  'RANK_ACE',
]);
/** Strength inside the trump suit, higher wins. */
const TRUMP_ORDER = orderOf([
  'RANK_SEVEN',
  'RANK_EIGHT',
  'RANK_QUEEN',
  'RANK_KING',
  'RANK_TEN',
  'RANK_ACE',
  'RANK_NINE',
  'RANK_JACK',
]);
/** Strength inside any other suit, higher wins. */
const PLAIN_ORDER = orderOf([
  'RANK_SEVEN',
  'RANK_EIGHT',
  'RANK_NINE',
  'RANK_JACK',
  'RANK_QUEEN',
  'RANK_KING',
  'RANK_TEN',
  'RANK_ACE',
]);
/** Card points in the trump suit (a rank not named is worth 0). */
const TRUMP_POINTS = Object.freeze({
  RANK_JACK: 20,
  RANK_NINE: 14,
  RANK_ACE: 11,
  RANK_TEN: 10,
  RANK_KING: 4,
  RANK_QUEEN: 3,
});
/** Card points in any other suit (a rank not named is worth 0); 152 in a deal with the trump's. */
const PLAIN_POINTS = Object.freeze({
  RANK_ACE: 11,
  RANK_TEN: 10,
  RANK_KING: 4,
  RANK_QUEEN: 3,
  RANK_JACK: 2,
});
/** Added to a trump's order in a trick's strength: above every card of the led suit. */
const WIN_TRUMP = 100;

module.exports = {
  orderOf,
  RANKS,
  TRUMP_ORDER,
  PLAIN_ORDER,
  TRUMP_POINTS,
  PLAIN_POINTS,
  WIN_TRUMP,
};
