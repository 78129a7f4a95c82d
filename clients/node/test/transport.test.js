'use strict';
// run() against a scripted grpc-js server: clean ends, reconnects, fatal errors, unix sockets.

const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { test } = require('node:test');
const grpc = require('@grpc/grpc-js');
const { BotRejected, ConnectionLost, run } = require('..');
const { scriptedServer, waitFor } = require('./support');

const quiet = { debug() {}, info() {}, warn() {}, error() {} };

const welcome = {
  welcome: { protocol_version: 1, bot_name: 'b', server_version: 't', connection_id: 'c' },
};
const legal = {
  game: 'belote',
  belote: { play_card: { card: { suit: 'SUIT_HEARTS', rank: 'RANK_ACE' } } },
};
const requestMessage = {
  action_request: {
    request_id: 'r1',
    match_id: 'm-1',
    seat: 0,
    observation: { belote: { seat: 0, phase: 'PHASE_PLAYING' } },
    legal_actions: [legal],
    clock: { move_ms: 1000, bank_ms: 0 },
    attempt: 1,
  },
};

test('plays until the server ends the stream, over a unix socket', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bisca-node-'));
  const { server, streams, address } = await scriptedServer(`unix:${dir}/arena.sock`, [
    async (call, messages) => {
      await waitFor(messages, 1);
      call.write(welcome);
      call.write(requestMessage);
      await waitFor(messages, 2);
      call.end();
    },
  ]);
  try {
    await run((request) => request.legalActions[0], {
      address,
      token: 'tok',
      name: 'b',
      logger: quiet,
    });
    const [messages] = streams;
    assert.equal(messages[0].hello.token, 'tok');
    assert.equal(messages[0].hello.protocol_version, 2);
    assert.equal(messages[1].action.request_id, 'r1');
    assert.equal(messages[1].action.action.belote.play_card.card.rank, 'RANK_ACE');
  } finally {
    server.forceShutdown();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('reconnects after a transport failure and says hello again with the same token', async () => {
  const { server, streams, address } = await scriptedServer('127.0.0.1:0', [
    async (call, messages) => {
      await waitFor(messages, 1);
      call.write(welcome);
      call.emit('error', { code: grpc.status.UNAVAILABLE, details: 'going away' });
    },
    async (call, messages) => {
      await waitFor(messages, 1);
      call.write(welcome);
      call.end();
    },
  ]);
  try {
    await run(() => null, {
      address,
      token: 'tok',
      name: 'b',
      logger: quiet,
      backoff: { initialMs: 10 },
    });
    assert.equal(streams.length, 2);
    assert.deepEqual(
      streams.map((messages) => messages[0].hello.token),
      ['tok', 'tok'],
    );
  } finally {
    server.forceShutdown();
  }
});

test('a fatal error from the server rejects with BotRejected', async () => {
  const { server, address } = await scriptedServer('127.0.0.1:0', [
    async (call, messages) => {
      await waitFor(messages, 1);
      call.write({
        error: { code: 'ERROR_CODE_UNKNOWN_TOKEN', message: 'unknown bot token', fatal: true },
      });
      call.end();
    },
  ]);
  try {
    await assert.rejects(
      run(() => null, { address, token: 'nope', name: 'b', logger: quiet }),
      (error) => error instanceof BotRejected && error.code === 'ERROR_CODE_UNKNOWN_TOKEN',
    );
  } finally {
    server.forceShutdown();
  }
});

test('gives up with ConnectionLost when nothing answers within the budget', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bisca-node-'));
  const started = Date.now();
  try {
    await assert.rejects(
      run(() => null, {
        address: `unix:${dir}/nobody.sock`,
        token: 't',
        name: 'b',
        logger: quiet,
        backoff: { initialMs: 20, maximumMs: 50, budgetMs: 300 },
      }),
      (error) => error instanceof ConnectionLost && error.code === grpc.status.UNAVAILABLE,
    );
    assert.ok(Date.now() - started < 5000);
    await assert.rejects(
      run(() => null, {
        address: `unix:${dir}/nobody.sock`,
        token: 't',
        name: 'b',
        logger: quiet,
        reconnect: false,
      }),
      ConnectionLost,
    );
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('address and token default to BISCA_ADDRESS and BISCA_TOKEN', async () => {
  const saved = { address: process.env.BISCA_ADDRESS, token: process.env.BISCA_TOKEN };
  delete process.env.BISCA_ADDRESS;
  delete process.env.BISCA_TOKEN;
  try {
    await assert.rejects(
      run(() => null, { name: 'b', logger: quiet }),
      /BISCA_ADDRESS/,
    );
    await assert.rejects(
      run(() => null, { name: 'b', address: 'x:1', logger: quiet }),
      /BISCA_TOKEN/,
    );
  } finally {
    for (const [key, variable] of [
      ['address', 'BISCA_ADDRESS'],
      ['token', 'BISCA_TOKEN'],
    ]) {
      if (saved[key] !== undefined) process.env[variable] = saved[key];
    }
  }
});

/** `source` run as a bot process on `address`: its exit code and stderr. */
function botProcess(source, address) {
  const child = spawn(process.execPath, ['-e', source], {
    cwd: path.resolve(__dirname, '..'),
    env: { ...process.env, BISCA_ADDRESS: address, BISCA_TOKEN: 'tok' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  return new Promise((done) => child.on('close', (code) => done({ code, stderr })));
}

/** Until `count` messages came, or the bot went away. */
const waitOrGone = (call, messages, count) =>
  new Promise((done) => {
    const poll = () => (messages.length >= count || call.cancelled ? done() : setTimeout(poll, 5));
    poll();
  });

/** A server asking two requests, then ending the stream (or the bot going away). */
function twoRequests() {
  return scriptedServer('127.0.0.1:0', [
    async (call, messages) => {
      await waitFor(messages, 1);
      call.write(welcome);
      for (const [index, id] of ['r1', 'r2'].entries()) {
        call.write({ action_request: { ...requestMessage.action_request, request_id: id } });
        await waitOrGone(call, messages, index + 2);
      }
      call.end();
    },
  ]);
}

// A bot as its author writes it: run() and nothing around it.
const THROWING_BOT = `
  const { run } = require('.');
  run(function strategy() { throw new Error('deliberate bug'); }, { name: 'b' });
`;

test('a bot process whose bot throws ends, non-zero, with the stack on stderr', async () => {
  const { server, streams, address } = await twoRequests();
  try {
    const { code, stderr } = await botProcess(THROWING_BOT, address);
    assert.notEqual(code, 0);
    assert.match(stderr, /ERROR bisca\.client: the bot threw on request r1 .*; ending the bot/);
    assert.match(stderr, /Error: deliberate bug\n +at .*\bstrategy\b/); // its stack
    assert.match(stderr, /BotCrashed: the bot's callback threw on request r1/); // the rejection
    assert.equal(streams[0].length, 1); // the hello, no answer
  } finally {
    server.forceShutdown();
  }
});

test('with keepGoing a throwing bot plays on, saying so on every request', async () => {
  const { server, streams, address } = await twoRequests();
  const errors = [];
  try {
    await run(
      function strategy() {
        throw new Error('deliberate bug');
      },
      {
        address,
        token: 'tok',
        name: 'b',
        keepGoing: true,
        logger: { ...quiet, error: (t) => errors.push(t) },
      },
    );
    assert.equal(errors.length, 2);
    for (const [index, line] of errors.entries()) {
      assert.ok(
        line.startsWith(
          `the bot threw on request r${index + 1} (match m-1, seat 0); keepGoing: ` +
            'sending a legal action instead: Error: deliberate bug\n',
        ),
        line,
      );
    }
    assert.deepEqual(
      streams[0].slice(1).map((message) => message.action.request_id),
      ['r1', 'r2'],
    );
  } finally {
    server.forceShutdown();
  }
});
