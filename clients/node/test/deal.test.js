'use strict';
// The Node SDK checks the deal: MatchStarted's commitment against the salt and seed MatchEnded
// reveals (deal_verified), network-free; and the transport's decoding keeps the seed exact.

const assert = require('node:assert/strict');
const crypto = require('node:crypto');
const { test } = require('node:test');
const { Session, dealCommitment, loadProto } = require('..');

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

const started = (commitment, { matchId = MATCH, resumed = false } = {}) => ({
  kind: 'match_started',
  match_started: {
    match_id: matchId,
    game: 'GAME_BELOTE',
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
  const session = new Session(() => null, {
    name: 'n',
    logger,
    onMatchEnd: (end) => ends.push(end),
  });
  for (const message of messages) assert.deepEqual(await session.handle(message), []);
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
