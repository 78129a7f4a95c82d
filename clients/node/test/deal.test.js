'use strict';
// The Node SDK checks the deal: MatchStarted's commitment against the salt and seed MatchEnded
// reveals, and the start the seat was shown against the start the revealed seed deals
// (deal_verified), network-free; and the transport's decoding keeps the seed exact.

const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const { test } = require('node:test');
const { Session, dealCommitment, loadProto } = require('..');
const { KEPT_EVENTS, dealSettings, startShown } = require('../lib/deal');
const { firstObservation } = require('./support');

const MATCH = 'm-5eed';
const SALT = Buffer.from([...Array(16).keys()]); // 00 01 .. 0f
const SEED = '9223372036854775783'; // 2^63 - 25: a 63-bit seed, like the server's random ones
const SEAT = 1;
// What the server (bisca.wire.deal_commitment) computes for SALT, SEED and MATCH, and for seed 7.
const COMMITMENT = Buffer.from(
  'bca0b9738b01cd7d23fec1d6910d028f6ecd4ee6293433298ff4e462e871d786',
  'hex',
);
const COMMITMENT_SEED_7 = '7755eccc9503da38532c34a64855c1c7195a57e3ecdb5f90980f5b047118b10a';

const started = (
  commitment,
  { matchId = MATCH, resumed = false, game = 'GAME_BELOTE', settings = null } = {},
) => ({
  kind: 'match_started',
  match_started: {
    match_id: matchId,
    game,
    settings,
    seat: SEAT,
    seats: [],
    resumed,
    deal_commitment: commitment,
  },
});

// As the transport gives it: `seed` a (rounded) Number, `exact_seed` the decimal string.
const ended = ({
  salt = SALT,
  seed = SEED,
  matchId = MATCH,
  status = 'MATCH_STATUS_FINISHED',
  reason = '',
  sealed = false,
} = {}) => ({
  kind: 'match_ended',
  match_ended: {
    match_id: matchId,
    seat: SEAT,
    status,
    seats: [],
    reason,
    seed: Number(seed),
    exact_seed: seed,
    deal_salt: salt,
    deal_sealed: sealed,
  },
});

/** The MatchEnded the bot's onMatchEnd hook gets after `messages`, and the errors logged. */
async function playOut(...messages) {
  const ends = [];
  const errors = [];
  const infos = [];
  const logger = {
    debug() {},
    info: (text) => infos.push(text),
    warn() {},
    error: (text) => errors.push(text),
  };
  const session = new Session((request) => request.legalActions[0], {
    name: 'n',
    logger,
    onMatchEnd: (end) => ends.push(end),
  });
  for (const message of messages) {
    const replies = await session.handle(message);
    assert.equal(replies.length, message.kind === 'action_request' ? 1 : 0); // the answer
  }
  assert.equal(ends.length, 1);
  return { end: ends[0], errors, infos };
}

test('the commitment is SHA-256(salt || seed as 8 bytes big-endian || match id in UTF-8)', () => {
  const layout = Buffer.concat([
    SALT,
    Buffer.from('7fffffffffffffe7', 'hex'), // 2^63 - 25, big-endian
    Buffer.from(MATCH, 'utf8'),
  ]);
  assert.deepEqual(crypto.createHash('sha256').update(layout).digest(), COMMITMENT);
  assert.deepEqual(dealCommitment(SALT, SEED, MATCH), COMMITMENT);
  assert.deepEqual(dealCommitment(SALT, BigInt(SEED), MATCH), COMMITMENT);
  assert.equal(dealCommitment(SALT, 7, MATCH).toString('hex'), COMMITMENT_SEED_7);
  assert.throws(() => dealCommitment(SALT, Number(SEED), MATCH), RangeError); // not exact
  assert.throws(() => dealCommitment(SALT, '18446744073709551616', MATCH), RangeError); // 2^64
});

test('a correct commitment verifies', async () => {
  const { end, errors, infos } = await playOut(started(COMMITMENT), ended());
  assert.equal(end.deal_verified, true);
  assert.equal(end.exact_seed, SEED);
  assert.deepEqual(errors, []);
  assert.ok(infos.some((line) => line.includes('deal verified')));
});

for (const [name, reveal] of [
  ['a wrong salt', () => ended({ salt: Buffer.alloc(16) })],
  ['a wrong seed', () => ended({ seed: '9223372036854775784' })],
  // the start and the end are of "m-other"; the commitment was made with MATCH's id
  ['a wrong match id', () => ended({ matchId: 'm-other' })],
]) {
  test(`${name} is a mismatch, logged as an error`, async () => {
    const message = reveal();
    const start = started(COMMITMENT, { matchId: message.match_ended.match_id });
    const { end, errors } = await playOut(start, message);
    assert.equal(end.deal_verified, false);
    assert.equal(errors.length, 1);
    assert.match(errors[0], /does not match its commitment/);
    assert.ok(errors[0].includes(COMMITMENT.toString('hex')));
  });
}

test('no commitment gives null', async () => {
  for (const commitment of [Buffer.alloc(0), undefined]) {
    const { end, errors } = await playOut(started(commitment), ended());
    assert.equal(end.deal_verified, null);
    assert.deepEqual(errors, []);
  }
  // the end of a match whose start this connection never got: nothing to check against
  assert.equal((await playOut(ended())).end.deal_verified, null);
});

test('a failed match reveals its salt and is checked too', async () => {
  const failed = { status: 'MATCH_STATUS_FAILED', reason: 'a bot never connected' };
  assert.equal((await playOut(started(COMMITMENT), ended(failed))).end.deal_verified, true);
  const wrong = ended({ ...failed, seed: '1' });
  assert.equal((await playOut(started(COMMITMENT), wrong)).end.deal_verified, false);
});

test('a sealed deal (a twin still played) is not checked yet, and is no error', async () => {
  const sealed = ended({ salt: Buffer.alloc(0), seed: '0', sealed: true });
  const { end, errors, infos } = await playOut(started(COMMITMENT), sealed);
  assert.equal(end.deal_verified, null);
  assert.deepEqual(errors, []);
  assert.ok(infos.some((line) => line.includes('stays sealed')));
});

test('a commitment with no salt revealed is not verified', async () => {
  const { end, errors } = await playOut(started(COMMITMENT), ended({ salt: Buffer.alloc(0) }));
  assert.equal(end.deal_verified, false);
  assert.match(errors[0], /revealed no salt/);
});

test('a resumed start must carry the same commitment', async () => {
  const resumed = started(COMMITMENT, { resumed: true });
  assert.equal((await playOut(started(COMMITMENT), resumed, ended())).end.deal_verified, true);
  // Another commitment after a reconnect, and a reveal that hashes to it: still a changed deal.
  const otherSalt = Buffer.alloc(16);
  const second = started(dealCommitment(otherSalt, SEED, MATCH), { resumed: true });
  const { end, errors } = await playOut(started(COMMITMENT), second, ended({ salt: otherSalt }));
  assert.equal(end.deal_verified, false);
  assert.match(errors[0], /commits to another deal/);
});

test('a seed not known exactly is not checked (null), and says why', async () => {
  const message = ended();
  delete message.match_ended.exact_seed; // a transport that decoded the seed as a Number
  const { end, errors } = await playOut(started(COMMITMENT), message);
  assert.equal(end.deal_verified, null);
  assert.match(errors[0], /not known exactly/);
});

test('commitments survive a reconnect: a new hello keeps them', async () => {
  const ends = [];
  const session = new Session(() => null, {
    name: 'n',
    logger: { debug() {}, info() {}, warn() {}, error() {} },
    onMatchEnd: (end) => ends.push(end.deal_verified),
  });
  session.hello();
  await session.handle(started(COMMITMENT));
  session.hello();
  await session.handle(ended());
  await session.handle(ended()); // nothing left to check the second time
  assert.deepEqual(ends, [true, null]);
});

test("the transport's decoding gives MatchEnded's seed exactly as exact_seed", () => {
  const { definition, decodeServerMessage } = loadProto();
  const bytes = definition['bisca.v1.ServerMessage'].serialize({
    match_ended: { match_id: MATCH, seat: SEAT, seed: SEED, deal_salt: SALT },
  });
  const message = decodeServerMessage(bytes);
  assert.equal(message.kind, 'match_ended');
  assert.equal(message.match_ended.exact_seed, SEED);
  assert.equal(typeof message.match_ended.seed, 'number'); // as before, for bots that use it
  assert.deepEqual(Buffer.from(message.match_ended.deal_salt), SALT);
  const other = decodeServerMessage(
    definition['bisca.v1.ServerMessage'].serialize({ welcome: { bot_name: 'b' } }),
  );
  assert.equal(other.kind, 'welcome');
});

// ---- the start dealt again from the revealed seed ----------------------------------------

const { definition, decodeServerMessage } = loadProto();

/** A ServerMessage as the transport gives it: encoded, then decoded. */
const throughWire = (message) =>
  decodeServerMessage(definition['bisca.v1.ServerMessage'].serialize(message));

/** The events seat SEAT is shown at the start of a match dealt from `seed`, changed by `edit`. */
function startOf(seed, { game = 'belote', settings = null, edit = (events) => events } = {}) {
  return edit(startShown(game, dealSettings(game, settings), BigInt(seed), SEAT));
}

/** The events, live in an EventBatch. */
const batch = (events) => throughWire({ events: { match_id: MATCH, seat: SEAT, events } });

/** A request of seat SEAT carrying `events`, its observation the one `seed` deals. */
const request = (events = [], observation = firstObservation(SEED, SEAT)) =>
  throughWire({
    action_request: {
      request_id: 'r1',
      match_id: MATCH,
      seat: SEAT,
      observation: { belote: observation },
      legal_actions: [{ belote: { pass: {} } }],
      attempt: 1,
      events,
    },
  });

/** `event` with its game's member changed by `change` (a copy). */
const changed = (event, change) => {
  const copy = structuredClone(event);
  change(copy.belote || copy.bestia);
  return copy;
};

test('cards dealt from the committed seed verify', async () => {
  const { end, errors, infos } = await playOut(started(COMMITMENT), batch(startOf(SEED)), ended());
  assert.equal(end.deal_verified, true);
  assert.deepEqual(errors, []);
  assert.ok(infos.some((line) => line.endsWith('; deal verified')));
});

test('cards dealt from another seed than the committed one are caught', async () => {
  // The hostile-server review's rigged deal: an honest commitment to SEED, the seat dealt
  // the cards of seed 999, SEED revealed.  The hash matches; the cards do not.
  const { end, errors, infos } = await playOut(started(COMMITMENT), batch(startOf(999)), ended());
  assert.equal(end.deal_verified, false);
  assert.equal(errors.length, 1);
  assert.ok(
    errors[0].startsWith(
      `match ${MATCH}: the cards were not dealt from the seed the server committed to (${SEED}): ` +
        `event 1 is not what seed ${SEED} deals: {"index":1,"belote":{"cards_dealt":{`,
    ),
    errors[0],
  );
  assert.ok(errors[0].endsWith(' was sent'), errors[0]);
  assert.ok(infos.some((line) => line.endsWith('; DEAL NOT VERIFIED')));
});

test('any field of the start the engine gives is compared', async () => {
  const swap = (cards) => cards.reverse();
  for (const [index, what, change] of [
    [0, 'the dealer', (event) => (event.deal_started.dealer = 1)],
    [0, 'a replay_of the engine leaves absent', (event) => (event.deal_started.replay_of = 0)],
    [1, "another seat's number", (event) => (event.cards_dealt.seat = 2)],
    [1, 'the same cards in another order', (event) => swap(event.cards_dealt.cards)],
    [1, 'a card too many', (event) => event.cards_dealt.cards.push(event.cards_dealt.cards[0])],
    [5, 'another turned card', (event) => (event.card_turned.card.rank = 'RANK_ACE')],
    [5, 'no turned card', (event) => (event.card_turned.card = null)],
  ]) {
    const edit = (events) =>
      events.map((event) => (event.index === index ? changed(event, change) : event));
    const honest = startOf(SEED);
    assert.notDeepEqual(edit(honest), honest, what); // (the change is one)
    const { end, errors } = await playOut(
      started(COMMITMENT),
      batch(startOf(SEED, { edit })),
      ended(),
    );
    assert.equal(end.deal_verified, false, what);
    assert.match(errors[0], new RegExp(`: event ${index} is not what seed ${SEED} deals: `), what);
  }
});

test('an event of the start never sent is caught, so is a seat asked and shown nothing', async () => {
  const withoutTurned = startOf(SEED, { edit: (events) => events.slice(0, -1) });
  let { end, errors } = await playOut(started(COMMITMENT), batch(withoutTurned), ended());
  assert.equal(end.deal_verified, false);
  assert.match(errors[0], /: event 5 of the start \(card_turned\) was never sent$/);
  ({ end, errors } = await playOut(started(COMMITMENT), request(), ended()));
  assert.equal(end.deal_verified, false);
  assert.match(errors[0], /: event 0 of the start \(deal_started\) was never sent$/);
});

test('events inside a request and inside the end count as live ones do', async () => {
  const events = startOf(SEED);
  const end = throughWire(ended());
  end.match_ended.events = throughWire({ events: { events: events.slice(2) } }).events.events;
  end.match_ended.exact_seed = SEED;
  const { end: checked, errors } = await playOut(
    started(COMMITMENT),
    request(events.slice(0, 2)),
    end,
  );
  assert.deepEqual(errors, []);
  assert.equal(checked.deal_verified, true);
});

test('the start is dealt with the settings the match was started with', async () => {
  for (const [game, settings, other] of [
    ['belote', { belote: { first_dealer: 2 } }, { belote: { first_dealer: 3 } }],
    [
      'bestia',
      { bestia: { seats: 4, ante_mode: 'dealer', stake: 3, rounds: 1 } },
      { bestia: { seats: 4, ante_mode: 'dealer', stake: 3, rounds: 2 } },
    ],
  ]) {
    const start = started(COMMITMENT, { game: `GAME_${game.toUpperCase()}`, settings });
    const honest = await playOut(start, batch(startOf(SEED, { game, settings })), ended());
    assert.equal(honest.end.deal_verified, true, game);
    const dealt = batch(startOf(SEED, { game, settings: other }));
    const { end, errors } = await playOut(start, dealt, ended());
    assert.equal(end.deal_verified, false, game);
    assert.match(errors[0], new RegExp(`event 0 is not what seed ${SEED} deals`), game);
  }
});

test('a start whose settings the engine refuses cannot be dealt again: not verified', async () => {
  const start = started(COMMITMENT, { settings: { belote: { first_dealer: 7 } } });
  const { end, errors } = await playOut(start, batch(startOf(SEED)), ended());
  assert.equal(end.deal_verified, false);
  assert.match(
    errors[0],
    /its start could not be read \(first_dealer must be 0\.\.3, got 7\): the deal cannot be dealt again/,
  );
});

test("events past the first KEPT_EVENTS are not kept, nor another seat's", async () => {
  const session = new Session(() => null, {
    name: 'n',
    logger: { debug() {}, info() {}, warn() {}, error() {} },
  });
  await session.handle(started(COMMITMENT));
  const late = { index: KEPT_EVENTS, belote: { deal_voided: { deal_number: 0 } } };
  await session.handle(batch([...startOf(SEED), late]));
  await session.handle(
    throughWire({ events: { match_id: MATCH, seat: SEAT + 1, events: startOf(999) } }),
  );
  const { shown } = session.commitments.get(`${MATCH}/${SEAT}`);
  assert.deepEqual([...shown.events.keys()], [0, 1, 5]); // seat 1 is the first dealt, after dealer 0
});

test('a seat the match does not have is not a verified deal', async () => {
  // Nothing of the start is given to seat 4 of a 4-seat Belote match: nothing would be compared.
  const seat = (message, value) => {
    const copy = structuredClone(message);
    copy[copy.kind].seat = value;
    return copy;
  };
  const start = seat(started(COMMITMENT), 4);
  const { end, errors } = await playOut(start, seat(ended(), 4));
  assert.equal(end.deal_verified, false);
  assert.deepEqual(errors, [
    `match ${MATCH}: the deal cannot be checked: seat 4 is not a seat of a 4-seat belote match`,
  ]);
});

// ---- review 37: what a hostile server did to make a rigged deal pass ----------------------

const { bestiaStart } = require('../lib/deal');
const { BeloteReplay } = require('../lib/belote_replay');
const { beloteShuffle } = require('../lib/deal');

const BESTIA = { bestia: { seats: 5 } };
const bestiaStarted = (options = {}) =>
  started(COMMITMENT, { game: 'GAME_BESTIA', settings: BESTIA, ...options });

/** Seat SEAT's look at its cards in the first Bestia hand dealt from `seed`, at `index`. */
function lookOf(seed, index, { seat = SEAT, steal = false } = {}) {
  const start = bestiaStart(dealSettings('bestia', BESTIA), BigInt(seed));
  const dealt = start.find(({ event }) => event.hand_dealt).event.hand_dealt.cards;
  let cards = dealt.slice(4 * seat, 4 * seat + 4);
  if (steal) {
    const order = (card) =>
      ['COINS', 'CUPS', 'SWORDS', 'CLUBS'].indexOf(card.suit.slice(5)) * 10 +
      ['TWO', 'THREE', 'FOUR', 'FIVE', 'SIX', 'SEVEN', 'JACK', 'QUEEN', 'KING', 'ACE'].indexOf(
        card.rank.slice(5),
      );
    const trump = start.find(({ event }) => event.trump_turned).event.trump_turned.card;
    cards = [...cards, trump].sort((a, b) => order(a) - order(b));
  }
  return { index, bestia: { hand_looked: { seat, cards } } };
}

const bestiaStart0 = (seed) => startOf(seed, { game: 'bestia', settings: BESTIA });
const bestiaEnd = () => ended();

test('(a) the first copy of a start event counts: a later one that differs fails', async () => {
  // The rigged cards first (the bot played from them), the honest ones again in the end.
  const end = throughWire(ended());
  end.match_ended.events = batch(startOf(SEED)).events.events;
  end.match_ended.exact_seed = SEED;
  const rigged = await playOut(started(COMMITMENT), batch(startOf(999)), end);
  assert.equal(rigged.end.deal_verified, false);
  assert.match(rigged.errors[0], /: event 1 was sent twice, with different content$/);
  // The same copy again (a replay after a reconnect) is fine.
  const replayed = await playOut(
    started(COMMITMENT),
    batch(startOf(SEED)),
    batch(startOf(SEED)),
    ended(),
  );
  assert.equal(replayed.end.deal_verified, true);
  // A later copy too big to keep differs from any first one.
  const big = { index: 1, belote: { cards_dealt: { seat: 1, cards: Array(5000).fill(ONE) } } };
  const oversized = await playOut(started(COMMITMENT), batch(startOf(SEED)), batch([big]), ended());
  assert.equal(oversized.end.deal_verified, false);
  assert.match(oversized.errors[0], /: event 1 was sent twice, with different content$/);
});

const ONE = { suit: 'SUIT_HEARTS', rank: 'RANK_ACE' };

test('(b) a field this SDK does not know is not compared', async () => {
  // A newer honest server's field 127 in the first event: dropped as it is decoded.
  const events = startOf(SEED);
  const bytes = Buffer.concat(
    events.map((event, at) => {
      let encoded = definition['bisca.v1.GameEvent'].serialize(event);
      if (at === 0) encoded = Buffer.concat([encoded, Buffer.from([0xf8, 0x07, 0x01])]);
      return Buffer.concat([Buffer.from([0x1a, encoded.length]), encoded]);
    }),
  );
  const head = definition['bisca.v1.EventBatch'].serialize({ match_id: MATCH, seat: SEAT });
  const message = decodeServerMessage(
    Buffer.concat([Buffer.from([0x1a, head.length + bytes.length]), head, bytes]),
  );
  assert.equal(message.events.events.length, 3);
  const { end, errors } = await playOut(started(COMMITMENT), message, ended());
  assert.deepEqual(errors, []);
  assert.equal(end.deal_verified, true);
});

test("(c) another seat's start event sent to the seat fails", async () => {
  // Event 2 is seat 2's first cards: seat 1 is never shown it, whatever it holds.
  const extra = { index: 2, belote: { cards_dealt: startOf(999)[1].belote.cards_dealt } };
  const { end, errors } = await playOut(
    started(COMMITMENT),
    batch([...startOf(SEED), extra]),
    ended(),
  );
  assert.equal(end.deal_verified, false);
  assert.match(errors[0], /: event 2 was sent, but seat 1 is not shown it$/);
});

test('(e) a commitment first seen on a resumed start is not checked (null)', async () => {
  const { end, errors, infos } = await playOut(
    started(COMMITMENT, { resumed: true }),
    batch(startOf(999)),
    ended(),
  );
  assert.equal(end.deal_verified, null);
  assert.deepEqual(errors, []);
  assert.ok(
    infos.includes(
      `match ${MATCH}: its start was not seen from the beginning (a resumed start came first): ` +
        'the deal cannot be checked',
    ),
    infos.join('\n'),
  );
});

test('(f) requests or events before the start fail the check; hello() forgets them', async () => {
  const before = `match ${MATCH}: the server sent seat ${SEAT}'s requests or events before its start: the deal cannot be trusted`;
  for (const early of [request(startOf(999), firstObservation(999, SEAT)), batch(startOf(999))]) {
    const { end, errors } = await playOut(early, started(COMMITMENT), ended());
    assert.equal(end.deal_verified, false);
    assert.deepEqual(errors, [before]);
  }
  // Seen on another connection: forgotten at the hello of the next one, as its starts are.
  const ends = [];
  const session = new Session((r) => r.legalActions[0], {
    name: 'n',
    logger: { debug() {}, info() {}, warn() {}, error() {} },
    onMatchEnd: (end) => ends.push(end.deal_verified),
  });
  session.hello();
  await session.handle(batch(startOf(SEED)));
  session.hello();
  await session.handle(started(COMMITMENT));
  await session.handle(ended());
  assert.deepEqual(ends, [true]);
});

test("(g) Bestia: the seat's first look at its cards is what the seed deals it", async () => {
  const start = bestiaStart0(SEED);
  const next = start.at(-1).index + 3; // after a few blind-round events (not kept: not compared)
  const honest = await playOut(bestiaStarted(), batch([...start, lookOf(SEED, next)]), bestiaEnd());
  assert.equal(honest.end.deal_verified, true);
  assert.deepEqual(honest.errors, []);
  // Another seed's four cards: the start's events are honest, the cards the bot plays are not.
  const rigged = await playOut(bestiaStarted(), batch([...start, lookOf(999, next)]), bestiaEnd());
  assert.equal(rigged.end.deal_verified, false);
  assert.ok(
    rigged.errors[0].includes(
      `: the cards seat ${SEAT} looked at are not what seed ${SEED} deals: {"index":${next},`,
    ),
    rigged.errors[0],
  );
  // Only the first look counts; at an index past KEPT_EVENTS too.
  const late = await playOut(
    bestiaStarted(),
    batch([...start, lookOf(999, 40), lookOf(SEED, 41)]),
    bestiaEnd(),
  );
  assert.equal(late.end.deal_verified, false);
  // A dealer who stole the turned trump looks at it too.
  const dealer = { bestia: { seats: 5, first_dealer: SEAT } };
  const dealerStart = startOf(SEED, { game: 'bestia', settings: dealer });
  const stole = await playOut(
    started(COMMITMENT, { game: 'GAME_BESTIA', settings: dealer }),
    batch([...dealerStart, lookOfSettings(dealer, SEED, next, true)]),
    bestiaEnd(),
  );
  assert.deepEqual(stole.errors, []);
  assert.equal(stole.end.deal_verified, true);
  // A look too big to keep fails, with its size.
  const big = {
    index: next,
    bestia: { hand_looked: { seat: SEAT, cards: Array(5000).fill(BESTIA_ONE) } },
  };
  const oversized = await playOut(bestiaStarted(), batch([...start, big]), bestiaEnd());
  assert.equal(oversized.end.deal_verified, false);
  assert.match(
    oversized.errors[0],
    /: the cards seat 1 looked at are not what seed \d+ deals: [\d,]+ bytes were sent$/,
  );
});

const BESTIA_ONE = { suit: 'SUIT_CUPS', rank: 'RANK_ACE' };

function lookOfSettings(settings, seed, index, steal) {
  const start = bestiaStart(dealSettings('bestia', settings), BigInt(seed));
  const dealt = start.find(({ event }) => event.hand_dealt).event.hand_dealt.cards;
  const order = (card) =>
    ['COINS', 'CUPS', 'SWORDS', 'CLUBS'].indexOf(card.suit.slice(5)) * 10 +
    ['TWO', 'THREE', 'FOUR', 'FIVE', 'SIX', 'SEVEN', 'JACK', 'QUEEN', 'KING', 'ACE'].indexOf(
      card.rank.slice(5),
    );
  let cards = dealt.slice(4 * SEAT, 4 * SEAT + 4);
  if (steal) {
    const trump = start.find(({ event }) => event.trump_turned).event.trump_turned.card;
    cards = [...cards, trump].sort((a, b) => order(a) - order(b));
  }
  return { index, bestia: { hand_looked: { seat: SEAT, cards } } };
}

test("(g') Bestia: a look in a later hand is not compared; a re-sent HandStarted starts none", async () => {
  const start = bestiaStart0(SEED);
  const next = start.at(-1).index + 1;
  const hand = (index, number) => ({
    index,
    bestia: { hand_started: { hand_number: number, dealer: 1, giro: false, dealer_hand: 1 } },
  });
  const later = await playOut(
    bestiaStarted(),
    batch([...start, hand(next, 1), lookOf(999, next + 1)]),
    bestiaEnd(),
  );
  assert.deepEqual(later.errors, []);
  assert.equal(later.end.deal_verified, true);
  // The first HandStarted (index 0) sent again is still the first hand: its look is compared.
  const again = await playOut(
    bestiaStarted(),
    batch([...start, start[0], lookOf(999, next)]),
    bestiaEnd(),
  );
  assert.equal(again.end.deal_verified, false);
  assert.match(again.errors[0], /the cards seat 1 looked at are not what seed/);
});

/** The observation of seat `seat`'s first request after `moves` ({pass}, {take}, {card} on
 * engine numbers, applied in turn) in the Belote match dealt from `seed`. */
function observationAfter(seed, seat, moves) {
  const settings = dealSettings('belote', null);
  const state = new BeloteReplay(settings, (deal) => beloteShuffle(settings, BigInt(seed), deal));
  const bids = [];
  const plays = [];
  const card = (index) => ({
    suit: `SUIT_${['SPADES', 'HEARTS', 'DIAMONDS', 'CLUBS'][Math.floor(index / 8)]}`,
    rank: `RANK_${['SEVEN', 'EIGHT', 'NINE', 'TEN', 'JACK', 'QUEEN', 'KING', 'ACE'][index % 8]}`,
  });
  for (const make of moves) {
    const move = make(state);
    const mover = state.toAct;
    if (move.card !== undefined) plays.push({ seat: mover, card: card(move.card) });
    else
      bids.push({
        seat: mover,
        round: state.phase,
        ...(move.pass ? {} : { suit: card(move.take * 8).suit }),
      });
    state.apply(move);
  }
  return {
    seat,
    phase: 'PHASE_PLAYING',
    hand: state.handOf(seat).map(card),
    turned_card: card(state.turned),
    bids,
    tricks: plays.length ? [{ trick_number: 0, leader: plays[0].seat, plays }] : [],
  };
}

test("(h) Belote: the hand in the seat's first request is what the seed deals it", async () => {
  const honestEvents = startOf(SEED);
  // Rigged: the events are honest, the observation the bot plays from is seed 999's.
  const rigged = await playOut(
    started(COMMITMENT),
    request(honestEvents, firstObservation(999, SEAT)),
    ended(),
  );
  assert.equal(rigged.end.deal_verified, false);
  assert.ok(
    rigged.errors[0].endsWith(
      `: the hand in seat 1's first request is not what seed ${SEED} deals: ` +
        firstObservation(999, SEAT)
          .hand.map((card) => `suit: ${card.suit} rank: ${card.rank}`)
          .join(' '),
    ),
    rigged.errors[0],
  );
  // Seat 1 takes at once (dealer 0): seat 2 is first asked to play, with its eight cards.
  const take = (state) => ({ take: Math.floor(state.turned / 8) });
  const lead = (state) => ({ card: state.legalCards()[0] });
  const seat2 = observationAfter(SEED, 2, [take, lead]);
  assert.equal(seat2.hand.length, 8);
  const asSeat2 = (message) => {
    const copy = structuredClone(message);
    copy[copy.kind].seat = 2;
    return copy;
  };
  const start2 = startShown('belote', dealSettings('belote', null), BigInt(SEED), 2);
  const after = async (observation) =>
    playOut(asSeat2(started(COMMITMENT)), asSeat2(request(start2, observation)), asSeat2(ended()));
  const honest = await after(seat2);
  assert.deepEqual(honest.errors, []);
  assert.equal(honest.end.deal_verified, true);
  const why = `the hand in seat 2's first request is not what seed ${SEED} deals`;
  // Eight cards from another seed, a move out of turn, an illegal one, one that cannot be read.
  const other = observationAfter(999, 2, [take, lead]);
  const cases = [
    [{ ...seat2, hand: other.hand }, `${why}: `],
    [
      { ...seat2, bids: [{ seat: 2, round: 1, suit: seat2.bids[0].suit }] },
      `${why}: its moves before it are not the match's`,
    ],
    [
      {
        ...seat2,
        bids: [
          {
            seat: 1,
            round: 1,
            suit: 'SUIT_SPADES' === seat2.turned_card.suit ? 'SUIT_HEARTS' : 'SUIT_SPADES',
          },
        ],
      },
      `${why}: its moves before it are not legal with that deal`,
    ],
    [
      { ...seat2, bids: [{ seat: 1, round: 1, suit: 'SUIT_UNSPECIFIED' }] },
      `${why}: its moves before it cannot be read`,
    ],
  ];
  for (const [observation, words] of cases) {
    const { end, errors } = await after(observation);
    assert.equal(end.deal_verified, false, words);
    assert.ok(errors[0].includes(words), `${errors[0]} / ${words}`);
  }
  // A first request of a later deal (first asked after a reconnect) is not compared.
  const later = await after({ ...other, deal_number: 1 });
  assert.equal(later.end.deal_verified, true);
  // One too big to keep fails, with its size.
  const big = { ...seat2, deal_results: Array(2000).fill({ deal_number: 1, dealer: 1 }) };
  const oversized = await after(big);
  assert.equal(oversized.end.deal_verified, false);
  assert.match(
    oversized.errors[0],
    /first request is not what seed \d+ deals: [\d,]+ bytes were sent$/,
  );
});

test("(i) Bestia: the hand in the seat's first request after it looked is what the seed deals it", async () => {
  const start = bestiaStart0(SEED);
  const next = start.at(-1).index + 3;
  const look = lookOf(SEED, next);
  const own = look.bestia.hand_looked.cards;
  /** A new request of seat SEAT whose observation is `observation` (with `looked`). */
  let requests = 0;
  const asked = (observation, events = []) =>
    throughWire({
      action_request: {
        request_id: `r${(requests += 1)}`,
        match_id: MATCH,
        seat: SEAT,
        observation: { bestia: { seat: SEAT, hand_number: 0, looked: true, ...observation } },
        legal_actions: [{ bestia: { pass: {} } }],
        attempt: 1,
        events,
      },
    });
  const after = (...requests) =>
    playOut(bestiaStarted(), batch([...start, look]), ...requests, bestiaEnd());
  const honest = await after(asked({ hand: own }));
  assert.deepEqual(honest.errors, []);
  assert.equal(honest.end.deal_verified, true);
  // The honest look, then one card of the hand the bot plays from swapped for one not in it.
  const ranks = ['TWO', 'THREE', 'FOUR', 'FIVE', 'SIX', 'SEVEN', 'JACK', 'QUEEN', 'KING', 'ACE'];
  const deck = ['COINS', 'CUPS', 'SWORDS', 'CLUBS'].flatMap((suit) =>
    ranks.map((rank) => ({ suit: `SUIT_${suit}`, rank: `RANK_${rank}` })),
  );
  const outside = deck.find(
    (card) => !own.some((o) => o.suit === card.suit && o.rank === card.rank),
  );
  const rigged = [outside, ...own.slice(1)];
  const riggedText = rigged.map(({ suit, rank }) => `suit: ${suit} rank: ${rank}`).join(' ');
  const caught = await after(asked({ hand: rigged }));
  assert.equal(caught.end.deal_verified, false);
  assert.equal(caught.errors.length, 1);
  assert.ok(
    caught.errors[0].endsWith(
      `: the hand in seat ${SEAT}'s first request after it looked is not what seed ${SEED} ` +
        `deals: ${riggedText}`,
    ),
    caught.errors[0],
  );
  // Only the first request after the look counts.
  const second = await after(asked({ hand: own }), asked({ hand: rigged }));
  assert.equal(second.end.deal_verified, true);
  const first = await after(asked({ hand: rigged }), asked({ hand: own }));
  assert.equal(first.end.deal_verified, false);
  // A request before the look (no `looked`) is not that request.
  const before = await after(asked({ hand: [], looked: false }), asked({ hand: rigged }));
  assert.equal(before.end.deal_verified, false);
  // Not compared: after the seat exchanged or played a card, or in a later hand.
  const trick = { trick_number: 1, leader: SEAT, plays: [{ seat: SEAT, card: own[0] }] };
  for (const changed of [
    { exchanges: [{ seat: SEAT, count: 1 }] },
    { tricks: [trick] },
    { hand_number: 1 },
  ]) {
    const { end, errors } = await after(asked({ hand: rigged, ...changed }));
    assert.deepEqual(errors, [], JSON.stringify(changed));
    assert.equal(end.deal_verified, true, JSON.stringify(changed));
  }
  // Another seat's exchange does not stop the comparison.
  const other = await after(asked({ hand: rigged, exchanges: [{ seat: SEAT + 1, count: 2 }] }));
  assert.equal(other.end.deal_verified, false);
  // A dealer who stole the turned trump holds it too.
  const dealer = { bestia: { seats: 5, first_dealer: SEAT } };
  const stolen = lookOfSettings(dealer, SEED, next, true);
  const stole = await playOut(
    started(COMMITMENT, { game: 'GAME_BESTIA', settings: dealer }),
    batch([...startOf(SEED, { game: 'bestia', settings: dealer }), stolen]),
    asked({ hand: stolen.bestia.hand_looked.cards, dealer: SEAT }),
    bestiaEnd(),
  );
  assert.deepEqual(stole.errors, []);
  assert.equal(stole.end.deal_verified, true);
  // One too big to keep fails as a Belote one does, with its size.
  const big = await after(asked({ hand: own, balances: Array(5000).fill(123456789) }));
  assert.equal(big.end.deal_verified, false);
  assert.match(big.errors[0], /first request is not what seed \d+ deals: [\d,]+ bytes were sent$/);
});
