'use strict';
// lib/kept.js: the per-match tables' bounds, and footprint() against what decoded messages
// really hold.

const assert = require('node:assert/strict');
const { test } = require('node:test');
const v8 = require('node:v8');
const vm = require('node:vm');
const { loadProto } = require('..');
const { Kept, MAX_KEPT_BYTES, MAX_MATCHES, footprint } = require('../lib/kept');

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc');

/** A Kept table with small bounds, and what it forgot, as [key, reason]. */
function table(maxCount, maxBytes) {
  const forgotten = [];
  const kept = new Kept('things', (what, key, reason) => forgotten.push([what, key, reason]), {
    maxCount,
    maxBytes,
  });
  return { kept, forgotten };
}

test('the bounds are 1,024 entries and 16 MiB by default', () => {
  assert.equal(MAX_MATCHES, 1024);
  assert.equal(MAX_KEPT_BYTES, 16 * 1024 * 1024);
  const kept = new Kept('things', () => {});
  assert.equal(kept.maxCount, MAX_MATCHES);
  assert.equal(kept.maxBytes, MAX_KEPT_BYTES);
});

test('past the count the least recently used goes, a touched one stays', () => {
  const { kept, forgotten } = table(3, Infinity);
  for (const key of ['a', 'b', 'c']) kept.put(key, key.toUpperCase(), 1);
  kept.touch('a'); // now b is the least recently used
  kept.put('d', 'D', 1);
  assert.deepEqual([...kept.keys()], ['c', 'a', 'd']);
  assert.deepEqual([...kept.values()], ['C', 'A', 'D']);
  assert.deepEqual(forgotten, [['things', 'b', 'count']]);
  assert.equal(kept.bytes, 3);
});

test('past the bytes the least recently used go until it fits; the newest always stays', () => {
  const { kept, forgotten } = table(100, 10);
  kept.put('a', 1, 4);
  kept.put('b', 2, 4);
  kept.put('c', 3, 4); // 12 > 10: a goes
  assert.deepEqual([...kept.keys()], ['b', 'c']);
  kept.put('d', 4, 25); // alone over the bound: every other goes, it stays
  assert.deepEqual([...kept.keys()], ['d']);
  assert.equal(kept.bytes, 25);
  assert.deepEqual(
    forgotten.map(([, key, reason]) => `${key} ${reason}`),
    ['a bytes', 'b bytes', 'c bytes'],
  );
  // Put again with another cost, it is counted once.
  kept.put('d', 5, 2);
  assert.equal(kept.bytes, 2);
  assert.equal(kept.get('d'), 5);
});

test('an entry grown in place (touch with a cost) makes room by the same rule', () => {
  const { kept, forgotten } = table(100, 10);
  kept.put('a', {}, 3);
  kept.put('b', {}, 3);
  kept.touch('a', 8); // a is now the most recent, and 11 > 10: b goes
  assert.deepEqual([...kept.keys()], ['a']);
  assert.equal(kept.bytes, 8);
  assert.equal(kept.cost('a'), 8);
  assert.deepEqual(forgotten, [['things', 'b', 'bytes']]);
  kept.touch('missing', 100); // nothing to touch
  assert.equal(kept.bytes, 8);
  assert.ok(kept.delete('a'));
  assert.ok(!kept.delete('a'));
  assert.equal(kept.bytes, 0);
  kept.put('c', {}, 4);
  kept.clear();
  assert.equal(kept.size, 0);
  assert.equal(kept.bytes, 0);
});

test('footprint counts strings by their width, buffers by their length, and stops past a limit', () => {
  assert.equal(footprint(null), 0);
  assert.equal(footprint(42), 0);
  const ascii = footprint('x'.repeat(1000));
  const wide = footprint('漢'.repeat(1000));
  assert.ok(ascii >= 1000 && ascii < 1100, String(ascii));
  assert.ok(wide >= 2000 && wide < 2100, String(wide));
  assert.ok(footprint(Buffer.alloc(5000)) >= 5000);
  assert.ok(footprint({ id: 'y'.repeat(10_000) }) > 10_000); // a string in an object
  const many = Array.from({ length: 100_000 }, () => ({ a: 1 }));
  const whole = footprint(many);
  assert.ok(whole > 100_000 * 64, String(whole));
  const cut = footprint(many, 1000);
  assert.ok(cut > 1000 && cut < whole / 4, String(cut)); // it stopped past the array's slots
});

// What decoded requests hold, against footprint(): the estimate must never be below it.
const { definition, decodeServerMessage } = loadProto();
const ServerMessage = definition['bisca.v1.ServerMessage'];
const WIRE = 256 * 1024;
const ONE_CARD = { suit: 'SUIT_HEARTS', rank: 'RANK_ACE' };

/** A request of about WIRE bytes, its bulk made by `bulk` (an observation, legal actions). */
const shapes = {
  'legal Pass actions': () => ({
    observation: { belote: { seat: 0 } },
    legal_actions: Array.from({ length: WIRE / 6 }, () => ({ belote: { pass: {} } })),
  }),
  'legal PlayCard actions': () => ({
    observation: { belote: { seat: 0 } },
    legal_actions: Array.from({ length: WIRE / 12 }, () => ({
      belote: { play_card: { card: ONE_CARD } },
    })),
  }),
  'an observation of empty cards': () => ({
    observation: { belote: { seat: 0, hand: Array.from({ length: WIRE / 2 }, () => ({})) } },
    legal_actions: [{ belote: { pass: {} } }],
  }),
  'an observation of empty deal results': () => ({
    observation: {
      belote: { seat: 0, deal_results: Array.from({ length: WIRE / 2 }, () => ({})) },
    },
    legal_actions: [{ belote: { pass: {} } }],
  }),
  'an observation of numbers': () => ({
    observation: { belote: { seat: 0, card_points: Array.from({ length: WIRE }, () => 1) } },
    legal_actions: [{ belote: { pass: {} } }],
  }),
  'a match id': () => ({
    match_id: 'm'.repeat(WIRE),
    observation: { belote: { seat: 0 } },
    legal_actions: [{ belote: { pass: {} } }],
  }),
  'a real request (7 tricks played, 8 cards legal)': () => ({
    observation: {
      belote: {
        seat: 0,
        phase: 'PHASE_PLAYING',
        hand: Array.from({ length: 8 }, () => ONE_CARD),
        tricks: Array.from({ length: 7 }, () => ({
          leader: 1,
          plays: Array.from({ length: 4 }, () => ({ seat: 1, card: ONE_CARD })),
          winner: 2,
          points: 20,
        })),
        card_points: [10, 20],
        match_scores: [100, 200],
      },
    },
    legal_actions: Array.from({ length: 8 }, () => ({
      belote: { play_card: { card: ONE_CARD } },
    })),
  }),
};

/** What `copies` decoded requests of a shape hold each, and footprint() of each, in bytes. */
function measured(make, copies) {
  // The heap only: these requests hold no Buffer, and `external` falls when the buffers of the
  // shape before are freed, which happens in the background after a collection.
  const held = () => {
    gc();
    return process.memoryUsage().heapUsed;
  };
  const bytes = Array.from({ length: copies }, (_, index) =>
    ServerMessage.serialize({
      action_request: { request_id: `r${index}`, match_id: `m${index}`, ...make() },
    }),
  );
  const before = held();
  const decoded = bytes.map((message) => decodeServerMessage(message));
  const holds = (held() - before) / copies;
  const estimate = decoded.reduce((sum, message) => sum + footprint(message), 0) / copies;
  return { wire: bytes[0].length, holds, estimate };
}

test('footprint() is never below what a decoded request holds, and at most 3 times it', () => {
  const figures = [];
  for (const [shape, make] of Object.entries(shapes)) {
    // (A function call each: what the last one decoded is garbage by the next measure.)
    const { wire, holds, estimate } = measured(make, shape.startsWith('a real') ? 2000 : 8);
    figures.push(
      `${shape}: ${wire} bytes on the wire hold ${Math.round(holds)} ` +
        `(x${(holds / wire).toFixed(1)}), estimated ${Math.round(estimate)} ` +
        `(x${(estimate / holds).toFixed(2)} what is held)`,
    );
    assert.ok(estimate >= holds && estimate <= 3 * holds, figures.at(-1));
  }
  console.log(figures.join('\n')); // eslint-disable-line no-console
});
