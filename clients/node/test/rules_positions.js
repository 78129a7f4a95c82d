#!/usr/bin/env node
'use strict';
// The rule helpers' answers for positions from the engine (tests/client/rules_positions.py):
//
//   node clients/node/test/rules_positions.js POSITIONS [EXAMPLE]
//
// POSITIONS holds one JSON object a line, {game, observation: hex of a GameObservation, legal:
// [hex of each legal GameAction]}; this prints one JSON object a line, the helpers' answers
// (the keys are described there).  EXAMPLE is a module exporting the guide's example `play`:
// its choice in each Belote card-play position is given too.

const fs = require('node:fs');
const path = require('node:path');
const { loadProto, rules } = require('..');

const SUITS = {
  belote: ['SUIT_SPADES', 'SUIT_HEARTS', 'SUIT_DIAMONDS', 'SUIT_CLUBS'],
  bestia: ['SUIT_COINS', 'SUIT_CUPS', 'SUIT_SWORDS', 'SUIT_CLUBS'],
};

function answer(game, observation, legalActions, example) {
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
    if (example && observation.phase === 'PHASE_PLAYING') {
      const choice = example({ game, seat: observation.seat, observation, legalActions });
      result.example = legalActions.indexOf(choice);
    }
  }
  return result;
}

const { definition } = loadProto();
const decode = (type, hex) => definition[`bisca.v1.${type}`].deserialize(Buffer.from(hex, 'hex'));
const example = process.argv[3] ? require(path.resolve(process.argv[3])).play : null;
const lines = [];
for (const line of fs.readFileSync(process.argv[2], 'utf8').split('\n')) {
  if (!line.trim()) continue;
  const { game, observation, legal } = JSON.parse(line);
  const legalActions = legal.map((hex) => decode('GameAction', hex)[game]);
  const seen = decode('GameObservation', observation)[game];
  lines.push(JSON.stringify(answer(game, seen, legalActions, example)));
}
process.stdout.write(lines.join('\n') + '\n');
