'use strict';
// How the Node SDK reads its TLS options (grpcs://, ca, clientCert/clientKey and their BISCA_*
// variables), and how it words failed TLS connections; network-free.  The handshakes
// themselves, with certificates made by the test, are in tests/edge/test_tls.py.

const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { test, beforeEach, after } = require('node:test');
const { run } = require('..');
const { refusal, targetFor } = require('../lib/tls');

const quiet = { debug() {}, info() {}, warn() {}, error() {} };
const VARIABLES = ['BISCA_CA', 'BISCA_CLIENT_CERT', 'BISCA_CLIENT_KEY'];
const saved = Object.fromEntries(VARIABLES.map((name) => [name, process.env[name]]));
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bisca-node-tls-'));
// Node reads a CA file's certificates only when it connects; PEM framing is enough here.
const ca = path.join(dir, 'ca.pem');
fs.writeFileSync(ca, '-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydA==\n-----END CERTIFICATE-----\n');
const notPem = path.join(dir, 'notes.txt');
fs.writeFileSync(notPem, 'not a certificate');
const brokenKey = path.join(dir, 'bot.key.pem');
fs.writeFileSync(brokenKey, '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n');

// grpc-js's details for the failures the SDK words (seen with @grpc/grpc-js 1.14).
const VERIFY_FAILED =
  'No connection established. Last error: Error: unable to verify the first certificate. ' +
  'Resolution note: ';
const CLOSED = 'No connection established. Last error: Failed to connect (2026-12-01). ';
const REFUSED = 'No connection established. Last error: Error: connect ECONNREFUSED 127.0.0.1:1.';

beforeEach(() => {
  for (const name of VARIABLES) delete process.env[name];
});
after(() => {
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  fs.rmSync(dir, { recursive: true, force: true });
});

test('plain addresses stay plaintext', () => {
  for (const address of ['127.0.0.1:50051', 'localhost:50051', 'unix:/tmp/arena.sock']) {
    const target = targetFor(address);
    assert.equal(target.tls, false);
    assert.equal(target.dial, address);
  }
});

test('grpcs:// asks for TLS verified against the root certificates', () => {
  const target = targetFor('grpcs://arena.example:443');
  assert.equal(target.tls, true);
  assert.equal(target.dial, 'arena.example:443');
  assert.equal(target.ca, null);
});

test('a CA alone asks for TLS, given or from BISCA_CA', () => {
  const given = targetFor('127.0.0.1:50051', { ca });
  assert.equal(given.tls, true);
  assert.equal(given.ca, ca);
  process.env.BISCA_CA = ca;
  assert.equal(targetFor('127.0.0.1:50051').ca, ca);
});

test('a client certificate needs its key', () => {
  assert.throws(() => targetFor('grpcs://h:1', { clientCert: ca }), /give both clientCert/);
  assert.throws(
    () => targetFor('grpcs://h:1', { clientKey: brokenKey }),
    /BISCA_CLIENT_CERT, BISCA_CLIENT_KEY/,
  );
});

test('files that cannot be used are named', () => {
  const missing = path.join(dir, 'missing.pem');
  assert.throws(() => targetFor('grpcs://h:1', { ca: missing }), {
    message: `CA file ${missing}: no such file`,
  });
  assert.throws(() => targetFor('grpcs://h:1', { ca: dir }), /^Error: CA file .*: cannot read/);
  assert.throws(() => targetFor('grpcs://h:1', { ca: notPem }), {
    message: `CA file ${notPem}: not PEM (no 'BEGIN CERTIFICATE' block)`,
  });
  process.env.BISCA_CLIENT_CERT = ca;
  process.env.BISCA_CLIENT_KEY = notPem;
  assert.throws(() => targetFor('grpcs://h:1'), /client key .* \(from BISCA_CLIENT_KEY\): not PEM/);
  // PEM framing around no key: Node's own parser refuses it, and the files are named.
  process.env.BISCA_CLIENT_KEY = brokenKey;
  assert.throws(() => targetFor('grpcs://h:1'), /cannot use client certificate .*bot\.key\.pem/);
});

test('run() rejects with the file it cannot use', async () => {
  await assert.rejects(
    run(() => null, {
      address: 'grpcs://127.0.0.1:1',
      token: 't',
      name: 'b',
      ca: notPem,
      logger: quiet,
    }),
    /not PEM/,
  );
});

test('a unix socket is plaintext whatever the TLS files', () => {
  const warnings = [];
  const target = targetFor('unix:/tmp/arena.sock', { ca }, { warn: (t) => warnings.push(t) });
  assert.equal(target.tls, false);
  assert.match(warnings[0], /serves in plaintext: the TLS files given are not used/);
  assert.throws(() => targetFor('grpcs://unix:/tmp/arena.sock'), /served in plaintext/);
});

test('failed handshakes of a first connection are refusals, worded', () => {
  const first = { everWelcomed: false };
  assert.match(refusal(targetFor('grpcs://h:1'), VERIFY_FAILED, first), /root certificates/);
  const withCa = targetFor('grpcs://h:1', { ca });
  assert.match(refusal(withCa, VERIFY_FAILED, first), new RegExp(`against the CA in ${ca}`));
  assert.match(refusal(withCa, CLOSED, first), /requires a client certificate/);
  const withCert = { ...withCa, clientCert: '/certs/bot.pem' };
  assert.match(
    refusal(withCert, CLOSED, first),
    /does not accept the client certificate \/certs\/bot\.pem/,
  );
  // Retried as before: a refused TCP connection, any failure after a Welcome, plaintext.
  assert.equal(refusal(withCa, REFUSED, first), null);
  assert.equal(refusal(withCa, VERIFY_FAILED, { everWelcomed: true }), null);
  assert.equal(refusal(targetFor('h:1'), VERIFY_FAILED, first), null);
});
