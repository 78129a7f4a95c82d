'use strict';
// The Session's protocol logic, network-free: plain server messages in, bot messages out.

const assert = require('node:assert/strict');
const { test } = require('node:test');
const { BotCrashed, BotRejected, Session } = require('..');
const { NOT_AN_ACTION } = require('../lib/session');

const quiet = { debug() {}, info() {}, warn() {}, error() {} };

const card = (suit, rank) => ({ suit: `SUIT_${suit}`, rank: `RANK_${rank}` });
const play = (suit, rank) => ({ action: 'play_card', play_card: { card: card(suit, rank) } });
const belote = (action) => ({ game: 'belote', belote: action });

function request(id, legal, { attempt = 1, matchId = 'm-1', seat = 2, hand = [] } = {}) {
  return {
    kind: 'action_request',
    action_request: {
      request_id: id,
      match_id: matchId,
      seat,
      observation: { game: 'belote', belote: { seat, phase: 'PHASE_PLAYING', hand, tricks: [] } },
      legal_actions: legal.map(belote),
      clock: { move_ms: 1000, bank_ms: 5000 },
      attempt,
    },
  };
}

function rejected(id, attemptsLeft, { matchId = 'm-1', seat = 2 } = {}) {
  return {
    kind: 'action_rejected',
    action_rejected: {
      request_id: id,
      match_id: matchId,
      seat,
      code: 'REJECT_CODE_ILLEGAL_ACTION',
      message: 'no',
      attempts_left: attemptsLeft,
    },
  };
}

const answered = (replies) => replies.map((reply) => reply.action.action.belote.play_card.card);

test('hello says who the bot is, with protocol version 2 and its games', () => {
  const session = new Session(() => null, {
    token: 't',
    name: 'n',
    version: '2',
    games: ['belote', 'bestia'],
    logger: quiet,
  });
  assert.deepEqual(session.hello(), {
    hello: {
      token: 't',
      bot_name: 'n',
      bot_version: '2',
      protocol_version: 2,
      games: ['GAME_BELOTE', 'GAME_BESTIA'],
      live_events: false,
    },
  });
  assert.throws(() => new Session(() => null, { name: 'n', games: ['poker'] }), /unknown game/);
  assert.throws(() => new Session(() => null, { name: 'n', games: [] }), /at least one game/);
});

test('a request is answered with the bot choice, echoing the request id', async () => {
  const seen = [];
  const session = new Session(
    (req) => {
      seen.push(req);
      return req.legalActions[1];
    },
    { name: 'n', logger: quiet },
  );
  const replies = await session.handle(
    request('r1', [play('HEARTS', 'ACE'), play('CLUBS', 'TEN')]),
  );
  assert.equal(replies.length, 1);
  assert.equal(replies[0].action.request_id, 'r1');
  assert.deepEqual(answered(replies), [card('CLUBS', 'TEN')]);
  const [req] = seen;
  assert.equal(req.game, 'belote');
  assert.equal(req.matchId, 'm-1');
  assert.equal(req.seat, 2);
  assert.equal(req.attempt, 1);
  assert.equal(req.observation.phase, 'PHASE_PLAYING');
  assert.deepEqual(req.clock, { move_ms: 1000, bank_ms: 5000 });
  assert.deepEqual(req.rejected, []);
});

test('an async bot and a whole GameAction answer both work', async () => {
  const session = new Session(async (req) => ({ belote: req.legalActions[0] }), {
    name: 'n',
    logger: quiet,
  });
  const replies = await session.handle(request('r1', [play('HEARTS', 'ACE')]));
  assert.deepEqual(answered(replies), [card('HEARTS', 'ACE')]);
});

test('a rejection asks the bot again; the re-sent request is not answered twice', async () => {
  const attempts = [];
  const session = new Session(
    (req) => {
      attempts.push([req.attempt, req.rejected.length]);
      return req.attempt === 1 ? play('SPADES', 'SEVEN') : req.legalActions[0];
    },
    { name: 'n', logger: quiet },
  );
  const legal = [play('HEARTS', 'ACE')];
  assert.deepEqual(answered(await session.handle(request('r1', legal))), [card('SPADES', 'SEVEN')]);
  assert.deepEqual(answered(await session.handle(rejected('r1', 2))), [card('HEARTS', 'ACE')]);
  assert.deepEqual(await session.handle(request('r1', legal, { attempt: 2 })), []);
  assert.deepEqual(attempts, [
    [1, 0],
    [2, 1],
  ]);
});

test('a repeated rejected action is replaced by the first legal one not rejected', async () => {
  const session = new Session((req) => req.legalActions[0], { name: 'n', logger: quiet });
  const legal = [play('HEARTS', 'ACE'), play('CLUBS', 'TEN'), play('CLUBS', 'KING')];
  assert.deepEqual(answered(await session.handle(request('r1', legal))), [card('HEARTS', 'ACE')]);
  assert.deepEqual(answered(await session.handle(rejected('r1', 2))), [card('CLUBS', 'TEN')]);
  assert.deepEqual(answered(await session.handle(rejected('r1', 1))), [card('CLUBS', 'KING')]);
  assert.deepEqual(await session.handle(rejected('r1', 0)), []); // no attempt left: no answer
});

test('a rejection of another request, or with no attempt left, is not answered', async () => {
  const session = new Session((req) => req.legalActions[0], { name: 'n', logger: quiet });
  await session.handle(request('r1', [play('HEARTS', 'ACE')]));
  assert.deepEqual(await session.handle(rejected('r0', 2)), []);
  assert.deepEqual(await session.handle(rejected('r1', 0)), []);
});

const throwing = [
  function sync() {
    throw new Error('bug');
  },
  async function later() {
    throw new Error('async bug');
  },
];

/** A stack line of `bot` in this file. */
const stackOf = (bot) => new RegExp(`\\n +at .*\\b${bot.name}\\b.*session\\.test\\.js:\\d+`);

test('a bot that throws ends the bot by default: BotCrashed, the stack logged', async () => {
  for (const bot of throwing) {
    const errors = [];
    const session = new Session(bot, {
      name: 'n',
      logger: { ...quiet, error: (t) => errors.push(t) },
    });
    await assert.rejects(session.handle(request('r1', [play('HEARTS', 'ACE')])), (problem) => {
      assert.ok(problem instanceof BotCrashed);
      assert.equal(problem.callback, 'bot');
      assert.match(
        problem.message,
        /^the bot's callback threw on request r1 \(match m-1, seat 2\): (async )?bug$/,
      );
      assert.ok(problem.cause instanceof Error);
      return true;
    });
    assert.equal(errors.length, 1);
    assert.match(errors[0], /^the bot threw on request r1 \(match m-1, seat 2\); ending the bot/);
    assert.match(errors[0], stackOf(bot)); // the stack, naming the bot
  }
});

test('with keepGoing a throwing bot gets a legal action sent for it, said every time', async () => {
  const legal = [play('HEARTS', 'ACE'), play('CLUBS', 'TEN')];
  for (const bot of throwing) {
    const errors = [];
    const logger = { ...quiet, error: (text) => errors.push(text) };
    const session = new Session(bot, { name: 'n', logger, keepGoing: true });
    for (const id of ['r1', 'r2']) {
      const replies = await session.handle(request(id, legal));
      assert.deepEqual(answered(replies), [card('HEARTS', 'ACE')]);
    }
    assert.equal(errors.length, 2);
    for (const [index, line] of errors.entries()) {
      assert.ok(
        line.startsWith(
          `the bot threw on request r${index + 1} (match m-1, seat 2); keepGoing: sending a legal action instead: Error: `,
        ),
        line,
      );
      assert.match(line, stackOf(bot));
    }
  }
});

// Each garbage answer, and what the line about it shows of it.
const garbage = [
  [() => undefined, 'undefined', 'does every path of the bot return an action?'],
  [() => null, 'null', 'does every path of the bot return an action?'],
  [() => 'play the ace', '"play the ace"', 'an action is one of request.legalActions'],
  [() => ({ nonsense: true }), '{"nonsense":true}', 'an action is one of request.legalActions'],
];

test('a bot that answers no action of the game ends, like one that throws, saying what it answered', async () => {
  const legal = [play('HEARTS', 'ACE'), play('CLUBS', 'TEN')];
  for (const [bot, shown, hint] of garbage) {
    const errors = [];
    const logger = { ...quiet, error: (text) => errors.push(text) };
    const session = new Session(bot, { name: 'n', logger });
    await assert.rejects(session.handle(request('r1', legal)), (problem) => {
      assert.ok(problem instanceof BotCrashed);
      assert.equal(
        problem.message,
        `the bot's callback answered ${shown} on request r1 (match m-1, seat 2), ${NOT_AN_ACTION}`,
      );
      return true;
    });
    // One line, with the phrase bisca check-bot looks for; never the "every legal action was
    // rejected" of a spent request (null was once taken for that, and nothing was sent).
    assert.deepEqual(errors, [
      `request r1 (match m-1, seat 2): the bot answered ${shown}, ${NOT_AN_ACTION} (${hint}); ` +
        'ending the bot (the option keepGoing sends a legal action instead)',
    ]);
  }
  assert.equal(NOT_AN_ACTION, 'which is not an action of the game'); // check-bot's phrase
});

test('with keepGoing a bot that answers no action gets a legal action sent, said every time', async () => {
  const legal = [play('HEARTS', 'ACE'), play('CLUBS', 'TEN')];
  for (const [bot, shown, hint] of garbage) {
    const errors = [];
    const logger = { ...quiet, error: (text) => errors.push(text) };
    const session = new Session(bot, { name: 'n', logger, keepGoing: true });
    for (const id of ['r1', 'r2']) {
      assert.deepEqual(answered(await session.handle(request(id, legal))), [card('HEARTS', 'ACE')]);
    }
    assert.deepEqual(
      errors,
      ['r1', 'r2'].map(
        (id) =>
          `request ${id} (match m-1, seat 2): the bot answered ${shown}, ${NOT_AN_ACTION} ` +
          `(${hint}); keepGoing: sending a legal action instead`,
      ),
    );
  }
});

test('the end of a match is logged with the seat\'s rank, counted from 1 as people do', async () => {
  const infos = [];
  const session = new Session(() => null, {
    name: 'n',
    logger: { ...quiet, info: (text) => infos.push(text) },
  });
  const seats = [
    { seat: 0, score: 185, rank: 2 },
    { seat: 1, score: 300, rank: 0 },
  ];
  const ended = { match_id: 'm-1', seat: 0, seats, status: 'MATCH_STATUS_FINISHED', reason: '' };
  await session.handle({ kind: 'match_ended', match_ended: ended });
  assert.ok(
    infos.some((line) => line.startsWith('match m-1 MATCH_STATUS_FINISHED: seat 0 scored 185, rank 3')),
    infos.join('\n'),
  );
});

test('a well-formed action that is not legal is sent as it is: the referee decides', async () => {
  const session = new Session(() => play('SPADES', 'SEVEN'), { name: 'n', logger: quiet });
  const replies = await session.handle(request('r1', [play('HEARTS', 'ACE')]));
  assert.deepEqual(answered(replies), [card('SPADES', 'SEVEN')]);
});

test('hooks see match starts, events, rejections and ends; with keepGoing a throwing hook is logged', async () => {
  const calls = [];
  const errors = [];
  const session = new Session((req) => req.legalActions[0], {
    name: 'n',
    logger: { ...quiet, error: (text) => errors.push(text) },
    onMatchStart: (started) => calls.push(['start', started.match_id]),
    onEvent: (matchId, seat, event) => calls.push(['event', matchId, seat, event.index]),
    onRejected: (message, action) => calls.push(['rejected', message.request_id, action.action]),
    onMatchEnd: () => {
      throw new Error('hook bug');
    },
    keepGoing: true,
  });
  await session.handle({
    kind: 'match_started',
    match_started: { match_id: 'm-1', game: 'GAME_BELOTE', seats: [], seat: 2 },
  });
  await session.handle({
    kind: 'events',
    events: { match_id: 'm-1', seat: 2, events: [{ index: 0 }, { index: 1 }] },
  });
  await session.handle(request('r1', [play('HEARTS', 'ACE')]));
  await session.handle(rejected('r1', 0));
  const ended = {
    match_id: 'm-1',
    seat: 2,
    seats: [],
    status: 'MATCH_STATUS_FINISHED',
    reason: '',
  };
  assert.deepEqual(await session.handle({ kind: 'match_ended', match_ended: ended }), []);
  assert.deepEqual(calls, [
    ['start', 'm-1'],
    ['event', 'm-1', 2, 0],
    ['event', 'm-1', 2, 1],
    ['rejected', 'r1', 'play_card'],
  ]);
  assert.equal(errors.length, 1);
  assert.match(
    errors[0],
    /^the bot's onMatchEnd hook threw; keepGoing: going on: Error: hook bug\n/,
  );
  assert.equal(session.open.size, 0);
});

test('a hook that throws ends the bot by default', async () => {
  const errors = [];
  const session = new Session((req) => req.legalActions[0], {
    name: 'n',
    logger: { ...quiet, error: (text) => errors.push(text) },
    onEvent: () => {
      throw new TypeError('hook bug');
    },
  });
  const batch = { kind: 'events', events: { match_id: 'm-1', seat: 2, events: [{ index: 0 }] } };
  await assert.rejects(session.handle(batch), (problem) => {
    assert.ok(problem instanceof BotCrashed);
    assert.equal(problem.message, "the bot's onEvent hook threw: hook bug");
    return true;
  });
  assert.match(errors[0], /^the bot's onEvent hook threw; ending the bot .*TypeError: hook bug\n/s);
});

test('events carried by a request or an end reach onEvent first, in order', async () => {
  const calls = [];
  const session = new Session(
    (req) => {
      calls.push(['bot', req.requestId]);
      return req.legalActions[0];
    },
    {
      name: 'n',
      logger: quiet,
      onEvent: (matchId, seat, event) => calls.push(['event', matchId, seat, event.index]),
      onMatchEnd: (ended) => calls.push(['end', ended.match_id]),
    },
  );
  const asked = request('r1', [play('HEARTS', 'ACE')]);
  asked.action_request.events = [{ index: 3 }, { index: 5 }];
  await session.handle(asked);
  const ended = { match_id: 'm-1', seat: 2, seats: [], status: 'MATCH_STATUS_FINISHED' };
  await session.handle({ kind: 'match_ended', match_ended: { ...ended, events: [{ index: 6 }] } });
  assert.deepEqual(calls, [
    ['event', 'm-1', 2, 3],
    ['event', 'm-1', 2, 5],
    ['bot', 'r1'],
    ['event', 'm-1', 2, 6],
    ['end', 'm-1'],
  ]);
  const live = new Session(() => null, { name: 'n', liveEvents: true, logger: quiet });
  assert.equal(live.hello().hello.live_events, true);
});

test('a fatal error rejects the bot; another error is only logged', async () => {
  const warnings = [];
  const session = new Session(() => null, {
    name: 'n',
    logger: { ...quiet, warn: (text) => warnings.push(text) },
  });
  const error = (fatal) => ({
    kind: 'error',
    error: {
      code: 'ERROR_CODE_UNKNOWN_TOKEN',
      message: 'unknown bot token',
      fatal,
      match_id: '',
      request_id: '',
    },
  });
  assert.deepEqual(await session.handle(error(false)), []);
  assert.equal(warnings.length, 1);
  await assert.rejects(session.handle(error(true)), (problem) => {
    assert.ok(problem instanceof BotRejected);
    assert.equal(problem.code, 'ERROR_CODE_UNKNOWN_TOKEN');
    return true;
  });
});

test('a new hello forgets the open requests: the server sends them again', async () => {
  const session = new Session((req) => req.legalActions[0], { name: 'n', logger: quiet });
  const legal = [play('HEARTS', 'ACE')];
  await session.handle(request('r1', legal));
  session.hello();
  assert.deepEqual(answered(await session.handle(request('r1', legal))), [card('HEARTS', 'ACE')]);
});
