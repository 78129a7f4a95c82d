'use strict';
// Bisca's bot SDK for Node.js: write a bot as one function from an action request to one of its
// legal actions, and run() does the connection, the hello, answering, retries after a
// rejection, reconnects and logging.  See README.md beside this file.
//
//   const { run } = require('bisca-client');   // or require('./clients/node')
//   run((request) => request.legalActions[0], { name: 'first', games: ['belote', 'bestia'] });

const { createLogger, LEVELS } = require('./lib/log');
const { LOADER_OPTIONS, defaultProtoDir, loadProto } = require('./lib/proto');
const {
  BotRejected,
  ConnectionLost,
  GAMES,
  PROTOCOL_VERSION,
  Session,
  dealCommitment,
} = require('./lib/session');
const { CA_VARIABLE, CLIENT_CERT_VARIABLE, CLIENT_KEY_VARIABLE } = require('./lib/tls');
const { CHANNEL_OPTIONS, DEFAULT_BACKOFF, run } = require('./lib/transport');

module.exports = {
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
  PROTOCOL_VERSION,
  Session,
  createLogger,
  defaultProtoDir,
  dealCommitment,
  loadProto,
  run,
};
