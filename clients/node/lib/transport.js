'use strict';
// The gRPC plumbing of run(): one Play stream, reconnects, nothing else.
//
// Server messages are handled one at a time, in the order they arrive, even when the bot is
// async: each is chained behind the previous one (one chain for the whole run, so a bot call
// still in flight when a connection drops finishes before the next connection's messages).
//
// Transport failures (the server gone, a reset connection, a peer that stopped answering the
// keepalive pings) reconnect with exponential backoff and say hello again with the same token;
// the server gives the seats back.  The budget (30 s by default) counts from the first failure
// since the last connection that proved itself, so a bot that reconnected once has the whole
// budget again next time.  A connection proves itself by staying up backoff.stableMs (10 s)
// after its Welcome; a Welcome alone does not reset the backoff, or a server (or a proxy) that
// welcomes and drops at once would keep the bot reconnecting at the first delay forever.
// Time and not "served a request": a healthy server may pair the bot only minutes later, and a
// request shows no more than a Welcome that the server will not drop the stream at once.
//
// Backpressure: at most MAX_QUEUED messages (8; the option maxQueued) wait for their turn in
// the chain.  Past that the call is paused (grpc-js then stops reading the HTTP/2 stream, whose
// flow control holds the server back) and resumed once half of them are handled.  Pausing, not
// a cap that drops the connection: a bot that thinks for a minute (an engine process, a network
// service) while the server keeps sending events is legitimate, and dropping it would cost it
// its seats; held back, a server can send no faster than the bot reads, as with the Python SDK
// (grpcio reads a message only when asked).  What is held is then bounded: the queued messages,
// grpc-js's read buffer (16 messages) and one HTTP/2 window, each message at most 4 MB (grpc's
// default receive limit), where an unbounded queue grew to gigabytes under a flood.  They wait
// as the bytes that came, and are decoded only in their turn: a decoded message weighs up to
// 113 times its bytes in JavaScript objects (lib/kept.js), and waiting decoded, requests of
// 1 MB made a bot that thought hold 576 MB (legal lists) to 1.3 GB (observations of empty deal
// results); as bytes, ~100 MB (test/hostile_server.test.js).
//
// A connection that gets no Welcome within WELCOME_TIMEOUT_MS (30 s; the option
// welcomeTimeoutMs) is dropped and counts as a failed one (reconnect with backoff, within the
// budget): a server that accepts the stream and never speaks, or a TCP port that accepts and
// never answers (grpc-js starts its keepalive pings only once HTTP/2 is up, so nothing else
// would notice), would otherwise keep the bot waiting forever without a word.  A real server
// sends the Welcome at once, before any pairing, so 30 s is generous.
//
// TLS (grpcs:// addresses, a CA file, a client certificate: lib/tls.js) only changes the
// channel's credentials; a first connection's TLS handshake that cannot succeed is not retried.

const grpc = require('@grpc/grpc-js');
const { createLogger, printable } = require('./log');
const { loadProto } = require('./proto');
const { ConnectionLost, Session } = require('./session');
const { refusal, targetFor } = require('./tls');

const ADDRESS_VARIABLE = 'BISCA_ADDRESS';
const TOKEN_VARIABLE = 'BISCA_TOKEN';

/**
 * The channel options of every bot connection, as in the Python SDK (the server must accept
 * pings every 10 s).  grpc-js uses keepalive_timeout_ms as the ping timeout (what grpc core
 * calls grpc.http2.ping_timeout_ms) and keeps pinging without data on its own; it ignores the
 * core-only option names, so they are not set here.
 */
const CHANNEL_OPTIONS = Object.freeze({
  // Notice a dead or frozen server: ping every 10 s, give up on a ping after 5 s.
  'grpc.keepalive_time_ms': 10_000,
  'grpc.keepalive_timeout_ms': 5_000,
  // A bot waiting for its turn sends no data for a long time: keep pinging anyway.
  'grpc.keepalive_permit_without_calls': 1,
  // Several bots in one process each get their own connection, not one shared subchannel.
  'grpc.use_local_subchannel_pool': 1,
});

/** How many server messages may wait for their turn before the stream is paused (maxQueued). */
const MAX_QUEUED = 8;

/** How long a connection may go without the server's Welcome (the option welcomeTimeoutMs). */
const WELCOME_TIMEOUT_MS = 30_000;

/**
 * Reconnect delays: initialMs, doubling up to maximumMs, for at most budgetMs in all, counted
 * from the first failure since a connection stayed up stableMs after its Welcome.
 */
const DEFAULT_BACKOFF = Object.freeze({
  initialMs: 100,
  maximumMs: 2_000,
  budgetMs: 30_000,
  stableMs: 10_000,
});

// Transport-level failures, worth a reconnect.  Anything else (UNIMPLEMENTED, INVALID_ARGUMENT,
// UNAUTHENTICATED, ...) means this server will not talk to this bot; retrying cannot help.
const RETRYABLE = new Set([
  grpc.status.UNAVAILABLE,
  grpc.status.CANCELLED,
  grpc.status.INTERNAL,
  grpc.status.UNKNOWN,
  grpc.status.ABORTED,
  grpc.status.DEADLINE_EXCEEDED,
]);

class TransportFailure extends Error {
  constructor(code, details) {
    // The status details are the server's text: cleaned in the message, raw in .details.
    super(`${grpc.status[code] || code}: ${printable(details)}`);
    this.code = code;
    this.details = details;
  }
}

/** An explicit value, else the environment variable, else an Error naming both. */
function resolve(value, variable, what) {
  if (value) return value;
  if (process.env[variable]) return process.env[variable];
  throw new Error(`no server ${what} given: pass ${what} or set the ${variable} variable`);
}

function* delays(backoff) {
  let delay = backoff.initialMs;
  for (;;) {
    yield delay;
    delay = Math.min(delay * 2, backoff.maximumMs);
  }
}

const sleep = (ms) => new Promise((done) => setTimeout(done, ms));

/**
 * Connect `bot` to a Bisca server and play until the server ends the stream.
 *
 * bot(request) returns (or resolves to) one of request.legalActions.  Options: address
 * ('host:port', 'grpcs://host:port' for TLS, or 'unix:/path'; default $BISCA_ADDRESS), token
 * (default $BISCA_TOKEN), name, version ('0'), games (['belote']), the hooks
 * onMatchStart(started), onEvent(matchId, seat, event), onMatchEnd(ended), onRejected(rejected,
 * action), reconnect (true), backoff ({initialMs, maximumMs, budgetMs, stableMs}),
 * welcomeTimeoutMs (WELCOME_TIMEOUT_MS: a connection with no Welcome by then fails), maxQueued
 * (MAX_QUEUED: how many server messages may wait for the bot before reading pauses),
 * channelOptions (added to CHANNEL_OPTIONS), logger, protoDir, and for TLS ca (the PEM file of
 * the CA that signed the server's certificate; default $BISCA_CA; giving it, or a grpcs:// address, connects with TLS),
 * clientCert and clientKey (the bot's certificate and key for mutual TLS; default
 * $BISCA_CLIENT_CERT, $BISCA_CLIENT_KEY).
 *
 * keepGoing (false): a callback (the bot or a hook) that throws ends run() with BotCrashed,
 * after logging the error and its stack, and so does a bot that answers something that is not
 * an action of the game (undefined, null, a string, ...); true logs either on every use and goes
 * on, sending the first legal action not yet rejected in place of the bot's answer.
 *
 * Resolves when the server closes the stream cleanly (how a local match tells its bots to
 * exit).  Rejects with BotCrashed when a callback throws or answers no action (see keepGoing),
 * with BotRejected on a fatal error from the server (unknown token, unsupported protocol, ...)
 * and with ConnectionLost when the connection fails and reconnect
 * is off or the backoff budget runs out, or at once when the first connection's TLS handshake
 * fails (a server certificate that cannot be verified, a client certificate refused).  A TLS
 * file that is missing or not PEM rejects with an Error naming it.
 */
async function run(bot, options = {}) {
  const address = resolve(options.address, ADDRESS_VARIABLE, 'address');
  const token = resolve(options.token, TOKEN_VARIABLE, 'token');
  const logger = options.logger || createLogger();
  const session = new Session(bot, { ...options, token, logger }); // checks games and name
  const target = targetFor(address, options, logger);
  const contract = loadProto(options.protoDir);
  const channelOptions = { ...CHANNEL_OPTIONS, ...(options.channelOptions || {}) };
  const backoff = { ...DEFAULT_BACKOFF, ...(options.backoff || {}) };
  const reconnect = options.reconnect !== false;
  const limits = {
    welcomeTimeoutMs: options.welcomeTimeoutMs || WELCOME_TIMEOUT_MS,
    maxQueued: Math.max(1, options.maxQueued || MAX_QUEUED),
  };
  const chain = { tail: Promise.resolve() };
  const connection = { welcomedAt: null }; // when this connection's Welcome came
  let dropped = 0; // connections welcomed, then lost before they proved themselves
  let lostAt = null;
  let everWelcomed = false;
  let pending = delays(backoff);
  for (;;) {
    try {
      connection.welcomedAt = null;
      await playOnce(contract, target, channelOptions, session, chain, logger, limits, connection);
      return;
    } catch (error) {
      if (!(error instanceof TransportFailure)) throw error;
      everWelcomed = everWelcomed || session.welcomed;
      const refused = refusal(target, printable(error.details), { everWelcomed });
      if (refused !== null) {
        throw new ConnectionLost(refused, { code: error.code, details: error.details });
      }
      const upFor = connection.welcomedAt === null ? null : Date.now() - connection.welcomedAt;
      if (lostAt === null || (upFor !== null && upFor >= backoff.stableMs)) {
        lostAt = Date.now();
        pending = delays(backoff);
        dropped = 0;
      }
      if (upFor !== null && upFor < backoff.stableMs) dropped += 1;
      const failure = { code: error.code, details: error.details };
      if (!reconnect || !RETRYABLE.has(error.code)) {
        throw new ConnectionLost(`connection to ${address} failed: ${error.message}`, failure);
      }
      const delay = pending.next().value;
      if (Date.now() - lostAt + delay > backoff.budgetMs) {
        const welcomes =
          dropped === 0
            ? ''
            : ` (the server welcomed the bot ${dropped} time(s) but dropped the connection ` +
              `within ${backoff.stableMs / 1000} s each time)`;
        throw new ConnectionLost(
          `could not reconnect to ${address} within ${backoff.budgetMs / 1000} s${welcomes}: ` +
            error.message,
          failure,
        );
      }
      logger.warn(
        `connection to ${address} failed (${error.message}); reconnecting in ${delay} ms`,
      );
      await sleep(delay);
    }
  }
}

/** The first byte of a ServerMessage that is a Welcome: its tag (a length-delimited field). */
function welcomeTag(definition) {
  const field = definition['bisca.v1.ServerMessage'].type.field.find(
    ({ name }) => name === 'welcome',
  );
  return (field.number << 3) | 2;
}

/** One connection: hello, then every server message until the stream ends. */
function playOnce(contract, target, channelOptions, session, chain, logger, limits, connection) {
  const { Arena, definition, decodeServerMessage } = contract;
  const welcomeFirst = welcomeTag(definition);
  const address = target.address;
  return new Promise((resolvePlay, rejectPlay) => {
    const client = new Arena(target.dial, target.credentials, channelOptions);
    // Arena's own Play, but each message kept as its bytes until its turn (see Backpressure)
    // and then decoded with MatchEnded's seed exact too (lib/proto.js).
    const play = definition['bisca.v1.Arena'].Play;
    const call = client.makeBidiStreamRequest(play.path, play.requestSerialize, (bytes) => bytes);
    let finished = false;
    const seconds = limits.welcomeTimeoutMs / 1000;
    const welcomeTimer = setTimeout(() => {
      logger.warn(
        `no Welcome from ${address} within ${seconds} s (a server that never speaks, or not a ` +
          'Bisca server); dropping this connection',
      );
      finish(
        new TransportFailure(
          grpc.status.DEADLINE_EXCEEDED,
          `no Welcome from the server within ${seconds} s`,
        ),
      );
    }, limits.welcomeTimeoutMs);

    const finish = (error) => {
      if (finished) return;
      finished = true;
      clearTimeout(welcomeTimer);
      if (error instanceof TransportFailure) {
        call.cancel(); // already over, unless no Welcome came in time
        client.close();
      } else {
        call.end();
        if (error) call.cancel();
        client.close();
      }
      if (error) {
        rejectPlay(error);
      } else {
        if (session.welcomed) logger.info('the server closed the stream; done');
        else logger.warn(`the server closed the stream to ${address} without a welcome`);
        resolvePlay();
      }
    };
    const send = (message) => {
      if (!finished) call.write(message);
    };

    let queued = 0; // messages received and not yet handled
    let paused = false;
    let closedOk = false;
    const welcomed = () => {
      clearTimeout(welcomeTimer);
      connection.welcomedAt = connection.welcomedAt ?? Date.now();
    };
    call.on('data', (bytes) => {
      // The Welcome is seen as it comes, not in its turn (a bot call of the connection before
      // may still be under way): a ServerMessage is its one member, whose tag comes first.
      if (connection.welcomedAt === null && bytes[0] === welcomeFirst) welcomed();
      queued += 1;
      if (!paused && queued >= limits.maxQueued) {
        paused = true;
        call.pause();
        logger.debug(`${queued} server messages wait for the bot; reading paused`);
      }
      chain.tail = chain.tail.then(async () => {
        try {
          if (finished) return; // a message of a connection that has failed since
          let message;
          try {
            message = decodeServerMessage(bytes);
            bytes = null; // (the chain holds this step until the bot has answered)
          } catch (error) {
            // As grpc-js fails a call whose message it cannot parse (INTERNAL, retried).
            finish(
              new TransportFailure(
                grpc.status.INTERNAL,
                `a server message could not be decoded: ${error.message}`,
              ),
            );
            return;
          }
          if (message.kind === 'welcome') welcomed();
          for (const reply of await session.handle(message)) send(reply);
        } catch (error) {
          finish(error); // BotRejected (a fatal error from the server), BotCrashed
        } finally {
          queued -= 1;
          if (paused && queued <= limits.maxQueued / 2) {
            paused = false;
            call.resume();
          }
        }
      });
    });
    // A clean end: once every message has been read ('end'; grpc-js reports the status at
    // once, even while messages still wait in a paused stream) and handled (the chain).
    call.on('status', (status) => {
      if (status.code === grpc.status.OK) closedOk = true;
    });
    call.on('end', () => {
      if (closedOk) chain.tail = chain.tail.then(() => finish());
    });
    call.on('error', (error) => {
      // The stream is gone: drop what is still queued for it and reconnect now.
      finish(new TransportFailure(error.code, error.details || error.message));
    });
    send(session.hello());
  });
}

module.exports = {
  ADDRESS_VARIABLE,
  CHANNEL_OPTIONS,
  DEFAULT_BACKOFF,
  MAX_QUEUED,
  RETRYABLE,
  TOKEN_VARIABLE,
  WELCOME_TIMEOUT_MS,
  run,
};
