#!/usr/bin/env node
'use strict';
// The random bot of every game: a uniformly random legal action, for Belote and Bestia.
//
//   node clients/node/bots/random.js [--seed N] [--name NAME] [--game belote --game bestia]
//
// BISCA_ADDRESS and BISCA_TOKEN say where to connect and who it is (`bisca match` sets them).
// With --seed the choices are reproducible (one generator for every match of the connection).
//
// BISCA_RANDOM_ILLEGAL=N makes it answer its first N requests with an action that is not legal
// before a legal one: the referee rejects it and the SDK asks again (used by the tests).

const { parseArgs } = require('node:util');
const { printable, run } = require('..');

const { values } = parseArgs({
  options: {
    seed: { type: 'string' },
    name: { type: 'string', default: 'node-random' },
    game: { type: 'string', multiple: true, default: ['belote', 'bestia'] },
  },
});

// mulberry32: a small seeded generator; Math.random when no seed is given.
function generator(seed) {
  if (seed === undefined) return Math.random;
  let state = Number(seed) >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SUITS = {
  belote: ['SUIT_SPADES', 'SUIT_HEARTS', 'SUIT_DIAMONDS', 'SUIT_CLUBS'],
  bestia: ['SUIT_COINS', 'SUIT_CUPS', 'SUIT_SWORDS', 'SUIT_CLUBS'],
};
const RANKS = {
  belote: ['SEVEN', 'EIGHT', 'NINE', 'TEN', 'JACK', 'QUEEN', 'KING', 'ACE'],
  bestia: ['TWO', 'THREE', 'FOUR', 'FIVE', 'SIX', 'SEVEN', 'JACK', 'QUEEN', 'KING', 'ACE'],
};

/** Playing a card that is not in the hand: well formed, never legal. */
function illegalAction(request) {
  const hand = new Set(request.observation.hand.map((card) => `${card.suit}/${card.rank}`));
  for (const suit of SUITS[request.game]) {
    for (const rank of RANKS[request.game]) {
      if (!hand.has(`${suit}/RANK_${rank}`)) {
        return { play_card: { card: { suit, rank: `RANK_${rank}` } } };
      }
    }
  }
  throw new Error('every card is in the hand?');
}

const random = generator(values.seed);
let illegalLeft = Number(process.env.BISCA_RANDOM_ILLEGAL || 0);

function choose(request) {
  if (illegalLeft > 0 && request.attempt === 1) {
    illegalLeft -= 1;
    return illegalAction(request);
  }
  const actions = request.legalActions;
  return actions[Math.floor(random() * actions.length)];
}

run(choose, { name: values.name, version: '1', games: values.game }).catch((error) => {
  console.error(`random.js: ${printable(error.message)}`);
  process.exitCode = 1;
});
