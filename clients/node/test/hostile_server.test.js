'use strict';
// What a hostile or broken server can send, and what the SDK does with it (the findings of the
// hostile-server review): escape sequences in server text, floods, Welcome-then-drop loops,
// servers that never say Welcome, a deal from another seed than the one committed to.

const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const net = require('node:net');
const path = require('node:path');
const { test } = require('node:test');
const grpc = require('@grpc/grpc-js');
const {
  BotRejected,
  ConnectionLost,
  GAMES,
  MAX_MATCHES,
  Session,
  dealCommitment,
  printable,
  run,
} = require('..');
const { KEPT_EVENTS, dealSettings, startShown } = require('../lib/deal');
const { scriptedServer, waitFor } = require('./support');

/** A logger that keeps every line, and the lines. */
function recording() {
  const lines = [];
  const logger = {};
  for (const level of ['debug', 'info', 'warn', 'error']) {
    logger[level] = (text) => lines.push(`${level} ${text}`);
  }
  return { logger, lines };
}

// Sets the window title, clears the screen, turns the text red: what the review's server sent.
const EVIL = '\x1b]0;PWNED-TITLE\x07\x1b[2J\x1b[1;31mSERVER-RED\x1b[0m\x9b2J';
// Any C0 control but newline and tab, DEL, C1: none may reach a log line or an error message.
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/; // eslint-disable-line no-control-regex

const welcome = {
  welcome: { protocol_version: 2, bot_name: 'b', server_version: 't', connection_id: 'c' },
};

// ---- finding 2: server text reaches the terminal raw ---------------------------------------

test('printable strips escape sequences and controls as the server text.py does', () => {
  assert.equal(printable(`a${EVIL}b`), 'aSERVER-REDb');
  assert.equal(
    printable('tab\tand\nnewline stay; é, ♠ and 漢 too'),
    'tab\tand\nnewline stay; é, ♠ and 漢 too',
  );
  assert.equal(printable('\x00\x07\x08\x0b\x1b\x7f\x85\x9f'), '');
  assert.equal(printable('x\x1bP1;2|data\x1b\\y'), 'xy'); // DCS ... ST
  assert.equal(printable('x\x9d8;;http://evil\x9cy'), 'xy'); // 8-bit OSC 8 link
  assert.equal(printable('x\x1b]52;c;aGk=\x07y'), 'xy'); // OSC 52: the clipboard
  assert.equal(printable('x\x1b[1;1Hy\x1bcz'), 'xyz'); // cursor move, reset
  assert.equal(printable(42), '42');
});

test('server text in every log line and in BotRejected is made printable', async () => {
  const { logger, lines } = recording();
  const session = new Session(() => ({ pass: {} }), { name: 'b', logger, keepGoing: true });
  session.hello();
  const handle = (kind, body) => session.handle({ kind, [kind]: body });
  await handle('welcome', {
    bot_name: `b${EVIL}`,
    server_version: `v${EVIL}`,
    connection_id: `c${EVIL}`,
  });
  await handle('match_started', {
    match_id: `m${EVIL}`,
    game: 'GAME_BELOTE',
    seat: 1,
    seats: [{ seat: 0, bot_name: `alice${EVIL}` }],
    deal_commitment: Buffer.alloc(32, 1),
  });
  await handle('error', {
    code: 'ERROR_CODE_UNKNOWN_REQUEST',
    message: `nonfatal${EVIL}`,
    match_id: `m${EVIL}`,
    request_id: `r${EVIL}`,
    fatal: false,
  });
  await handle('action_request', {
    request_id: `r${EVIL}`,
    match_id: `m${EVIL}`,
    seat: 1,
    observation: { game: 'belote', belote: { seat: 1, phase: 'PHASE_BIDDING' } },
    legal_actions: [{ game: 'belote', belote: { pass: {} } }],
    attempt: 1,
  });
  await handle('action_rejected', {
    request_id: `r${EVIL}`,
    match_id: `m${EVIL}`,
    seat: 1,
    code: 'REJECT_CODE_ILLEGAL_ACTION',
    message: `rejected${EVIL}`,
    attempts_left: 0,
  });
  await handle('match_ended', {
    match_id: `m${EVIL}`,
    seat: 1,
    status: 'MATCH_STATUS_FAILED',
    reason: `reason${EVIL}`,
    seats: [],
    deal_salt: Buffer.alloc(16),
    seed: 7,
  });
  let rejection = null;
  await handle('error', {
    code: 'ERROR_CODE_UNKNOWN_TOKEN',
    message: `fatal${EVIL}`,
    fatal: true,
  }).catch((error) => (rejection = error));
  assert.ok(rejection instanceof BotRejected);
  assert.equal(rejection.message, 'ERROR_CODE_UNKNOWN_TOKEN: fatalSERVER-RED');
  assert.equal(rejection.detail, `fatal${EVIL}`); // the raw text, for code that wants it
  const texts = lines.join('\n');
  for (const seen of ['vSERVER-RED', 'cSERVER-RED', 'mSERVER-RED', 'aliceSERVER-RED']) {
    assert.ok(texts.includes(seen), `${seen} in:\n${texts}`);
  }
  for (const seen of ['nonfatalSERVER-RED', 'rSERVER-RED', 'rejectedSERVER-RED']) {
    assert.ok(texts.includes(seen), `${seen} in:\n${texts}`);
  }
  assert.ok(texts.includes('reasonSERVER-RED'), texts);
  assert.ok(lines.length >= 8, texts);
  for (const line of lines) assert.doesNotMatch(line, CONTROL, JSON.stringify(line));
});

test('gRPC status details are made printable in ConnectionLost and the reconnect line', async () => {
  const abort = (code) => async (call, messages) => {
    await waitFor(messages, 1);
    call.emit('error', { code, details: `details${EVIL}` });
  };
  const { server, address } = await scriptedServer('127.0.0.1:0', [
    abort(grpc.status.UNAVAILABLE),
    abort(grpc.status.PERMISSION_DENIED),
  ]);
  const { logger, lines } = recording();
  try {
    const lost = await run(() => null, {
      address,
      token: 't',
      name: 'b',
      logger,
      backoff: { initialMs: 10 },
    }).catch((error) => error);
    assert.ok(lost instanceof ConnectionLost, String(lost));
    assert.match(lost.message, /PERMISSION_DENIED: detailsSERVER-RED$/);
    assert.equal(lost.details, `details${EVIL}`);
    assert.ok(
      lines.some((line) => line.includes('UNAVAILABLE: detailsSERVER-RED')),
      lines,
    );
    for (const line of lines) assert.doesNotMatch(line, CONTROL, JSON.stringify(line));
  } finally {
    server.forceShutdown();
  }
});

test("a sample bot's stderr carries no escape sequence from a server's fatal error", async () => {
  const { server, address } = await scriptedServer('127.0.0.1:0', [
    async (call, messages) => {
      await waitFor(messages, 1);
      call.write({
        welcome: { ...welcome.welcome, server_version: `v${EVIL}`, connection_id: `c${EVIL}` },
      });
      call.write({
        error: { code: 'ERROR_CODE_UNKNOWN_TOKEN', message: `fatal${EVIL}`, fatal: true },
      });
      call.end();
    },
  ]);
  try {
    const child = spawn(process.execPath, [path.join(__dirname, '..', 'bots', 'random.js')], {
      env: { ...process.env, BISCA_ADDRESS: address, BISCA_TOKEN: 'tok' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const code = await new Promise((done) => child.on('close', done));
    assert.equal(code, 1, stderr);
    assert.match(stderr, /random\.js: ERROR_CODE_UNKNOWN_TOKEN: fatalSERVER-RED\n$/);
    assert.doesNotMatch(stderr.replaceAll('\n', ''), CONTROL, JSON.stringify(stderr));
  } finally {
    server.forceShutdown();
  }
});

// ---- finding 6: no deadline for the Welcome ------------------------------------------------

/** Runs a bot with a 300 ms Welcome deadline against `address`; its error, lines and time. */
async function withoutWelcome(address, options = {}) {
  const { logger, lines } = recording();
  const started = Date.now();
  const error = await run(() => null, {
    address,
    token: 't',
    name: 'b',
    logger,
    welcomeTimeoutMs: 300,
    ...options,
  }).catch((failure) => failure);
  return { error, lines, elapsed: Date.now() - started };
}

test(
  'a server that accepts the stream and never speaks fails the connection',
  { timeout: 20_000 },
  async () => {
    const { server, streams, address } = await scriptedServer('127.0.0.1:0', [() => {}]); // silent
    try {
      const once = await withoutWelcome(address, { reconnect: false });
      assert.ok(once.error instanceof ConnectionLost, String(once.error));
      assert.equal(once.error.code, grpc.status.DEADLINE_EXCEEDED);
      assert.match(once.error.message, /no Welcome from the server within 0\.3 s/);
      assert.ok(
        once.lines.some((line) =>
          /^warn no Welcome from 127\.0\.0\.1:\d+ within 0\.3 s/.test(line),
        ),
        once.lines.join('\n'),
      );
      // With reconnects: tried again with backoff, until the budget runs out.
      const before = streams.length;
      const retried = await withoutWelcome(address, {
        backoff: { initialMs: 10, maximumMs: 20, budgetMs: 1_000 },
      });
      assert.ok(retried.error instanceof ConnectionLost, String(retried.error));
      assert.match(retried.error.message, /could not reconnect .* within 1 s/);
      assert.ok(streams.length - before >= 2, `${streams.length - before} streams`);
    } finally {
      server.forceShutdown();
    }
  },
);

test(
  'a TCP port that accepts and never speaks fails the connection',
  { timeout: 20_000 },
  async () => {
    const sockets = [];
    const tarpit = net.createServer((socket) => sockets.push(socket));
    await new Promise((done) => tarpit.listen(0, '127.0.0.1', done));
    try {
      const { error, lines } = await withoutWelcome(`127.0.0.1:${tarpit.address().port}`, {
        reconnect: false,
      });
      assert.ok(error instanceof ConnectionLost, String(error));
      assert.match(error.message, /no Welcome from the server within 0\.3 s/);
      assert.ok(sockets.length >= 1); // it did connect
      assert.ok(
        lines.some((line) => line.startsWith('warn no Welcome from')),
        lines.join('\n'),
      );
    } finally {
      for (const socket of sockets) socket.destroy();
      tarpit.close();
    }
  },
);

// ---- finding 4: Welcome, then drop, in a loop ----------------------------------------------

/** A stream script: Welcome, then after `ms` the stream fails with UNAVAILABLE. */
const welcomeThenDrop = (ms) => async (call, messages) => {
  await waitFor(messages, 1);
  call.write(welcome);
  await new Promise((done) => setTimeout(done, ms));
  call.emit('error', { code: grpc.status.UNAVAILABLE, details: 'going away' });
};

/** The delays of the "reconnecting in N ms" lines. */
const reconnectDelays = (lines) =>
  lines.flatMap((line) => {
    const found = /reconnecting in (\d+) ms$/.exec(line);
    return found ? [Number(found[1])] : [];
  });

test(
  'a server that welcomes and drops at once does not reset the backoff',
  { timeout: 20_000 },
  async () => {
    const { server, streams, address } = await scriptedServer('127.0.0.1:0', [welcomeThenDrop(30)]);
    const { logger, lines } = recording();
    try {
      const error = await run(() => null, {
        address,
        token: 't',
        name: 'b',
        logger,
        backoff: { initialMs: 10, maximumMs: 80, budgetMs: 800, stableMs: 5_000 },
      }).catch((failure) => failure);
      assert.ok(error instanceof ConnectionLost, String(error));
      assert.match(error.message, /could not reconnect to .* within 0\.8 s/);
      const delays = reconnectDelays(lines);
      assert.deepEqual(delays.slice(0, 4), [10, 20, 40, 80]); // doubling, not 10 ms forever
      assert.ok(streams.length <= 20, `${streams.length} connections`);
    } finally {
      server.forceShutdown();
    }
  },
);

test('a connection that stayed up stableMs after its Welcome resets the backoff', async () => {
  const { server, streams, address } = await scriptedServer('127.0.0.1:0', [
    welcomeThenDrop(30),
    welcomeThenDrop(30),
    welcomeThenDrop(1_500), // proves itself (stableMs 1 s)
    async (call, messages) => {
      await waitFor(messages, 1);
      call.write(welcome);
      call.end();
    },
  ]);
  const { logger, lines } = recording();
  try {
    await run(() => null, {
      address,
      token: 't',
      name: 'b',
      logger,
      backoff: { initialMs: 10, maximumMs: 80, budgetMs: 60_000, stableMs: 1_000 },
    });
    assert.equal(streams.length, 4);
    assert.deepEqual(reconnectDelays(lines), [10, 20, 10]);
  } finally {
    server.forceShutdown();
  }
});

// ---- finding 3: no backpressure ------------------------------------------------------------

test(
  'a server flood while an async bot thinks is held back, and nothing is lost',
  { timeout: 60_000 },
  async () => {
    const FLOOD = 300; // messages of 32 KB: 9.6 MB
    const filler = 'x'.repeat(32 * 1024);
    let written = 0;
    let release;
    const thinking = new Promise((done) => (release = done));
    const { server, streams, address } = await scriptedServer('127.0.0.1:0', [
      async (call, messages) => {
        await waitFor(messages, 1);
        call.write(welcome);
        call.write({
          match_started: { match_id: 'm-1', game: 'GAME_BELOTE', seat: 0, seats: [] },
        });
        call.write({
          action_request: {
            request_id: 'r1',
            match_id: 'm-1',
            seat: 0,
            observation: { belote: { seat: 0, phase: 'PHASE_BIDDING' } },
            legal_actions: [{ belote: { pass: {} } }],
            attempt: 1,
          },
        });
        // A flood as fast as the bot's connection takes it (waiting for 'drain', as grpc asks).
        for (let index = 0; index < FLOOD; index += 1) {
          const more = call.write({
            error: { code: 'ERROR_CODE_UNKNOWN_REQUEST', message: `${index} ${filler}` },
          });
          written += 1;
          if (!more) await new Promise((done) => call.once('drain', done));
        }
        await waitFor(messages, 2); // the answer
        call.end();
      },
    ]);
    const warnings = [];
    const logger = { ...recording().logger, warn: (text) => warnings.push(text.slice(0, 60)) };
    try {
      const playing = run(
        async (request) => {
          await thinking;
          return request.legalActions[0];
        },
        { address, token: 't', name: 'b', logger, maxQueued: 4 },
      );
      // Until the server is held back (no write for 500 ms) or has written everything.
      let last = -1;
      while (written !== last && written < FLOOD) {
        last = written;
        await new Promise((done) => setTimeout(done, 500));
      }
      assert.ok(written < FLOOD / 2, `the server wrote ${written} of ${FLOOD} messages`);
      release();
      await playing;
      assert.equal(written, FLOOD);
      assert.equal(streams[0][1].action.request_id, 'r1');
      const numbers = warnings.map((text) => Number(/: (\d+) x/.exec(text)[1]));
      assert.deepEqual(
        numbers,
        Array.from({ length: FLOOD }, (_, index) => index),
      ); // every message handled, in order, the last ones too
    } finally {
      release();
      server.forceShutdown();
    }
  },
);

// ---- finding 10: malformed starts ----------------------------------------------------------

test('a start of an unknown game, or with another game settings, is logged, not given to the hook', async () => {
  const { logger, lines } = recording();
  const starts = [];
  const session = new Session(() => null, {
    name: 'b',
    logger,
    onMatchStart: (started) => starts.push(started.match_id),
  });
  const start = (matchId, game, settings) =>
    session.handle({
      kind: 'match_started',
      match_started: { match_id: matchId, game, settings, seat: 0, seats: [] },
    });
  await start('g99', 99, null);
  await start('mixed', 'GAME_BELOTE', { game: 'bestia', bestia: { seats: 5 } });
  await start('fine', 'GAME_BESTIA', { game: 'bestia', bestia: { seats: 5 } });
  await start('plain', 'GAME_BELOTE', null);
  await session.handle({});
  assert.deepEqual(starts, ['fine', 'plain']);
  assert.ok(lines.includes('error cannot read the start of match g99: unknown game 99'), lines);
  assert.ok(
    lines.includes(
      'error cannot read the start of match mixed: bestia settings were given for a belote match',
    ),
    lines,
  );
  assert.ok(lines.includes('warn ignoring an empty message from the server'), lines);
});

// ---- finding 5: matches that never end -----------------------------------------------------

test('matches started and asked but never ended are kept at most MAX_MATCHES at once', async () => {
  const { logger, lines } = recording();
  const session = new Session((request) => request.legalActions[0], { name: 'b', logger });
  session.hello();
  const salt = Buffer.alloc(16, 3);
  const seed = 7;
  const MATCHES = MAX_MATCHES + 500;
  // Seat 1's start as seed 7 deals it (the end deals it again), then what a long match's
  // events weigh.
  const start = startShown('belote', dealSettings('belote', null), seed, 1);
  const bigEvent = { index: KEPT_EVENTS, note: 'e'.repeat(10_000) };
  for (let index = 0; index < MATCHES; index += 1) {
    const matchId = `m${index}`;
    await session.handle({
      kind: 'match_started',
      match_started: {
        match_id: matchId,
        game: 'GAME_BELOTE',
        seat: 1,
        seats: [],
        deal_commitment: dealCommitment(salt, seed, matchId),
      },
    });
    const replies = await session.handle({
      kind: 'action_request',
      action_request: {
        request_id: `r${index}`,
        match_id: matchId,
        seat: 1,
        observation: { game: 'belote', belote: { seat: 1, phase: 'PHASE_BIDDING' } },
        legal_actions: [{ game: 'belote', belote: { pass: {} } }],
        events: [...start, bigEvent],
        attempt: 1,
      },
    });
    assert.equal(replies.length, 1); // every request is still answered
  }
  assert.equal(session.open.size, MAX_MATCHES);
  assert.equal(session.commitments.size, MAX_MATCHES);
  // The least recently active went: the first 500; the last MAX_MATCHES are kept.
  assert.ok(!session.open.has('m0/1') && !session.commitments.has('m499/1'));
  assert.ok(session.open.has('m500/1') && session.commitments.has(`m${MATCHES - 1}/1`));
  // An open request does not keep its message's events (the bulk of a long match).
  for (const entry of session.open.values()) assert.deepEqual(entry.request.message.events, []);
  const warnings = lines.filter((line) => line.startsWith('warn '));
  assert.equal(warnings.length, 1, warnings.join('\n'));
  assert.match(warnings[0], /^warn more than 1024 matches are open at once .* match m0, seat 1/);
  // A match still remembered is checked at its end as before.
  const ends = [];
  session.hooks.onMatchEnd = (ended) => ends.push(ended.deal_verified);
  for (const matchId of [`m${MATCHES - 1}`, 'm0']) {
    await session.handle({
      kind: 'match_ended',
      match_ended: { match_id: matchId, seat: 1, seats: [], deal_salt: salt, seed },
    });
  }
  assert.deepEqual(ends, [true, null]); // m0's commitment was forgotten
});

// ---- finding 8: a storm of tiny rejections -------------------------------------------------

/** A Session whose bot answers `answer(request)`, counting the bot, hook and encoder calls. */
function counted(answer) {
  const { logger, lines } = recording();
  const calls = { bot: 0, hook: 0, serialize: 0 };
  const session = new Session(
    (request) => {
      calls.bot += 1;
      return answer(request, calls.bot);
    },
    { name: 'b', logger, onRejected: () => (calls.hook += 1) },
  );
  const serialize = session.gameAction.serialize;
  session.gameAction = {
    ...session.gameAction,
    serialize: (value) => {
      calls.serialize += 1;
      return serialize(value);
    },
  };
  const ask = async (legal, attempt = 1) => {
    await session.handle({
      kind: 'match_started',
      match_started: { match_id: 'm1', game: 'GAME_BELOTE', seat: 1, seats: [] },
    });
    return session.handle({
      kind: 'action_request',
      action_request: {
        request_id: 'r1',
        match_id: 'm1',
        seat: 1,
        observation: { game: 'belote', belote: { seat: 1, phase: 'PHASE_BIDDING' } },
        legal_actions: legal.map((action) => ({ game: 'belote', belote: action })),
        attempt,
      },
    });
  };
  const reject = () =>
    session.handle({
      kind: 'action_rejected',
      action_rejected: {
        request_id: 'r1',
        match_id: 'm1',
        seat: 1,
        code: 'REJECT_CODE_ILLEGAL_ACTION',
        message: 'no',
        attempts_left: 5,
      },
    });
  return { session, calls, lines, ask, reject };
}

const PASS = { action: 'pass', pass: {} };
const TAKE = { action: 'take', take: { suit: 'SUIT_HEARTS' } };
const sentOf = (replies) => replies.map((reply) => reply.action.action.belote.action);

test('rejections past every distinct legal action are ignored without the bot or a scan', async () => {
  const COPIES = 1_000; // [Pass, Take] * 1,000: two distinct legal actions
  const STORM = 300;
  const { calls, lines, ask, reject } = counted((request) => request.legalActions[0]);
  const legal = Array.from({ length: COPIES }, () => [PASS, TAKE]).flat();
  assert.deepEqual(sentOf(await ask(legal)), ['pass']);
  assert.deepEqual(sentOf(await reject()), ['take']); // the bot repeated Pass: the fallback
  const settledAt = calls.serialize;
  for (let index = 1; index < STORM; index += 1) assert.deepEqual(await reject(), []);
  // Copies of the settled request, with a higher attempt each, are not answered either.
  for (let attempt = 2; attempt < 50; attempt += 1) assert.deepEqual(await ask(legal, attempt), []);
  assert.equal(calls.bot, 2); // the first ask and the one after the first rejection
  assert.equal(calls.hook, 2); // the two rejections of what was sent
  assert.ok(calls.serialize <= 2 * COPIES + 10, `${calls.serialize} actions encoded`); // once
  assert.equal(calls.serialize, settledAt); // the storm itself encodes nothing
  assert.ok(
    lines.some((line) => /^error request r1 .*every legal action was rejected/.test(line)),
    lines.join('\n'),
  );
  // Rate-limited: every ignored rejection is counted, as a warning the 1st, 2nd, 3rd, 10th, 100th.
  const ignored = lines.filter((line) => line.includes('ignoring rejection'));
  assert.equal(ignored.length, STORM - 2);
  const warned = ignored.filter((line) => line.startsWith('warn '));
  assert.deepEqual(
    warned.map((line) => Number(/ignoring rejection (\d+)/.exec(line)[1])),
    [1, 2, 3, 10, 100],
  );
  assert.ok(lines.filter((line) => line.startsWith('warn ')).length <= 8, lines.join('\n'));
});

test('more rejections than distinct legal actions settle the request', async () => {
  // One legal action, a bot that answers a new illegal one each time: the referee rejects each.
  const suits = ['SUIT_HEARTS', 'SUIT_SPADES', 'SUIT_CLUBS', 'SUIT_DIAMONDS'];
  const { calls, lines, ask, reject } = counted((request, call) => ({
    action: 'take',
    take: { suit: suits[(call - 1) % suits.length] },
  }));
  assert.deepEqual(sentOf(await ask(Array.from({ length: 500 }, () => PASS))), ['take']);
  assert.deepEqual(sentOf(await reject()), ['take']); // asked again: another suit
  for (let index = 0; index < 50; index += 1) assert.deepEqual(await reject(), []);
  assert.equal(calls.bot, 2);
  assert.ok(
    lines.some((line) => /^error request r1 .*2 rejections for 1 distinct legal action/.test(line)),
    lines.join('\n'),
  );
});

// ---- finding 9: requests for a match or seat this connection was not told of ---------------

test("a request with no start is answered with one warning per seat; another seat's observation is refused", async () => {
  const { logger, lines } = recording();
  const asked = [];
  const session = new Session(
    (request) => {
      asked.push(`${request.matchId}/${request.seat}`);
      return request.legalActions[0];
    },
    { name: 'b', logger },
  );
  session.hello();
  const request = (id, matchId, seat, observed = seat) =>
    session.handle({
      kind: 'action_request',
      action_request: {
        request_id: id,
        match_id: matchId,
        seat,
        observation: { game: 'belote', belote: { seat: observed, phase: 'PHASE_BIDDING' } },
        legal_actions: [{ game: 'belote', belote: PASS }],
        attempt: 1,
      },
    });
  const unknown = (matchId, seat) =>
    lines.filter(
      (line) =>
        line.startsWith('warn ') &&
        line.includes(`of match ${matchId}, seat ${seat}: this connection got no MatchStarted`),
    ).length;
  await session.handle({
    kind: 'match_started',
    match_started: { match_id: 'mine', game: 'GAME_BELOTE', seat: 0, seats: [] },
  });
  assert.equal((await request('r1', 'mine', 0)).length, 1);
  assert.equal(lines.filter((line) => line.startsWith('warn ')).length, 0, lines.join('\n'));
  // Someone else's match, and another seat of this one: answered, one warning each.
  for (const id of ['r2', 'r3', 'r4']) {
    assert.equal((await request(id, 'someone-elses-match', 3)).length, 1);
  }
  assert.equal((await request('r5', 'mine', 2)).length, 1);
  assert.equal(unknown('someone-elses-match', 3), 1);
  assert.equal(unknown('mine', 2), 1);
  // An observation of another seat: logged, the bot not asked, nothing sent.
  const before = asked.length;
  assert.deepEqual(await request('r6', 'mine', 0, 1), []);
  assert.equal(asked.length, before);
  assert.ok(
    lines.some((line) =>
      /^error request r6 of match mine, seat 0: the observation is seat 1's; not answered/.test(
        line,
      ),
    ),
    lines.join('\n'),
  );
  // A new connection knows only the starts it was sent (a resumed start comes first).
  session.hello();
  await session.handle({
    kind: 'match_started',
    match_started: { match_id: 'mine', game: 'GAME_BELOTE', seat: 0, seats: [], resumed: true },
  });
  assert.equal((await request('r7', 'mine', 0)).length, 1);
  assert.equal(unknown('mine', 0), 0);
  assert.equal((await request('r8', 'someone-elses-match', 3)).length, 1);
  assert.equal(unknown('someone-elses-match', 3), 2); // once per connection
});

// ---- a deal from another seed than the one committed to ----------------------------------

const COMMITTED = 9223372036854775783n; // 2^63 - 25: a 63-bit seed, like the server's own
const RIGGED = 999n;

/**
 * A server's one match for seat 1: it commits to COMMITTED, shows the seat the start that
 * `dealtFrom` deals (inside its request, or live in an EventBatch), takes one answer, reveals
 * COMMITTED (the hash matches) and ends the stream.
 */
const oneMatch =
  (game, settings, dealtFrom, { live }) =>
  async (call, messages) => {
    const matchId = `m-${game}`;
    const salt = Buffer.alloc(16, 9);
    await waitFor(messages, 1);
    call.write(welcome);
    call.write({
      match_started: {
        match_id: matchId,
        game: GAMES[game],
        settings,
        seat: 1,
        seats: [],
        deal_commitment: dealCommitment(salt, COMMITTED, matchId),
      },
    });
    const events = startShown(game, dealSettings(game, settings), dealtFrom, 1);
    if (live) call.write({ events: { match_id: matchId, seat: 1, events } });
    call.write({
      action_request: {
        request_id: 'r1',
        match_id: matchId,
        seat: 1,
        observation: { [game]: { seat: 1 } },
        legal_actions: [{ [game]: { pass: {} } }],
        attempt: 1,
        events: live ? [] : events,
      },
    });
    await waitFor(messages, 2);
    call.write({
      match_ended: {
        match_id: matchId,
        seat: 1,
        status: 'MATCH_STATUS_FINISHED',
        seats: [],
        seed: String(COMMITTED),
        deal_salt: salt,
      },
    });
    call.end();
  };

for (const [game, settings, live, differs] of [
  // Belote: seat 1's first five cards (event 1: it is dealt first, after dealer 0).
  ['belote', null, false, 1],
  // Bestia at 5 seats, events live: the turned trump (event 7, after the start, 5 antes and
  // the hidden hands).
  ['bestia', { bestia: { seats: 5 } }, true, 7],
]) {
  test(`a ${game} start dealt from another seed than the committed one is not verified`, async () => {
    const dealt = (seed) => startShown(game, dealSettings(game, settings), seed, 1);
    assert.notDeepEqual(dealt(RIGGED).at(-1), dealt(COMMITTED).at(-1)); // the seeds deal apart
    for (const [seed, verified] of [
      [RIGGED, false],
      [COMMITTED, true],
    ]) {
      const { server, address } = await scriptedServer('127.0.0.1:0', [
        oneMatch(game, settings, seed, { live }),
      ]);
      const { logger, lines } = recording();
      const ends = [];
      try {
        await run((request) => request.legalActions[0], {
          address,
          token: 't',
          name: 'b',
          games: [game],
          liveEvents: live,
          logger,
          onMatchEnd: (ended) => ends.push(ended.deal_verified),
          reconnect: false,
        });
      } finally {
        server.forceShutdown();
      }
      assert.deepEqual(ends, [verified]);
      const errors = lines.filter((line) => line.startsWith('error '));
      const end = lines.find((line) => line.startsWith(`info match m-${game} MATCH_STATUS_`));
      if (verified) {
        assert.deepEqual(errors, []);
        assert.match(end, /; deal verified$/);
      } else {
        assert.equal(errors.length, 1, lines.join('\n'));
        assert.ok(
          errors[0].startsWith(
            `error match m-${game}: the cards were not dealt from the seed the server committed ` +
              `to (${COMMITTED}): event ${differs} is not what seed ${COMMITTED} deals: {"index":` +
              `${differs},`,
          ),
          errors[0],
        );
        assert.match(end, /; DEAL NOT VERIFIED$/);
      }
    }
  });
}
