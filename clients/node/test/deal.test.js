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
