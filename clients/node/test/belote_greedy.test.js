'use strict';
// The Belote greedy sample bot's decisions on hand-built positions.

const assert = require('node:assert/strict');
const { test } = require('node:test');
const { greedy } = require('../bots/belote_greedy');

const card = (text) => {
  const suits = { S: 'SPADES', H: 'HEARTS', D: 'DIAMONDS', C: 'CLUBS' };
  const ranks = {
    7: 'SEVEN',
    8: 'EIGHT',
    9: 'NINE',
    T: 'TEN',
    J: 'JACK',
    Q: 'QUEEN',
    K: 'KING',
    A: 'ACE',
  };
  return { suit: `SUIT_${suits[text[1]]}`, rank: `RANK_${ranks[text[0]]}` };
};
const cards = (text) => text.split(' ').map(card);
const show = (c) => `${c.rank}/${c.suit}`;

function bidding(hand, turned, suits) {
  const legalActions = [
    { action: 'pass', pass: {} },
    ...suits.map((suit) => ({ action: 'take', take: { suit: `SUIT_${suit}` } })),
  ];
  return greedy({
    observation: {
      seat: 0,
      phase: 'PHASE_BIDDING_ROUND_1',
      hand: cards(hand),
      turned_card: card(turned),
    },
    legalActions,
  });
}

function playing({ seat = 0, hand, plays = [], trump = 'SUIT_HEARTS', legal = hand }) {
  const tricks = [
    { trick_number: 1, leader: 0, plays: plays.map(([s, c]) => ({ seat: s, card: card(c) })) },
  ];
  const decision = greedy({
    observation: { seat, phase: 'PHASE_PLAYING', hand: cards(hand), trump, tricks },
    legalActions: cards(legal).map((c) => ({ action: 'play_card', play_card: { card: c } })),
  });
  return show(decision.play_card.card);
}

test('takes with the J or the 9 of the proposed trump and 2 more trumps', () => {
  assert.equal(bidding('JH 7H AS KD QC', '8H', ['HEARTS']).action, 'take');
  assert.equal(bidding('9H 7H AS KD QC', '8H', ['HEARTS']).action, 'take');
  assert.equal(bidding('JH AS KD QC 7C', '8H', ['HEARTS']).action, 'pass'); // only 2 hearts
  assert.equal(bidding('AH KH QH TD 7C', '8H', ['HEARTS']).action, 'pass'); // no J or 9
  // Round 2: the strongest qualifying suit.
  const take = bidding('JS 9S 7S 9D 8D', 'TD', ['SPADES', 'DIAMONDS', 'CLUBS']);
  assert.deepEqual(take.take, { suit: 'SUIT_SPADES' });
});

test('wins the trick as cheaply as it can when the partner is not winning', () => {
  // Seat 1 led the Q of spades; A, T and K of spades all win it: the K is the cheapest.
  assert.equal(
    playing({ seat: 2, hand: 'AS TS KS 7D', plays: [[1, 'QS']], legal: 'AS TS KS' }),
    'RANK_KING/SUIT_SPADES',
  );
  // A trump wins over a plain card: the 7 of trump (0 points) rather than the J.
  assert.equal(
    playing({ seat: 2, hand: '7H JH', plays: [[1, 'AS']], legal: '7H JH' }),
    'RANK_SEVEN/SUIT_HEARTS',
  );
});

test('throws the least valuable card when the partner is winning or nothing wins', () => {
  // Partner (seat 0) is winning with the A of spades: seat 2 throws its cheapest spade.
  assert.equal(
    playing({
      seat: 2,
      hand: 'TS 7S',
      plays: [
        [0, 'AS'],
        [1, '8S'],
      ],
      legal: 'TS 7S',
    }),
    'RANK_SEVEN/SUIT_SPADES',
  );
  // Cannot beat the J of trump: throw the cheapest, a plain card before a trump.
  assert.equal(
    playing({ seat: 2, hand: '7H 8C', plays: [[1, 'JH']], legal: '7H 8C' }),
    'RANK_EIGHT/SUIT_CLUBS',
  );
});

test('leads a plain ace, else its least valuable card', () => {
  assert.equal(playing({ hand: 'AS 7D JH' }), 'RANK_ACE/SUIT_SPADES');
  assert.equal(playing({ hand: 'TS 7D JH' }), 'RANK_SEVEN/SUIT_DIAMONDS');
});
