'use strict';
// What a hostile or broken server can send, and what the SDK does with it (the findings of the
// hostile-server review): escape sequences in server text, floods, Welcome-then-drop loops,
// servers that never say Welcome, a deal from another seed than the one committed to.

const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const net = require('node:net');
const path = require('node:path');
const { test } = require('node:test');
const v8 = require('node:v8');
const vm = require('node:vm');
const grpc = require('@grpc/grpc-js');
const {
  BotRejected,
  ConnectionLost,
  GAMES,
  MAX_KEPT_BYTES,
  MAX_MATCHES,
  Session,
  dealCommitment,
  loadProto,
  printable,
  run,
} = require('..');
const { KEPT_EVENTS, dealSettings, startShown } = require('../lib/deal');
const { shortText } = require('../lib/log');
const { firstObservation, scriptedServer, waitFor } = require('./support');

// The floods' bound against a hang, not a speed check: ~10-30 s each alone, and past 60 s on a
// loaded 2-core machine (77 s seen with two suites at once).
const FLOOD_TIMEOUT_MS = 180_000;

/** A logger that keeps every line (the first `clip` characters of each), and the lines. */
function recording(clip = Infinity) {
  const lines = [];
  const logger = {};
  for (const level of ['debug', 'info', 'warn', 'error']) {
    logger[level] = (text) =>
      lines.push(`${level} ${text.length > clip ? shortText(text, clip) : text}`);
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
  { timeout: FLOOD_TIMEOUT_MS },
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
        observation: { game: 'belote', belote: firstObservation(seed, 1) },
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

// ---- enormous messages for matches that never end --------------------------------------------

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc');
const MB = 2 ** 20;
const megabytes = (bytes) => `${(bytes / MB).toFixed(1)} MB`;

/** What this process holds after a collection: its heap, with Buffers when `external`. */
function held({ external = false } = {}) {
  gc();
  const usage = process.memoryUsage();
  return usage.heapUsed + (external ? usage.external : 0);
}

const { definition, decodeServerMessage } = loadProto();
const encode = (type, value) => definition[`bisca.v1.${type}`].serialize(value);

function varint(value) {
  const bytes = [];
  for (; value > 127; value >>>= 7) bytes.push((value & 127) | 128);
  bytes.push(value);
  return Buffer.from(bytes);
}

/** Field `number` of a message, length-delimited, holding `bytes` (encoded by hand). */
const field = (number, bytes) =>
  Buffer.concat([varint((number << 3) | 2), varint(bytes.length), bytes]);

// One legal Pass action (ActionRequest.legal_actions, field 5): 6 bytes on the wire, some 180
// bytes decoded (lib/kept.js).
const PASS_BYTES = field(5, encode('GameAction', { belote: { pass: {} } }));

/**
 * A ServerMessage's bytes asking seat 0 of `matchId` to act, with `legal` legal Pass actions,
 * encoded by hand as a flooding server would (the list once, then copied).
 */
function passRequest(requestId, matchId, legal) {
  const head = encode('ActionRequest', {
    request_id: requestId,
    match_id: matchId,
    seat: 0,
    observation: { belote: { seat: 0 } },
    attempt: 1,
  });
  return field(4, Buffer.concat([head, ...Array(legal).fill(PASS_BYTES)])); // action_request
}

/** A ServerMessage as the transport gives it: encoded, then decoded. */
const throughWire = (message) => decodeServerMessage(encode('ServerMessage', message));

const ONE_CARD = { suit: 'SUIT_HEARTS', rank: 'RANK_ACE' };

test('requests for matches never started are kept within MAX_KEPT_BYTES, whatever their size', async () => {
  const { logger, lines } = recording();
  const session = new Session((request) => request.legalActions[0], { name: 'b', logger });
  session.hello();
  // 400 requests of 50 KB (8,500 legal actions), 1.5 MB each decoded: 600 MB in all, which the
  // old session held (7 MB now).
  const FLOOD = 400;
  const before = held();
  for (let index = 0; index < FLOOD; index += 1) {
    const request = passRequest(`r${index}`, `never-started-${index}`, 8_500);
    assert.equal((await session.handle(decodeServerMessage(request))).length, 1); // answered
  }
  const after = held() - before;
  // Two tables (open requests, starts) of at most MAX_KEPT_BYTES by footprint(), which is
  // never below what they hold.
  assert.ok(after < 2 * MAX_KEPT_BYTES, `${megabytes(after)} held after ${FLOOD} requests`);
  assert.ok(session.open.bytes <= MAX_KEPT_BYTES, megabytes(session.open.bytes));
  assert.ok(session.open.size > 1 && session.open.size < 20, `${session.open.size} kept`);
  assert.ok(session.open.has(`never-started-${FLOOD - 1}/0`)); // the newest stays
  assert.ok(!session.open.has('never-started-0/0')); // the least recently active went first
  assert.equal(session.started.size, Math.min(FLOOD, MAX_MATCHES)); // (tiny entries)
  const warnings = lines.filter((line) => line.startsWith('warn more than'));
  assert.equal(warnings.length, 1, warnings.join('\n'));
  assert.match(
    warnings[0],
    /^warn more than 16 MiB of open requests are kept \(does the server send messages that big, or never end its matches\?\); forgetting the least recently active, match never-started-0, seat 0,/,
  );
  // A real match still plays: its request is answered, and after a rejection, asked again.
  await session.handle(
    throughWire({ match_started: { match_id: 'real', game: 'GAME_BELOTE', seat: 0, seats: [] } }),
  );
  const ask = throughWire({
    action_request: {
      request_id: 'real-1',
      match_id: 'real',
      seat: 0,
      observation: { belote: { seat: 0 } },
      legal_actions: [{ belote: { pass: {} } }, { belote: { take: { suit: 'SUIT_CLUBS' } } }],
      attempt: 1,
    },
  });
  assert.equal((await session.handle(ask))[0].action.request_id, 'real-1');
  const rejected = await session.handle(
    throughWire({
      action_rejected: {
        request_id: 'real-1',
        match_id: 'real',
        seat: 0,
        code: 'REJECT_CODE_ILLEGAL_ACTION',
        attempts_left: 2,
      },
    }),
  );
  assert.equal(rejected[0].action.action.belote.action, 'take');
});

test('big events at the start of committed matches are not kept, only their size', async () => {
  const { logger, lines } = recording();
  const ends = [];
  const session = new Session(() => null, {
    name: 'b',
    logger,
    onMatchEnd: (ended) => ends.push(ended.deal_verified),
  });
  const salt = Buffer.alloc(16, 5);
  const seed = 7;
  // Seat 1's start as seed 7 deals it (events 0, 1 and 5), and at every index past the start
  // (6: other seats' cards would fail the check) below KEPT_EVENTS an event of 60 KB (10,000
  // cards dealt), which a start never has.
  const start = startShown('belote', dealSettings('belote', null), seed, 1);
  const bigAt = (index) => ({
    index,
    belote: { cards_dealt: { seat: 1, cards: Array(10_000).fill(ONE_CARD) } },
  });
  const taken = new Set(start.map(({ index }) => index));
  const others = Array.from({ length: KEPT_EVENTS }, (_, index) => index).filter(
    (index) => !taken.has(index) && index >= 6,
  );
  const events = Buffer.concat(
    [...start, ...others.map(bigAt)].map((event) => field(3, encode('GameEvent', event))),
  );
  const begin = async (matchId, shown) => {
    await session.handle(
      throughWire({
        match_started: {
          match_id: matchId,
          game: 'GAME_BELOTE',
          seat: 1,
          seats: [],
          deal_commitment: dealCommitment(salt, seed, matchId),
        },
      }),
    );
    const batch = field(
      3,
      Buffer.concat([encode('EventBatch', { match_id: matchId, seat: 1 }), shown]),
    );
    await session.handle(decodeServerMessage(batch)); // ServerMessage.events
  };
  const end = (matchId) =>
    session.handle(
      throughWire({
        match_ended: { match_id: matchId, seat: 1, seats: [], deal_salt: salt, seed },
      }),
    );
  // 24 matches of 1.7 MB of events each: the old session kept a slice of each event's text,
  // which kept the whole text (400 KB an event), 270 MB in all (nothing now).
  const MATCHES = 24;
  const before = held();
  for (let index = 0; index < MATCHES; index += 1) await begin(`m${index}`, events);
  const after = held() - before;
  assert.ok(after < MAX_KEPT_BYTES / 4, `${megabytes(after)} held for ${MATCHES} matches`);
  assert.ok(session.commitments.bytes < MAX_KEPT_BYTES, megabytes(session.commitments.bytes));
  assert.equal(session.commitments.size, MATCHES);
  // The start was dealt from the seed: verified, the big events past it change nothing.
  await end(`m${MATCHES - 1}`);
  assert.deepEqual(ends, [true]);
  // A big event with the index of one of the seat's start events: not verified, its size named.
  const last = start.at(-1).index;
  const rigged = Buffer.concat(
    [...start.slice(0, -1), bigAt(last)].map((event) => field(3, encode('GameEvent', event))),
  );
  await begin('rigged', rigged);
  await end('rigged');
  assert.deepEqual(ends, [true, false]);
  const errors = lines.filter((line) => line.startsWith('error '));
  assert.equal(errors.length, 1, errors.join('\n'));
  assert.match(
    errors[0],
    new RegExp(
      `^error match rigged: the cards were not dealt from the seed the server committed to ` +
        `\\(7\\): event ${last} is not what seed 7 deals: 60,0\\d\\d bytes were sent$`,
    ),
  );
});

test('starts with megabyte match ids, commitments and settings are kept within MAX_KEPT_BYTES', async () => {
  const { logger, lines } = recording(300); // (a line quotes a match id: 1 MB)
  const session = new Session(() => null, { name: 'b', logger });
  session.hello();
  // 48 starts, each with a match id of 1 MB, a commitment of 256 KB and an ante mode of 256 KB
  // (settings the engine refuses: the reason quotes it): 2.5 MB kept each by the old session.
  const MATCHES = 48;
  const idOf = (index) => `m${index}-${'x'.repeat(MB)}`;
  const before = held({ external: true });
  for (let index = 0; index < MATCHES; index += 1) {
    await session.handle(
      throughWire({
        match_started: {
          match_id: idOf(index),
          game: 'GAME_BESTIA',
          settings: { bestia: { ante_mode: 'y'.repeat(256 * 1024) } },
          seat: 0,
          seats: [],
          deal_commitment: Buffer.alloc(256 * 1024, index + 1),
        },
      }),
    );
  }
  const after = held({ external: true }) - before;
  // Two tables (deal commitments, starts) of at most MAX_KEPT_BYTES, with room for the last
  // message (1.5 MB) and this test's log lines (~29 MB in all; the old session held 120 MB).
  assert.ok(after < 2 * MAX_KEPT_BYTES + 8 * MB, `${megabytes(after)} held for ${MATCHES} starts`);
  for (const table of [session.commitments, session.started]) {
    assert.ok(table.bytes <= MAX_KEPT_BYTES, megabytes(table.bytes));
    assert.ok(table.size > 1 && table.size < MATCHES, `${table.size} kept`);
    assert.ok(table.has(`${idOf(MATCHES - 1)}/0`)); // the newest stays
    assert.ok(!table.has(`${idOf(0)}/0`));
  }
  const { unreadable } = session.commitments.get(`${idOf(MATCHES - 1)}/0`);
  assert.ok(unreadable.startsWith("ante_mode must be 'all' or 'dealer', got yyy"), unreadable);
  assert.ok(unreadable.length < 1010, String(unreadable.length)); // a short text of its own
  const warnings = lines.filter((line) => line.startsWith('warn '));
  assert.equal(warnings.length, 1, warnings.map((line) => line.slice(0, 200)).join('\n'));
  assert.match(warnings[0], /^warn more than 16 MiB of (deal commitments|starts) are kept/);
});

/** A real match's start and its first request (seat 0 may only pass), after a flood. */
const realMatch = () => [
  { match_started: { match_id: 'real', game: 'GAME_BELOTE', seat: 0, seats: [] } },
  {
    action_request: {
      request_id: 'real-1',
      match_id: 'real',
      seat: 0,
      observation: { belote: { seat: 0 } },
      legal_actions: [{ belote: { pass: {} } }],
      attempt: 1,
    },
  },
];

/**
 * Runs test/flooded_bot.js (a bot in a process of its own) against `address`: the child, and
 * its end: exit code, what it reported (peaks and what its heap held at the end, in MB) and
 * its stderr lines.  It stops at once past 1,000 MB of RSS.
 */
function floodedBot(address, env = {}) {
  const child = spawn(process.execPath, [path.join(__dirname, 'flooded_bot.js')], {
    env: { ...process.env, BISCA_ADDRESS: address, FLOODED_RSS_LIMIT_MB: '1000', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const ended = new Promise((done) =>
    child.on('close', (code) =>
      done({
        code,
        report: stdout ? JSON.parse(stdout) : null,
        lines: stderr.split('\n').filter(Boolean),
      }),
    ),
  );
  return { child, ended };
}

test(
  'a bot flooded with requests of 1 MB for matches never started stays small and plays on',
  { timeout: FLOOD_TIMEOUT_MS },
  async () => {
    // 40 requests of 1 MB (175,000 legal actions; 31 MB each decoded): the old session kept
    // them all, 1.2 GB, and its bot went past 1.8 GB.
    const FLOOD = 40;
    const { server, streams, address } = await scriptedServer('127.0.0.1:0', [
      async (call, messages) => {
        await waitFor(messages, 1);
        call.write(welcome);
        for (let index = 0; index < FLOOD; index += 1) {
          const more = call.write(passRequest(`r${index}`, `never-started-${index}`, 175_000));
          if (!more) await new Promise((done) => call.once('drain', done));
        }
        for (const message of realMatch()) call.write(message);
        await waitFor(messages, FLOOD + 2);
        call.end();
      },
    ]);
    try {
      const { code, report, lines } = await floodedBot(address).ended;
      // What it holds at the end: its own ~10 MB and the tables (each at most MAX_KEPT_BYTES
      // by footprint(), which is never below what is held).
      assert.ok(report.heldHeapMb < 64, JSON.stringify(report));
      // Its peak: the message in hand (31 MB) and the garbage of those before it, which V8
      // collects when it sees fit (~450 MB here, whatever the flood's length: 20 requests
      // or 100).
      assert.ok(report.peakRssMb < 1000, JSON.stringify(report));
      assert.equal(code, 0, lines.join('\n'));
      assert.equal(report.ended, 'done');
      // Every request answered, in order, the real one last.
      const answered = streams[0].slice(1).map((message) => message.action.request_id);
      assert.deepEqual(answered, [
        ...Array.from({ length: FLOOD }, (_, index) => `r${index}`),
        'real-1',
      ]);
      const warnings = lines.filter((line) => line.startsWith('warn more than'));
      assert.equal(warnings.length, 1, warnings.join('\n'));
      assert.match(warnings[0], /^warn more than 16 MiB of open requests are kept/);
    } finally {
      server.forceShutdown();
    }
  },
);

test(
  'messages waiting for a bot that thinks are kept as their bytes, not decoded',
  { timeout: FLOOD_TIMEOUT_MS },
  async () => {
    // While the bot thinks over its first request, a flood of requests of 1 MB (31 MB each
    // decoded): the two dozen that get through before flow control holds the server back
    // waited decoded (the old bot: 576 MB while it thought); as bytes they take 24 MB (the
    // bot: ~100 MB).
    const FLOOD = 40;
    let written = 0;
    const { server, streams, address } = await scriptedServer('127.0.0.1:0', [
      async (call, messages) => {
        await waitFor(messages, 1);
        call.write(welcome);
        for (const message of realMatch()) call.write(message);
        for (let index = 0; index < FLOOD; index += 1) {
          const more = call.write(passRequest(`r${index}`, `never-started-${index}`, 175_000));
          written += 1;
          if (!more) await new Promise((done) => call.once('drain', done));
        }
        await waitFor(messages, FLOOD + 2);
        call.end();
      },
    ]);
    const bot = floodedBot(address, { FLOODED_THINK: '1' });
    try {
      // Until the server is held back (no write for 500 ms) or has written everything.
      let last = -1;
      while (written !== last && written < FLOOD) {
        last = written;
        await new Promise((done) => setTimeout(done, 500));
      }
      bot.child.stdin.end('go\n');
      const { code, report, lines } = await bot.ended;
      // Its own ~70 MB, the request in hand (tiny) and the flood's bytes: 16 messages in
      // grpc-js's buffer, 8 in the SDK's queue, an HTTP/2 window.
      assert.ok(report.peakThinkingRssMb < 250, JSON.stringify(report));
      assert.equal(code, 0, lines.join('\n'));
      const answered = streams[0].slice(1).map((message) => message.action.request_id);
      assert.deepEqual(answered, [
        'real-1',
        ...Array.from({ length: FLOOD }, (_, index) => `r${index}`),
      ]);
    } finally {
      bot.child.kill();
      server.forceShutdown();
    }
  },
);

test('a server message that cannot be decoded fails the connection in its turn', async () => {
  const { server, address } = await scriptedServer('127.0.0.1:0', [
    async (call, messages) => {
      await waitFor(messages, 1);
      call.write(welcome);
      call.write(Buffer.from([0x22, 0x05, 0x0a, 0xff])); // an ActionRequest cut short
    },
  ]);
  const { logger } = recording();
  try {
    const error = await run(() => null, {
      address,
      token: 't',
      name: 'b',
      logger,
      reconnect: false,
    }).catch((failure) => failure);
    assert.ok(error instanceof ConnectionLost, String(error));
    assert.equal(error.code, grpc.status.INTERNAL); // retried, with reconnects on
    assert.match(error.message, /INTERNAL: a server message could not be decoded: /);
  } finally {
    server.forceShutdown();
  }
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
  (game, settings, dealtFrom, { live, observedFrom = dealtFrom }) =>
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
        observation: {
          [game]: game === 'belote' ? firstObservation(observedFrom, 1) : { seat: 1 },
        },
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

/**
 * A bot that plays the first legal action, run once against a server playing `script`: each
 * match's `deal_verified` at its end, and the lines it logged.
 */
async function playedAgainst(script, options = {}) {
  const { server, address } = await scriptedServer('127.0.0.1:0', [script]);
  const { logger, lines } = recording();
  const ends = [];
  try {
    await run((request) => request.legalActions[0], {
      address,
      token: 't',
      name: 'b',
      logger,
      onMatchEnd: (ended) => ends.push(ended.deal_verified),
      reconnect: false,
      ...options,
    });
  } finally {
    server.forceShutdown();
  }
  return { ends, lines };
}

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
      const { ends, lines } = await playedAgainst(oneMatch(game, settings, seed, { live }), {
        games: [game],
        liveEvents: live,
      });
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

test('a Belote request whose observation is dealt from another seed is not verified, its events honest', async () => {
  // The review's S03: every event is the committed seed's, the hand the bot plays from is not.
  const { ends, lines } = await playedAgainst(
    oneMatch('belote', null, COMMITTED, { live: false, observedFrom: RIGGED }),
  );
  assert.deepEqual(ends, [false]);
  const errors = lines.filter((line) => line.startsWith('error '));
  assert.equal(errors.length, 1, lines.join('\n'));
  assert.ok(
    errors[0].startsWith(
      `error match m-belote: the cards were not dealt from the seed the server committed to ` +
        `(${COMMITTED}): the hand in seat 1's first request is not what seed ${COMMITTED} deals: ` +
        'suit: SUIT_',
    ),
    errors[0],
  );
});
