'use strict';
// The rules a bot keeps needing, on the SDK's own messages (the Node twin of the engine's
// current_trick, winning_play, trick_strength, team_of and card points that the Python SDK's
// bots use): which trick is on the table, who is winning it, how strongly a card competes in
// it, what a card is worth, who the partner is.  Cards are as the SDK gives them,
// {suit: 'SUIT_HEARTS', rank: 'RANK_JACK'}; suits are enum names ('SUIT_HEARTS').
//
//   const { belote } = require('bisca-client').rules;
//   const plays = belote.currentTrick(observation);
//   if (plays.length && belote.winningPlay(plays, observation.trump).seat === belote.partnerOf(seat)) ...
//
// Each game's trick_strength gives the same numbers as the engine's (docs/rules): every trump
// above every card of the led suit (100 + its order in the trump suit), a card of the led suit
// its order in that suit, any other card -1 (it cannot win).  tests/client checks every helper
// against the engine on positions of seeded random matches.

const {
  orderOf,
  TRUMP_ORDER: BELOTE_TRUMP_ORDER,
  PLAIN_ORDER: BELOTE_PLAIN_ORDER,
  TRUMP_POINTS: BELOTE_TRUMP_POINTS,
  PLAIN_POINTS: BELOTE_PLAIN_POINTS,
  WIN_TRUMP,
} = require('./belote_cards');

/**
 * The helpers every trick-taking game shares, on that game's trickStrength(card, ledSuit,
 * trump): how strongly `card` competes in a trick led in `ledSuit` with `trump` as trump (the
 * card of highest strength wins the trick; -1 for a card that cannot win it).
 */
function trickHelpers(strengthOf) {
  /**
   * The play ({seat, card}) winning the trick `plays` (the cards in the order played, at least
   * one): for a complete trick, its winner; for a trick still being played, the seat winning
   * it so far.
   */
  function winningPlay(plays, trump) {
    if (!plays || plays.length === 0) {
      throw new RangeError('a trick needs at least one card to have a winner');
    }
    const led = plays[0].card.suit;
    let best = plays[0];
    let bestStrength = strengthOf(best.card, led, trump);
    for (const play of plays.slice(1)) {
      const strength = strengthOf(play.card, led, trump);
      if (strength > bestStrength) [best, bestStrength] = [play, strength];
    }
    return best;
  }

  /**
   * The plays on the table in the trick being played, in the order played: empty when no
   * trick is under way (before card play, when the seat to act leads, once the deal is over).
   */
  function currentTrick(observation) {
    const tricks = observation.tricks || [];
    const last = tricks[tricks.length - 1];
    return last !== undefined && (last.winner === undefined || last.winner === null)
      ? last.plays
      : [];
  }

  return { currentTrick, trickStrength: strengthOf, winningPlay };
}

// ---- Belote (docs/rules/belote.md, "Cards" and "Playing the tricks") ----------------------

// The card orders and points are belote_cards.js's: the same tables the deal check's replay
// reads.

function checkedRank(order, card) {
  const value = order[card.rank];
  if (value === undefined) throw new RangeError(`not a card's rank: ${JSON.stringify(card.rank)}`);
  return value;
}

function beloteStrength(card, ledSuit, trump) {
  if (card.suit === trump) return WIN_TRUMP + checkedRank(BELOTE_TRUMP_ORDER, card);
  if (card.suit === ledSuit) return checkedRank(BELOTE_PLAIN_ORDER, card);
  return -1;
}

const belote = Object.freeze({
  ...trickHelpers(beloteStrength),
  /** The card points of `card` with `trump` as trump (they add up to 152 in a deal). */
  cardPoints(card, trump) {
    checkedRank(BELOTE_PLAIN_ORDER, card);
    return (card.suit === trump ? BELOTE_TRUMP_POINTS : BELOTE_PLAIN_POINTS)[card.rank] || 0;
  },
  /** The team of a seat: 0 for seats 0 and 2, 1 for seats 1 and 3. */
  teamOf(seat) {
    return seat & 1;
  },
  /** The seat opposite, on the same team. */
  partnerOf(seat) {
    return (seat + 2) % 4;
  },
});

// ---- Bestia (docs/rules/bestia.md, "Cards" and step 9, "Card play") -----------------------

const BESTIA_ORDER = orderOf([
  'RANK_TWO',
  'RANK_THREE',
  'RANK_FOUR',
  'RANK_FIVE',
  'RANK_SIX',
  'RANK_SEVEN',
  'RANK_JACK',
  'RANK_QUEEN',
  'RANK_KING',
  'RANK_ACE',
]);

function bestiaStrength(card, ledSuit, trump) {
  if (card.suit === trump) return WIN_TRUMP + checkedRank(BESTIA_ORDER, card);
  if (card.suit === ledSuit) return checkedRank(BESTIA_ORDER, card);
  return -1;
}

// Bestia has no teams and no card points: a trick is worth its share of the pot.
const bestia = Object.freeze({ ...trickHelpers(bestiaStrength) });

module.exports = { belote, bestia };
