'use strict';
// TLS for a bot's connection (the Node twin of the Python SDK's bisca.client._tls): what an
// address and the files given ask for, and what a failed TLS connection means, in words.
//
// A connection uses TLS when the address is grpcs://HOST:PORT, or when a CA file or a client
// certificate is given (options ca / clientCert + clientKey, or $BISCA_CA / $BISCA_CLIENT_CERT
// + $BISCA_CLIENT_KEY).  The server's certificate is verified against the CA file, or against
// Node's root certificates when there is none.  unix: addresses are always plaintext: the
// server serves its unix socket so (it is local; the sandboxed bots it launches use one).
//
// grpc-js reports every failed connection as UNAVAILABLE, which a bot retries for its whole
// backoff budget; a certificate that cannot be verified will not become valid by retrying, so
// refusal() names those failures and run() stops at once.

const fs = require('node:fs');
const grpc = require('@grpc/grpc-js');

const TLS_SCHEME = 'grpcs://';
const CA_VARIABLE = 'BISCA_CA';
const CLIENT_CERT_VARIABLE = 'BISCA_CLIENT_CERT';
const CLIENT_KEY_VARIABLE = 'BISCA_CLIENT_KEY';

// Node's words for a handshake that failed on the client's side: a server certificate it could
// not verify, a name the certificate does not carry, or a peer that does not speak TLS.
const HANDSHAKE_FAILURE = /certificate|altnames|SSL routines|TLS|handshake/i;
// What grpc-js says when a mutual-TLS server refuses the client's certificate (or its lack of
// one): with TLS 1.3 the client's side of the handshake is done when the server checks, so the
// server just closes the connection before HTTP/2 starts.
const CLOSED_IN_HANDSHAKE = /Failed to connect/;

/** The file given, else the environment variable's (unset or empty: none). */
function given(value, variable, what) {
  if (value) return { path: String(value), name: `${what} ${value}` };
  const fromEnv = process.env[variable];
  return fromEnv ? { path: fromEnv, name: `${what} ${fromEnv} (from ${variable})` } : null;
}

/**
 * The file's bytes, checked to hold a PEM block: grpc-js takes anything and only fails at the
 * handshake, with a message that names no file.
 */
function readPem(file, marker) {
  if (file === null) return null;
  let data;
  try {
    data = fs.readFileSync(file.path);
  } catch (error) {
    const why = error.code === 'ENOENT' ? 'no such file' : `cannot read it: ${error.message}`;
    throw new Error(`${file.name}: ${why}`);
  }
  if (!data.includes(marker)) {
    throw new Error(`${file.name}: not PEM (no '${marker.replace(/^-+|-+$/g, '')}' block)`);
  }
  return data;
}

/**
 * Where a bot connects and how: {address (as given), dial (what grpc-js connects to),
 * credentials, tls, ca, clientCert}.  Throws an Error naming the file for one that is missing
 * or not PEM.
 */
function targetFor(address, options = {}, logger = null) {
  const ca = given(options.ca, CA_VARIABLE, 'CA file');
  const clientCert = given(options.clientCert, CLIENT_CERT_VARIABLE, 'client certificate');
  const clientKey = given(options.clientKey, CLIENT_KEY_VARIABLE, 'client key');
  const wantsTls = address.startsWith(TLS_SCHEME);
  const dial = wantsTls ? address.slice(TLS_SCHEME.length) : address;
  const plaintext = { address, dial, credentials: grpc.credentials.createInsecure(), tls: false };
  if (dial.startsWith('unix:')) {
    if (wantsTls) {
      throw new Error(
        `${address}: a unix socket is served in plaintext; drop ${TLS_SCHEME} (TLS is for TCP ` +
          'addresses)',
      );
    }
    if ((ca || clientCert || clientKey) && logger) {
      logger.warn(
        `${address} is a unix socket, which the server serves in plaintext: the TLS files ` +
          'given are not used',
      );
    }
    return plaintext;
  }
  if ((clientCert === null) !== (clientKey === null)) {
    throw new Error(
      'a client certificate needs its key and a key its certificate: give both clientCert and ' +
        `clientKey (${CLIENT_CERT_VARIABLE}, ${CLIENT_KEY_VARIABLE})`,
    );
  }
  if (!wantsTls && !ca && !clientCert) return plaintext;
  const root = readPem(ca, '-----BEGIN CERTIFICATE-----');
  const key = readPem(clientKey, 'PRIVATE KEY-----');
  const chain = readPem(clientCert, '-----BEGIN CERTIFICATE-----');
  let credentials;
  try {
    credentials = grpc.credentials.createSsl(root, key, chain);
  } catch (error) {
    // Node parses the client's certificate and key here; its message names neither file.
    const files = [clientCert, clientKey, ca].filter(Boolean).map((file) => file.name);
    throw new Error(`cannot use ${files.join(', ')} for TLS: ${error.message}`);
  }
  return {
    address,
    dial,
    credentials,
    tls: true,
    ca: ca && ca.path,
    clientCert: clientCert && clientCert.path,
  };
}

/**
 * Why a failed connection cannot succeed by retrying, or null (retry it).  Only before the
 * run's first Welcome: a bot that has played through this server already retries as after any
 * failure (a server restarting may drop a connection in the middle of its handshake).
 */
function refusal(target, details, { everWelcomed }) {
  if (!target.tls || everWelcomed) return null;
  if (HANDSHAKE_FAILURE.test(details)) {
    const against = target.ca
      ? `the CA in ${target.ca}`
      : `Node's root certificates (give the server's CA: ca or ${CA_VARIABLE})`;
    return (
      `TLS handshake with ${target.address} failed: the server's certificate could not be ` +
      `verified against ${against}, or it does not name the host connected to (${details})`
    );
  }
  if (CLOSED_IN_HANDSHAKE.test(details)) {
    const need = target.clientCert
      ? `it does not accept the client certificate ${target.clientCert} (mutual TLS: the ` +
        'certificate must be signed by the CA the server trusts)'
      : 'it requires a client certificate (mutual TLS): give clientCert and clientKey ' +
        `(${CLIENT_CERT_VARIABLE}, ${CLIENT_KEY_VARIABLE})`;
    return (
      `the server at ${target.address} closed the connection during the TLS handshake: ` +
      `${need} (${details})`
    );
  }
  return null;
}

module.exports = {
  CA_VARIABLE,
  CLIENT_CERT_VARIABLE,
  CLIENT_KEY_VARIABLE,
  TLS_SCHEME,
  refusal,
  targetFor,
};
