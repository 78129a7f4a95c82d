#!/usr/bin/env node
'use strict';
// lib/deal.js against the engine's own deals (tests/client/test_node_deal_vectors.py writes them):
//
//   node clients/node/test/deal_vectors.js VECTORS
//
// VECTORS is a JSON object:
//   rng: [{seed, deal, stream (or state), next64: [decimal strings], below: [[n, value], ...],
//          shuffles: [[size, [the shuffled indices]], ...]}]  each from a fresh DealRng.forDeal
//          (or new DealRng(state))
//   cases: [{game, seed (decimal string), settings (base64 of a GameSettings, or null),
//            deals: [{deal_number, first_index, events: [{audience, event: base64 of the
//            GameEvent}]}]}]  the events of each deal's start the engine recorded, in order
// and prints one JSON object: what was compared (rng, cases, deals, events, seats) and the
// failures (empty when the port deals as the engine does).  For each case's start and each
// seat, the session's check (startDealtFrom) must accept exactly what the engine gave the seat,
// decoded as the transport decodes it, and must say which event is missing when one is.
//   firsts: [{seed, settings, seat, observation (base64 of a belote Observation), why (the
//            Python SDK's verdict on it as a seat's first request: null or its words)}]

const fs = require('node:fs');
const { loadProto } = require('..');
const {
  DealRng,
  beloteDeal,
  bestiaStart,
  ShownStart,
  canonicalEncoding,
  dealSettings,
  fingerprint,
  firstHandDiffers,
  startDealtFrom,
} = require('../lib/deal');

const { definition } = loadProto();
const gameEvent = definition['bisca.v1.GameEvent'];
const gameSettings = definition['bisca.v1.GameSettings'];
const observationType = definition['bisca.v1.belote.Observation'];
const types = { gameEvent, observation: observationType };

const vectors = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const counts = { rng: 0, cases: 0, deals: 0, events: 0, seats: 0, firsts: 0 };
const failures = [];
const fail = (where, what) => failures.length < 50 && failures.push(`${where}: ${what}`);

function sameList(where, got, expected) {
  const [a, b] = [JSON.stringify(got), JSON.stringify(expected)];
  if (a !== b) fail(where, `${a} != ${b}`);
}

for (const rng of vectors.rng) {
  const where =
    rng.state === undefined
      ? `rng seed ${rng.seed} deal ${rng.deal} stream ${rng.stream}`
      : `rng state ${rng.state}`;
  const fresh = () =>
    rng.state === undefined
      ? DealRng.forDeal(BigInt(rng.seed), rng.deal, rng.stream)
      : new DealRng(BigInt(rng.state));
  const stream = fresh();
  sameList(
    `${where} next64`,
    rng.next64.map(() => stream.next64().toString()),
    rng.next64,
  );
  const draws = fresh();
  sameList(
    `${where} below`,
    rng.below.map(([n]) => [n, draws.below(n)]),
    rng.below,
  );
  for (const [size, shuffled] of rng.shuffles) {
    const items = [...Array(size).keys()];
    fresh().shuffle(items);
    sameList(`${where} shuffle of ${size}`, items, shuffled);
  }
  counts.rng += 1;
}

for (const vector of vectors.cases) {
  const { game } = vector;
  const seed = BigInt(vector.seed);
  const given = vector.settings === null ? null : decode(gameSettings, vector.settings);
  const settings = dealSettings(game, given);
  const where = `${game} seed ${vector.seed} settings ${JSON.stringify(settings)}`;
  for (const deal of vector.deals) {
    const dealt =
      game === 'belote'
        ? beloteDeal(settings, seed, deal.deal_number)
        : bestiaStart(settings, seed);
    if (dealt.length !== deal.events.length) {
      fail(
        `${where} deal ${deal.deal_number}`,
        `${dealt.length} events, not ${deal.events.length}`,
      );
      continue;
    }
    dealt.forEach(({ audience, event }, i) => {
      const index = deal.first_index + i;
      const expected = deal.events[i];
      const bytes = canonicalEncoding(gameEvent, { index, [game]: event });
      const engines = canonicalEncoding(gameEvent, decode(gameEvent, expected.event));
      if (audience !== expected.audience || !bytes.equals(engines)) {
        fail(
          `${where} event ${index}`,
          `the port deals ${JSON.stringify({ audience, event })}, the engine ` +
            JSON.stringify({ audience: expected.audience, ...decode(gameEvent, expected.event) }),
        );
      }
      counts.events += 1;
    });
    counts.deals += 1;
    if (deal.deal_number === 0) checkEverySeat(where, game, settings, seed, deal.events);
  }
  counts.cases += 1;
}

/** startDealtFrom accepts what the engine gave each seat, and names an event left out. */
function checkEverySeat(where, game, settings, seed, events) {
  const seats = game === 'belote' ? 4 : settings.seats;
  for (let seat = 0; seat < seats; seat += 1) {
    const shown = new ShownStart(types);
    for (const { audience, event } of events) {
      if ((audience >> seat) & 1) shown.show(decode(gameEvent, event));
    }
    const why = startDealtFrom(game, settings, seed, seat, shown, gameEvent);
    if (why !== null) fail(`${where} seat ${seat}`, why);
    const [last] = [...shown.events.keys()].slice(-1);
    shown.events.delete(last);
    const missing = startDealtFrom(game, settings, seed, seat, shown, gameEvent);
    if (missing === null || !missing.startsWith(`event ${last} of the start`)) {
      fail(`${where} seat ${seat} without event ${last}`, String(missing));
    }
    counts.seats += 1;
  }
}

// Belote first requests: the check of the hand (firstHandDiffers) says what the Python SDK's
// says, word for word.
for (const first of vectors.firsts || []) {
  const given = first.settings === null ? null : decode(gameSettings, first.settings);
  const settings = dealSettings('belote', given);
  const shown = new ShownStart(types);
  shown.ask({
    observation: { game: 'belote', belote: decode(observationType, first.observation) },
  });
  const why = firstHandDiffers(settings, BigInt(first.seed), first.seat, shown);
  if (why !== first.why) {
    fail(
      `first request seed ${first.seed} seat ${first.seat} ${first.observation}`,
      `${why} != ${first.why}`,
    );
  }
  counts.firsts += 1;
}

function decode(type, base64) {
  return type.deserialize(Buffer.from(base64, 'base64'));
}

process.stdout.write(`${JSON.stringify({ ...counts, failures })}\n`);
