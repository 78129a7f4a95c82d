'use strict';
// Bisca's bot SDK for Node.js: write a bot as one function from an action request to one of its
// legal actions, and run() does the connection, the hello, answering, retries after a
// rejection, reconnects and logging.  See README.md beside this file.
//
//   const { run } = require('bisca-client');   // or require('./clients/node')
//   run((request) => request.legalActions[0], { name: 'first', games: ['belote', 'bestia'] });

// Run before `npm ci`, a bot would die in a require() deep in lib/, the cause cut off by the
// stack Node prints after it (and an arena shows only the last lines of a bot's stderr): say it
// in one line instead, naming the module and what to run.
for (const dependency of Object.keys(require('./package.json').dependencies)) {
  try {
    require.resolve(dependency);
  } catch (error) {
    if (error.code !== 'MODULE_NOT_FOUND') throw error;
    process.stderr.write(
      `bisca: cannot find module '${dependency}': run \`npm ci\` in ${__dirname} first\n`,
    );
    process.exit(1);
  }
}

const { createLogger, LEVELS, printable } = require('./lib/log');
const { LOADER_OPTIONS, defaultProtoDir, loadProto } = require('./lib/proto');
const rules = require('./lib/rules');
const {
  BotCrashed,
  BotRejected,
  ConnectionLost,
  GAMES,
  MAX_KEPT_BYTES,
  MAX_MATCHES,
  PROTOCOL_VERSION,
  Session,
  dealCommitment,
} = require('./lib/session');
const { CA_VARIABLE, CLIENT_CERT_VARIABLE, CLIENT_KEY_VARIABLE } = require('./lib/tls');
const {
  CHANNEL_OPTIONS,
  DEFAULT_BACKOFF,
  MAX_QUEUED,
  WELCOME_TIMEOUT_MS,
  run,
} = require('./lib/transport');

module.exports = {
  BotCrashed,
  BotRejected,
  CA_VARIABLE,
  CHANNEL_OPTIONS,
  CLIENT_CERT_VARIABLE,
  CLIENT_KEY_VARIABLE,
  ConnectionLost,
  DEFAULT_BACKOFF,
  GAMES,
  LEVELS,
  LOADER_OPTIONS,
  MAX_KEPT_BYTES,
  MAX_MATCHES,
  MAX_QUEUED,
  PROTOCOL_VERSION,
  Session,
  WELCOME_TIMEOUT_MS,
  createLogger,
  defaultProtoDir,
  dealCommitment,
  loadProto,
  printable,
  rules,
  run,
};
