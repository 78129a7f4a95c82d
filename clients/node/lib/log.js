'use strict';
// The SDK's logging: lines on stderr (never stdout), from the level given or $BISCA_LOG_LEVEL
// (debug, info, warn, error; default info).  Pass your own {debug, info, warn, error} object as
// the `logger` option of run() to send them elsewhere.

const LEVELS = Object.freeze({ debug: 10, info: 20, warn: 30, error: 40, silent: 100 });

function createLogger(level = process.env.BISCA_LOG_LEVEL || 'info', stream = process.stderr) {
  const threshold = LEVELS[String(level).toLowerCase()];
  if (threshold === undefined) {
    throw new Error(
      `unknown log level ${JSON.stringify(level)}; known: ${Object.keys(LEVELS).join(', ')}`,
    );
  }
  const logger = {};
  for (const name of ['debug', 'info', 'warn', 'error']) {
    logger[name] =
      LEVELS[name] < threshold
        ? () => {}
        : (text) =>
            stream.write(
              `${new Date().toISOString()} ${name.toUpperCase()} bisca.client: ${text}\n`,
            );
  }
  return logger;
}

module.exports = { LEVELS, createLogger };
