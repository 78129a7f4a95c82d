#!/usr/bin/env node
'use strict';
// The rule helpers' answers for positions from the engine (tests/client/rules_positions.py):
//
//   node clients/node/test/rules_positions.js POSITIONS
//
// POSITIONS holds one JSON object a line, {game, observation: hex of a GameObservation}; this
// prints one JSON object a line, the helpers' answers (the keys are described there).

const fs = require('node:fs');
const { loadProto, rules } = require('..');

const SUITS = {
  belote: ['SUIT_SPADES', 'SUIT_HEARTS', 'SUIT_DIAMONDS', 'SUIT_CLUBS'],
  bestia: ['SUIT_COINS', 'SUIT_CUPS', 'SUIT_SWORDS', 'SUIT_CLUBS'],
};

function answer(game, observation) {
  const helpers = rules[game];
  const trump = observation.trump;
  const trick = helpers.currentTrick(observation);
  const result = {
    trick: trick.map((play) => play.seat),
    winning: trick.length ? helpers.winningPlay(trick, trump).seat : null,
    winners: observation.tricks
      .filter((done) => done.winner !== undefined && done.winner !== null)
      .map((done) => helpers.winningPlay(done.plays, trump).seat),
    strengths: observation.hand.map((card) =>
      SUITS[game].map((led) => helpers.trickStrength(card, led, trump)),
    ),
  };
  if (game === 'belote') {
    result.points = observation.hand.map((card) => helpers.cardPoints(card, trump));
    result.team = helpers.teamOf(observation.seat);
    result.partner = helpers.partnerOf(observation.seat);
  }
  return result;
}

const decode = loadProto().definition['bisca.v1.GameObservation'].deserialize;
const lines = [];
for (const line of fs.readFileSync(process.argv[2], 'utf8').split('\n')) {
  if (!line.trim()) continue;
  const { game, observation } = JSON.parse(line);
  const message = decode(Buffer.from(observation, 'hex'));
  lines.push(JSON.stringify(answer(game, message[game])));
}
process.stdout.write(lines.join('\n') + '\n');
