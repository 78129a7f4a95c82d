'use strict';
// The SDK's logging: lines on stderr (never stdout), from the level given or $BISCA_LOG_LEVEL
// (debug, info, warn, error; default info).  Pass your own {debug, info, warn, error} object as
// the `logger` option of run() to send them elsewhere.

const LEVELS = Object.freeze({ debug: 10, info: 20, warn: 30, error: 40, silent: 100 });

// The rule of the server's bisca/server/text.py, so that both ends clean text the same way.  ESC
// sequences first (so their parameters go with them): CSI `ESC [ ... final`, the string commands
// OSC/DCS/SOS/PM/APC `ESC ] ... (BEL | ESC \\)` and their 8-bit C1 forms, then any other
// two-character `ESC x`; then every remaining C0 control but newline and tab, DEL and C1 control.
const ESCAPES = new RegExp(
  [
    '(?:\\x1b\\[|\\x9b)[0-?]*[ -/]*[@-~]?',
    '(?:\\x1b[\\]PX^_]|[\\x90\\x98\\x9d\\x9e\\x9f])[^\\x07\\x1b\\x9c]*(?:\\x07|\\x1b\\\\|\\x9c)?',
    '\\x1b[ -/]*[0-~]?',
    '[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f]',
  ].join('|'),
  'g',
);

/**
 * `text` (any value, as String(value)) without control characters (C0 but newline and tab, DEL,
 * C1) and without the escape sequences they start, so that showing it cannot drive the terminal
 * that shows it.  Every server-supplied string (ids, names, messages, reasons, gRPC status
 * details) goes through it before it enters a log line or an error's message; the hooks and the
 * errors' own fields (code, detail, details) keep the raw values.
 */
function printable(text) {
  return String(text).replace(ESCAPES, '');
}

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
            // printable() again: the sources clean what the server sent, and a line that
            // would still carry an escape sequence is cleaned here before it reaches a terminal.
            stream.write(
              `${new Date().toISOString()} ${name.toUpperCase()} bisca.client: ${printable(text)}\n`,
            );
  }
  return logger;
}

/** A value as JSON for a log line, or as a string when JSON cannot hold it (a BigInt, a cycle). */
function safeJson(value) {
  try {
    return JSON.stringify(value);
  } catch {
    return String(value);
  }
}

/**
 * The first `limit` characters of `text` (and '...' when it is cut), as a string of its own: V8
 * makes a slice of a long string a view that keeps the whole of it alive, so a short text kept
 * from a server's megabytes would keep the megabytes.
 */
function shortText(text, limit) {
  const cut = text.length > limit;
  const kept = cut ? text.slice(0, limit) : text;
  // Through a Buffer: a new string, copied; UTF-16 keeps every code unit as it was.
  return Buffer.from(kept, 'utf16le').toString('utf16le') + (cut ? '...' : '');
}

module.exports = { LEVELS, createLogger, printable, safeJson, shortText };
