'use strict';
// lib/deal.js, the port of the engine's deal: the generator's pinned outputs (the same pins as
// tests/engine/test_rng.py), the settings a start is dealt with, and the shape of each game's
// start.  tests/client/test_node_deal_vectors.py compares every event with the engine's own.

const assert = require('node:assert/strict');
const { test } = require('node:test');
const {
  DealRng,
  InvalidSettings,
  beloteDeal,
  bestiaStart,
  dealSettings,
  startShown,
} = require('../lib/deal');

const draws = (rng, count, draw) => Array.from({ length: count }, () => draw(rng));

test('SplitMix64 seeded with 0 gives the published reference sequence', () => {
  const rng = new DealRng(0n);
  assert.equal(rng.next64(), 0xe220a8397b1dcdafn);
  assert.equal(rng.next64(), 0x6e789e6aa1b965f4n);
});

test("the engine's deal streams are pinned", () => {
  assert.deepEqual(
    draws(DealRng.forDeal(42, 0), 3, (rng) => rng.next64()),
    [5435267632349149299n, 7523804766597586011n, 253944492032632687n],
  );
  assert.deepEqual(
    draws(DealRng.forDeal(42, 7, 1), 10, (rng) => rng.below(10)),
    [1, 7, 6, 8, 8, 2, 8, 1, 2, 6],
  );
  const items = [...Array(10).keys()];
  DealRng.forDeal(1, 2).shuffle(items);
  assert.deepEqual(items, [2, 0, 5, 7, 8, 3, 4, 9, 1, 6]);
});

test('streams differ by seed, deal and stream, and a seed is taken mod 2^64', () => {
  const firsts = new Set();
  for (let seed = 0; seed < 4; seed += 1) {
    for (let deal = 0; deal < 4; deal += 1) {
      for (let stream = 0; stream < 3; stream += 1) {
        firsts.add(DealRng.forDeal(seed, deal, stream).next64());
      }
    }
  }
  assert.equal(firsts.size, 48);
  // Seeds as BigInts, decimal strings or Numbers alike; the engine masks a seed to 64 bits.
  const first = (seed) => DealRng.forDeal(seed, 0).next64();
  assert.equal(first('9223372036854775783'), first(9223372036854775783n));
  assert.equal(first(2n ** 64n + 5n), first(5));
});

test('below and the seeding refuse what the engine refuses', () => {
  for (const bad of [0, 2 ** 32, -1, 1.5]) {
    assert.throws(() => new DealRng(1n).below(bad), /below\(\) takes 1 <= n < 2\*\*32/);
  }
  assert.throws(() => DealRng.forDeal(-1, 0), /non-negative/);
  assert.throws(() => new DealRng(1n).shuffleTop([...Array(5).keys()], 5), /0\.\.4 steps/);
});

test('below is unbiased enough', () => {
  const counts = [0, 0, 0];
  const rng = DealRng.forDeal(7, 0);
  for (let i = 0; i < 30_000; i += 1) counts[rng.below(3)] += 1;
  for (const count of counts) assert.ok(count > 9_400 && count < 10_600, String(counts));
});

test('a shuffle is Fisher-Yates over below, from the last position down', () => {
  for (const size of [0, 1, 2, 10, 32, 40, 63, 64, 100]) {
    for (let seed = 0; seed < 5; seed += 1) {
      const shuffled = [...Array(size).keys()];
      const reference = [...shuffled];
      const rng = DealRng.forDeal(seed, size);
      const stepByStep = new DealRng(rng.state);
      rng.shuffle(shuffled);
      for (let i = size - 1; i > 0; i -= 1) {
        const j = stepByStep.below(i + 1);
        [reference[i], reference[j]] = [reference[j], reference[i]];
      }
      assert.deepEqual(shuffled, reference);
      assert.equal(rng.state, stepByStep.state);
    }
  }
});

test('shuffleTop fixes the top as the whole shuffle would', () => {
  const whole = [...Array(40).keys()];
  const top = [...whole];
  DealRng.forDeal(3, 1).shuffle(whole);
  DealRng.forDeal(3, 1).shuffleTop(top, 21);
  assert.deepEqual(top.slice(-21), whole.slice(-21));
});

test("a match's settings: the engine's defaults for what is absent", () => {
  assert.deepEqual(dealSettings('belote', null), {
    deals: 4,
    first_dealer: 0,
    target_score: null,
    max_deals: 24,
    duplicate: false,
  });
  // As the transport decodes a GameSettings: the member named, absent optionals left out.
  const decoded = { game: 'bestia', bestia: { seats: 6, _seats: 'seats', ante_mode: 'dealer' } };
  assert.deepEqual(dealSettings('bestia', decoded), {
    seats: 6,
    stake: 10,
    ante_mode: 'dealer',
    rounds: 2,
    blind_raises: true,
    giro_max_hands: 10,
    first_dealer: 0,
  });
  assert.equal(dealSettings('belote', { belote: { first_dealer: 3 } }).first_dealer, 3);
});

test('settings the engine refuses are refused, saying which', () => {
  for (const [game, given, why] of [
    ['belote', { first_dealer: 4 }, 'first_dealer must be 0..3, got 4'],
    ['belote', { deals: 0 }, 'deals must be 1..1000, got 0'],
    ['belote', { duplicate: true, deals: 3 }, 'deals must be even, got 3'],
    ['belote', { target_score: 0 }, 'target_score must be 1..100000, got 0'],
    ['belote', { target_score: 9, max_deals: 5, duplicate: true }, 'max_deals must be even'],
    ['bestia', { seats: 8 }, 'seats must be 4..7, got 8'],
    ['bestia', { stake: 0 }, 'stake must be 1..1000000, got 0'],
    ['bestia', { ante_mode: 'none' }, "ante_mode must be 'all' or 'dealer', got none"],
    ['bestia', { rounds: 101 }, 'rounds must be 1..100, got 101'],
    ['bestia', { giro_max_hands: 0 }, 'giro_max_hands must be 1..1000, got 0'],
    ['bestia', { seats: 4, first_dealer: 4 }, 'first_dealer must be 0..3, got 4'],
  ]) {
    assert.throws(
      () => dealSettings(game, { game, [game]: given }),
      (error) => error instanceof InvalidSettings && error.message.includes(why),
      `${game} ${JSON.stringify(given)}`,
    );
  }
  assert.throws(
    () => dealSettings('belote', { game: 'bestia', bestia: {} }),
    /bestia settings were given for a belote match/,
  );
});

const cardKey = (card) => `${card.suit}/${card.rank}`;

test("a Belote deal's start: the deal, five cards to each seat from the dealer's left, the turned card", () => {
  const settings = dealSettings('belote', { belote: { first_dealer: 2 } });
  const events = beloteDeal(settings, 12345n, 0);
  assert.deepEqual(
    events.map(({ audience, event }) => [audience, Object.keys(event)[0]]),
    [
      [0b1111, 'deal_started'],
      [0b1000, 'cards_dealt'], // seat 3, after dealer 2
      [0b0001, 'cards_dealt'],
      [0b0010, 'cards_dealt'],
      [0b0100, 'cards_dealt'],
      [0b1111, 'card_turned'],
    ],
  );
  assert.deepEqual(events[0].event.deal_started, {
    deal_number: 0,
    dealer: 2,
    replay_of: undefined,
  });
  const cards = [
    ...events.slice(1, 5).flatMap(({ event }) => event.cards_dealt.cards),
    events[5].event.card_turned.card,
  ];
  assert.equal(new Set(cards.map(cardKey)).size, 21);
  // Duplicate mode: deal 1 replays deal 0's shuffle, with every seat one place on.
  const duplicate = dealSettings('belote', { belote: { duplicate: true } });
  const [first, second] = [0, 1].map((deal) => beloteDeal(duplicate, 12345n, deal));
  assert.equal(second[0].event.deal_started.replay_of, 0);
  assert.deepEqual(second[5], first[5]);
  assert.deepEqual(second[1].event.cards_dealt.cards, first[1].event.cards_dealt.cards);
  assert.equal(second[1].event.cards_dealt.seat, first[1].event.cards_dealt.seat + 1);
});

test('a Bestia start: the hand, the antes, the hidden hands and the turned trump', () => {
  for (const [given, antes] of [
    [{ seats: 7, stake: 3 }, [0, 1, 2, 3, 4, 5, 6]],
    [{ seats: 4, ante_mode: 'dealer', first_dealer: 2, rounds: 1 }, [2]],
  ]) {
    const settings = dealSettings('bestia', { bestia: given });
    const events = bestiaStart(settings, 2n ** 63n - 25n);
    const everyone = (1 << settings.seats) - 1;
    assert.deepEqual(events[0], {
      audience: everyone,
      event: {
        hand_started: {
          hand_number: 0,
          dealer: settings.first_dealer,
          giro: settings.rounds === 1,
          dealer_hand: 1,
        },
      },
    });
    assert.deepEqual(
      events.slice(1, -2).map(({ audience, event }) => [audience, event.ante_paid]),
      antes.map((seat) => [everyone, { seat, amount: settings.stake }]),
    );
    const [dealt, turned] = events.slice(-2);
    assert.equal(dealt.audience, 0); // nobody has looked yet
    const cards = dealt.event.hand_dealt.cards;
    assert.equal(cards.length, 4 * settings.seats);
    assert.equal(turned.audience, everyone);
    assert.equal(turned.event.trump_turned.number, 1);
    const keys = [...cards, turned.event.trump_turned.card].map(cardKey);
    assert.equal(new Set(keys).size, 4 * settings.seats + 1);
    // What a seat is shown: every event but the hidden hands, with their indices.
    const shown = startShown('bestia', settings, 2n ** 63n - 25n, 1);
    assert.deepEqual(
      shown.map(({ index }) => index),
      [...events.keys()].filter((index) => index !== events.length - 2),
    );
  }
});
