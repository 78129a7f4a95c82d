'use strict';
// The rule helpers' edges; tests/client/test_node_client.py checks their answers against the
// engine on positions of seeded random matches (test/rules_positions.js).

const assert = require('node:assert/strict');
const { test } = require('node:test');
const { rules } = require('..');

const card = (suit, rank) => ({ suit: `SUIT_${suit}`, rank: `RANK_${rank}` });

test('a trump beats the led suit; a card of another suit cannot win', () => {
  const { trickStrength, winningPlay } = rules.belote;
  const plays = [
    { seat: 1, card: card('HEARTS', 'ACE') },
    { seat: 2, card: card('SPADES', 'SEVEN') },
    { seat: 3, card: card('CLUBS', 'ACE') },
  ];
  assert.equal(winningPlay(plays, 'SUIT_SPADES').seat, 2);
  assert.equal(winningPlay(plays, 'SUIT_DIAMONDS').seat, 1);
  assert.equal(trickStrength(card('CLUBS', 'ACE'), 'SUIT_HEARTS', 'SUIT_SPADES'), -1);
  assert.equal(trickStrength(card('SPADES', 'JACK'), 'SUIT_HEARTS', 'SUIT_SPADES'), 107);
  assert.equal(rules.bestia.trickStrength(card('COINS', 'ACE'), 'SUIT_COINS', 'SUIT_CUPS'), 9);
});

test('no trick has no winner, and a rank that is not a card is refused', () => {
  assert.throws(() => rules.belote.winningPlay([], 'SUIT_SPADES'), RangeError);
  assert.throws(() => rules.bestia.winningPlay([], 'SUIT_CUPS'), RangeError);
  assert.throws(
    () => rules.belote.trickStrength(card('SPADES', 'TWO'), 'SUIT_SPADES', 'SUIT_HEARTS'),
    /not a card's rank: "RANK_TWO"/,
  );
  assert.throws(() => rules.belote.cardPoints({ suit: 'SUIT_SPADES' }, 'SUIT_HEARTS'), RangeError);
});

test('the trick on the table, the points, the partner', () => {
  const { cardPoints, currentTrick, partnerOf, teamOf } = rules.belote;
  const done = { plays: [{ seat: 0, card: card('HEARTS', 'ACE') }], winner: 0 };
  const open = { plays: [{ seat: 1, card: card('HEARTS', 'TEN') }], winner: undefined };
  assert.deepEqual(currentTrick({ tricks: [] }), []);
  assert.deepEqual(currentTrick({ tricks: [done] }), []);
  assert.deepEqual(currentTrick({ tricks: [done, open] }), open.plays);
  assert.equal(cardPoints(card('HEARTS', 'JACK'), 'SUIT_HEARTS'), 20);
  assert.equal(cardPoints(card('HEARTS', 'JACK'), 'SUIT_SPADES'), 2);
  assert.equal(cardPoints(card('HEARTS', 'SEVEN'), undefined), 0);
  assert.deepEqual([0, 1, 2, 3].map(partnerOf), [2, 3, 0, 1]);
  assert.deepEqual([0, 1, 2, 3].map(teamOf), [0, 1, 0, 1]);
});
