#!/usr/bin/env node
'use strict';
// A simple rule-based Belote bot.
//
//   node clients/node/bots/belote_greedy.js [--name NAME]
//
// Bidding: take a proposed trump suit when holding its J or 9 and at least 2 more cards of it
// (the turned card counts: the taker receives it); among several such suits, the one whose
// cards are worth most as trumps.  Otherwise pass.
// Play: leading, cash an ace of a plain suit if it has one, else lead its least valuable card.
// Following, when the partner is not already winning the trick and some legal card would win
// it, play the cheapest such card; otherwise throw the least valuable card (card points and
// who is winning the trick come from the SDK's rule helpers, rules.belote).
// "Cheapest" and "least valuable" mean fewest points, then a plain card before a trump, then
// the lowest in its suit's order.

const { parseArgs } = require('node:util');
const { rules, printable, run } = require('..');

const {
  cardPoints: points,
  currentTrick,
  partnerOf,
  trickStrength: strength,
  winningPlay,
} = rules.belote;

const rankOf = (card) => card.rank.replace('RANK_', '');
/** A card's order in its own suit, trumps and plain suits apart (higher is stronger). */
const order = (card, trump) => strength(card, card.suit, trump);

/** What playing a card gives away, compared in order: points, trump or not, rank order. */
function cost(card, trump) {
  return [points(card, trump), card.suit === trump ? 1 : 0, order(card, trump)];
}

function cheapest(cards, trump) {
  const compare = (a, b) => {
    const [x, y] = [cost(a, trump), cost(b, trump)];
    return x[0] - y[0] || x[1] - y[1] || x[2] - y[2];
  };
  return [...cards].sort(compare)[0];
}

function bid(observation, legal) {
  const cards = [...observation.hand, observation.turned_card];
  let best = null;
  for (const action of legal) {
    if (action.action !== 'take') continue;
    const trumps = cards.filter((card) => card.suit === action.take.suit);
    const ranks = new Set(trumps.map(rankOf));
    if (!(ranks.has('JACK') || ranks.has('NINE')) || trumps.length < 3) continue;
    const value = trumps.reduce((sum, card) => sum + points(card, action.take.suit), 0);
    if (best === null || value > best.value) best = { value, action };
  }
  return best ? best.action : legal.find((action) => action.action === 'pass');
}

function play(observation, cards) {
  const trump = observation.trump;
  const plays = currentTrick(observation);
  if (plays.length === 0) {
    const aces = cards.filter((card) => card.suit !== trump && rankOf(card) === 'ACE');
    return aces.length ? aces[0] : cheapest(cards, trump);
  }
  const led = plays[0].card.suit;
  const winning = winningPlay(plays, trump);
  if (winning.seat !== partnerOf(observation.seat)) {
    const toBeat = strength(winning.card, led, trump);
    const winners = cards.filter((card) => strength(card, led, trump) > toBeat);
    if (winners.length) return cheapest(winners, trump);
  }
  return cheapest(cards, trump);
}

function greedy(request) {
  const { observation, legalActions } = request;
  if (observation.phase !== 'PHASE_PLAYING') return bid(observation, legalActions);
  const card = play(
    observation,
    legalActions.map((action) => action.play_card.card),
  );
  return legalActions.find(
    (action) =>
      action.play_card.card.suit === card.suit && action.play_card.card.rank === card.rank,
  );
}

module.exports = { greedy, bid, play, points, strength };

if (require.main === module) {
  const { values } = parseArgs({
    options: { name: { type: 'string', default: 'node-belote-greedy' } },
  });
  run(greedy, { name: values.name, version: '1', games: ['belote'] }).catch((error) => {
    console.error(`belote_greedy.js: ${printable(error.message)}`);
    process.exitCode = 1;
  });
}
