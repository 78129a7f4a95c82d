'use strict';
// The protocol logic of one bot connection, with no network in it (the Node twin of the Python
// SDK's bisca.client Session).
//
// session.hello() is the first message of a connection; session.handle(serverMessage) resolves
// to the bot messages to send back, calling the bot and its hooks on the way.  Tests drive it
// with plain objects; lib/transport.js is a thin loop that only moves messages.
//
// Rejected answers: when the referee rejects an answer with attempts left, the session asks the
// bot again (same request, attempt + 1, the rejected actions in request.rejected).  If the bot
// gives an action already rejected for this request, the first legal action not yet rejected
// is sent instead, so a deterministic bot cannot burn every attempt on one mistake.  The server
// also re-sends the request with the higher attempt; that copy is recognised and not answered
// twice.  A server cannot make a rejection cost more than the bot's answer: the legal actions
// are deduplicated once per request (at its first fallback or rejection), the fallback walks
// them once in all, and once every distinct legal action was rejected, or more rejections came
// than there are distinct legal actions, or one said no attempt is left, the request is settled:
// further rejections and re-sent copies of it are counted and ignored, neither the bot, its
// onRejected hook nor the legal list is touched again.  Repeated warnings (rejections of one
// request, rejections of no open request, ignored ones) are logged the 1st, 2nd, 3rd, 10th,
// 100th, ... time, at debug level in between, so a storm of 20-byte rejections cannot flood the
// log either.
//
// A bot whose callback throws (or rejects its promise), the bot itself or a hook, has a bug:
// the error and its stack are logged and handle() rejects with BotCrashed, which ends run()
// and so the bot (a bug hidden behind a legal move would pass every check and lose quietly).
// With the option keepGoing, the error and its stack are logged on every use, with a line
// saying the session goes on, and the first legal action not yet rejected is sent (a hook's
// error is only logged).  An answer that is not an action of the game (undefined from a bot
// that forgot a `return`, null, a string, ...) is the same kind of bug under the same rule: it
// is logged with the phrase NOT_AN_ACTION (the one `bisca check-bot` looks for, in all three
// SDKs), then ends the bot, or with keepGoing has the first legal action not yet rejected sent
// in its place.  A well-formed action that is not in the legal list is sent as it is: the
// referee decides.
//
// Checking the deal: MatchStarted carries the server's commitment to the deal, SHA-256(salt ||
// seed || match id), and MatchEnded reveals the salt and the seed (of a failed match too).  The
// session keeps each seat's commitment from the start (across reconnects: a resumed start must
// carry the same one) and recomputes it at the end.  The hash alone proves only that the seed
// was fixed before the first card, not that the cards came from it, so the session also keeps
// what the seat was shown of the first deal (lib/deal.js ShownStart: a digest of each of the
// first events, by index, as first sent; Bestia's first look at its cards and the hand of its
// first request after it; what the check reads of Belote's first request) and deals the
// match's start again from the revealed seed (lib/deal.js, a port of the engine's): it must be
// what the server showed the seat.  A commitment first seen on a resumed start is not checked
// (null: what the seat was shown before cannot be known), and one whose (match, seat) had
// requests or events before its start fails.
// onMatchEnd gets the MatchEnded with `deal_verified` (true when both hold, false, or null when
// there was no commitment), and a failure is logged as an error saying what differs.
//
// Requests the connection was not told of: the server sends a MatchStarted (a resumed one after
// a reconnect) before any request of a match, so a request for a (match, seat) this connection
// has no readable start for is the server's mistake, or a lie.  It is logged, once per (match,
// seat) and connection, and still answered: the referee is the authority on which seats are the
// bot's, answering gives a hostile server nothing it could not get by sending a start first, and
// not answering would lose an honest match on time wherever the start went missing (a start
// this SDK could not read, one forgotten past MAX_MATCHES, a server that re-sends the request
// first).  A bot that keeps state per match from onMatchStart should expect a request it has no
// state for; the warning says why.  A request whose observation is another seat's is refused
// (logged, the bot not asked): answering for the wrong seat cannot be right.
//
// Memory: what the session keeps per (match, seat), the open request, the deal commitment and
// whether the match was started, goes when the match ends.  A server that keeps starting
// matches and never ends them would grow it without limit (the hostile-server review measured
// 12 MB/s), and one that sends enormous messages for them would grow it by their size, so each
// table holds at most MAX_MATCHES pairs and about MAX_KEPT_BYTES (16 MiB; lib/kept.js), the
// least recently active evicted past either with one warning (the newest always stays).  A
// decoded request weighs up to 113 times its bytes on the wire (lib/kept.js measures it), so
// an entry's cost is estimated from its content: footprint() of the message, the key (a match
// id may be of any length), an allowance per legal action.  The open request
// keeps the ActionRequest it came in (request.message, for the bot asked again after a
// rejection) without its events: they went to onEvent and to the bot's first try already, and
// they are the part that grows with the match.  The deal commitment keeps, of the match's
// first KEPT_EVENTS (32) events (and of the seat's first Bestia look), a digest and a short
// text of its own each (a slice of the event's text would keep all of it), or for one over
// MAX_KEPT_EVENT_BYTES (16 KiB on the wire) only its size, which fails the check where it
// counts; of the first Belote request, its hand, turned card and moves (16 KiB at most).  The reason a start could not be read is
// kept as a short text too (it may quote a server's string).
//
// Events: by default (protocol version 2) the referee sends a seat's events inside its next
// ActionRequest or its MatchEnded; with the option liveEvents the Hello asks for each step's
// events at once, in EventBatch messages.  Either way onEvent sees every event, in order,
// before the request or the end that follows it (a message's events go to the hook before the
// bot is asked, or onMatchEnd called).

const crypto = require('node:crypto');
const { ShownStart, dealSettings, seatOutside, startDealtFrom } = require('./deal');
const { Kept, MAX_KEPT_BYTES, MAX_MATCHES, footprint } = require('./kept');
const { loadProto } = require('./proto');
const { createLogger, printable, safeJson, shortText } = require('./log');

/** Game names and their bisca.v1.Game values. */
const GAMES = Object.freeze({ belote: 'GAME_BELOTE', bestia: 'GAME_BESTIA' });
const PROTOCOL_VERSION = 2; // bisca.v1.ProtocolVersion.PROTOCOL_VERSION_CURRENT
// MAX_MATCHES, MAX_KEPT_BYTES (lib/kept.js): how many (match, seat) pairs, and about how many
// bytes, each per-match table of a session holds at most.  A bot plays a handful of matches at
// once on one connection (an arena's pairing gives it one seat per match), so 1,024 pairs and
// 16 MiB are far above any honest load and still small.  The least recently active (started or
// asked) pair is the one forgotten: an abandoned match, not a live one.

// What an entry costs beyond what footprint() finds in it: the table's slot, the record around
// the value, the open request's fields and the deal commitment's.
const ENTRY_BYTES = 512;
// What an open request may come to hold per legal action beyond the decoded message: its slot in
// request.legalActions, and once it is rejected, the action without repeats with its key (the
// encoded action in base64), its key among the rejected ones, its place in request.rejected
// (about 70 bytes measured with 87,000 distinct actions, one rejection).
const LEGAL_BYTES = 160;
/** The server refused the bot (a fatal Error: unknown token, unsupported protocol, ...). */
class BotRejected extends Error {
  constructor(code, message) {
    super(`${printable(code)}: ${printable(message)}`); // the raw text stays in .code, .detail
    this.name = 'BotRejected';
    this.code = code;
    this.detail = message;
  }
}

/**
 * The bot's callback (the bot or a hook) threw, and keepGoing is off: run() rejects with this
 * and the bot ends.  `cause` is what the callback threw; `callback` names it ('bot',
 * 'onMatchStart', ...).
 */
class BotCrashed extends Error {
  /** `answered`: instead of throwing `cause`, the bot answered that, which is no action. */
  constructor(callback, where, cause, answered = undefined) {
    const detail = cause instanceof Error ? cause.message : String(cause);
    const which = callback === 'bot' ? 'callback' : `${callback} hook`;
    super(
      answered === undefined
        ? `the bot's ${which} threw${where}: ${detail}`
        : `the bot's ${which} answered ${answered}${where}, ${NOT_AN_ACTION}`,
      answered === undefined ? { cause } : {},
    );
    this.name = 'BotCrashed';
    this.callback = callback;
  }
}

/** What a callback threw, with its stack when it has one. */
function described(error) {
  return (error && error.stack) || String(error);
}

/** The connection failed and could not be re-established. */
class ConnectionLost extends Error {
  constructor(message, { code, details } = {}) {
    super(message);
    this.name = 'ConnectionLost';
    this.code = code;
    this.details = details;
  }
}

const UINT64_LIMIT = 2n ** 64n;

// The phrase in the line about a bot's answer that is not an action of the game, word for word
// the Python and C++ SDKs' too: `bisca check-bot` finds this bug by it in the bot's stderr
// (server/bisca/server/conformance/_crashes.py), as it finds a stack, since the fallback sent
// with keepGoing passes every other check.
const NOT_AN_ACTION = 'which is not an action of the game';

// What _choose returns when nothing is left to send (every legal action was rejected).  Not
// null: a bot may return null itself, a bug to report, not a reason to stay silent.
const SPENT = Symbol('spent');

/**
 * A seed as a BigInt, or null when it is not known exactly: a decimal string, a BigInt, a
 * Long-like object (its toString()), or a Number no larger than 2^53.
 */
function exactSeed(seed) {
  let value = null;
  if (typeof seed === 'bigint') value = seed;
  else if (typeof seed === 'number') value = Number.isSafeInteger(seed) ? BigInt(seed) : null;
  else if (seed !== null && seed !== undefined && /^\d+$/.test(String(seed))) {
    value = BigInt(String(seed));
  }
  return value === null || value < 0n || value >= UINT64_LIMIT ? null : value;
}

/** A seed as 8 bytes big-endian, or null when it is not known exactly (see exactSeed). */
function seedBytes(seed) {
  const value = exactSeed(seed);
  if (value === null) return null;
  const bytes = Buffer.alloc(8);
  bytes.writeBigUInt64BE(value);
  return bytes;
}

/**
 * The deal commitment of a match: SHA-256(salt || seed as 8 bytes big-endian || match id in
 * UTF-8), as a Buffer (what MatchStarted.deal_commitment holds).  `seed` as in seedBytes();
 * throws a RangeError for a seed not known exactly.
 */
function dealCommitment(salt, seed, matchId) {
  const seedPart = seedBytes(seed);
  if (seedPart === null) {
    throw new RangeError(`seed ${String(seed)} is not an exact 64-bit unsigned integer`);
  }
  return crypto
    .createHash('sha256')
    .update(Buffer.from(salt))
    .update(seedPart)
    .update(Buffer.from(matchId, 'utf8'))
    .digest();
}

function gameValues(games) {
  const list = [...games];
  if (list.length === 0) throw new Error('a bot must play at least one game');
  return list.map((game) => {
    if (!Object.hasOwn(GAMES, game)) {
      throw new Error(
        `unknown game ${JSON.stringify(game)}; known: ${Object.keys(GAMES).join(', ')}`,
      );
    }
    return GAMES[game];
  });
}

class Session {
  /**
   * @param {(request) => object | Promise<object>} bot  returns one of request.legalActions
   * @param {object} options  token, name, version ('0'), games (['belote']), the hooks
   *   onMatchStart(started), onEvent(matchId, seat, event), onMatchEnd(ended),
   *   onRejected(rejected, action), liveEvents (false: events come inside the next request or
   *   end; true: as they happen), keepGoing (false: a callback that throws ends the bot with
   *   BotCrashed; true: it is logged, every time, and a legal action is sent instead), a logger
   *   ({debug, info, warn, error}) and protoDir.
   */
  constructor(bot, options = {}) {
    if (typeof bot !== 'function') throw new TypeError('the bot must be a function');
    if (!options.name) throw new Error('a bot needs a name');
    this.bot = bot;
    this.token = options.token || '';
    this.name = options.name;
    this.version = options.version || '0';
    this.games = gameValues(options.games || ['belote']);
    this.liveEvents = Boolean(options.liveEvents);
    this.keepGoing = Boolean(options.keepGoing);
    this.hooks = {
      onMatchStart: options.onMatchStart,
      onEvent: options.onEvent,
      onMatchEnd: options.onMatchEnd,
      onRejected: options.onRejected,
    };
    this.log = options.logger || createLogger();
    const { definition } = loadProto(options.protoDir);
    this.gameAction = definition['bisca.v1.GameAction'];
    this.gameEvent = definition['bisca.v1.GameEvent'];
    this.dealTypes = {
      gameEvent: this.gameEvent,
      observation: definition['bisca.v1.belote.Observation'],
      bestiaObservation: definition['bisca.v1.bestia.Observation'],
    };
    // The per-match tables (lib/kept.js), by `${match_id}/${seat}`, each within MAX_MATCHES
    // pairs and MAX_KEPT_BYTES (see Memory above).
    const forgotten = (what, key, reason) => this._forgotten(what, key, reason);
    this.open = new Kept('open requests', forgotten); // the request being answered
    // The deal commitment of the match's first start and what the end checks with it
    // (_rememberCommitment).  Kept across reconnects (unlike the open requests): the end checks
    // against it.
    this.commitments = new Kept('deal commitments', forgotten);
    // true (this connection had its start) or false (it did not; a request for it was logged
    // once).  Cleared by hello(): a reconnect's resumed starts refill it.
    this.started = new Kept('starts', forgotten);
    // The (match, seat) pairs sent requests or events before their start (this connection): a
    // deal committed to later cannot be checked for them.  Cleared by hello().
    this.early = new Kept('messages before their start', forgotten);
    this.mismatches = 0; // requests whose observation is another seat's (warnings rate-limited)
    this.evictions = 0; // (match, seat) pairs forgotten past MAX_MATCHES
    this.outgrown = 0; // (match, seat) pairs forgotten past MAX_KEPT_BYTES
    this.strayRejections = 0; // rejections of no open request (their warnings are rate-limited)
    /** Set by the server's Welcome. */
    this.welcomed = false;
    this.registeredName = '';
    this.connectionId = '';
  }

  /** The first message of a (re)connection; forgets the previous connection's requests. */
  hello() {
    this.welcomed = false;
    this.open.clear();
    this.started.clear();
    this.early.clear();
    return {
      hello: {
        token: this.token,
        bot_name: this.name,
        bot_version: this.version,
        protocol_version: PROTOCOL_VERSION,
        games: this.games,
        live_events: this.liveEvents,
      },
    };
  }

  /** The replies to one server message (throws BotRejected on a fatal error). */
  async handle(message) {
    switch (message.kind) {
      case 'welcome':
        return this._welcome(message.welcome);
      case 'match_started':
        return this._matchStarted(message.match_started);
      case 'events':
        return this._events(message.events);
      case 'action_request':
        return this._actionRequest(message.action_request);
      case 'action_rejected':
        return this._actionRejected(message.action_rejected);
      case 'match_ended':
        return this._matchEnded(message.match_ended);
      case 'error':
        return this._error(message.error);
      default:
        this.log.warn(
          message.kind
            ? `ignoring a server message of kind ${printable(message.kind)}`
            : 'ignoring an empty message from the server',
        );
        return [];
    }
  }

  // ---- one handler per message kind ------------------------------------------------------

  _welcome(welcome) {
    this.welcomed = true;
    this.registeredName = welcome.bot_name;
    this.connectionId = welcome.connection_id;
    this.log.info(
      `welcomed as ${printable(JSON.stringify(welcome.bot_name))} by server ` +
        `${printable(welcome.server_version || '?')} (connection ${printable(welcome.connection_id)})`,
    );
    return [];
  }

  async _matchStarted(started) {
    this._rememberCommitment(started);
    const problem = startProblem(started);
    if (problem !== null) {
      // As the Python SDK: a start the bot could not make sense of is not given to its hook.
      this.log.error(`cannot read the start of match ${printable(started.match_id)}: ${problem}`);
      return [];
    }
    const key = `${started.match_id}/${started.seat}`;
    this.started.put(key, true, keyBytes(key));
    const bots = started.seats.map((seat) => printable(seat.bot_name)).join(', ');
    this.log.info(
      `match ${printable(started.match_id)} ${started.resumed ? 'resumed' : 'started'}: ` +
        `${printable(started.game)}, seat ${printable(started.seat)}, bots ${bots}`,
    );
    await this._hook('onMatchStart', started);
    return [];
  }

  async _events(batch) {
    await this._deliver(batch.match_id, batch.seat, batch.events);
    return [];
  }

  /**
   * Hand events to onEvent in order (an EventBatch's, or those a request or an end carries),
   * keeping the first ones of a match with a commitment for the check of the deal.
   */
  async _deliver(matchId, seat, events) {
    if (!events) return;
    const key = `${matchId}/${seat}`;
    const commitment = this.commitments.get(key);
    if (commitment !== undefined) {
      for (const event of events) commitment.shown.show(event);
      if (events.length > 0) this.commitments.touch(key, commitment.bytes + commitment.shown.bytes);
    } else if (events.length > 0 && this.started.get(key) !== true) {
      this.early.put(key, true, keyBytes(key));
    }
    if (!this.hooks.onEvent) return;
    for (const event of events) {
      await this._hook('onEvent', matchId, seat, event);
    }
  }

  async _actionRequest(message) {
    await this._deliver(message.match_id, message.seat, message.events);
    const key = `${message.match_id}/${message.seat}`;
    const commitment = this.commitments.get(key);
    if (commitment !== undefined) {
      commitment.shown.ask(message);
      this.commitments.touch(key, commitment.bytes + commitment.shown.bytes); // (most recent)
    } else if (this.started.get(key) !== true) {
      this.early.put(key, true, keyBytes(key));
    }
    const previous = this.open.get(key);
    const same = previous !== undefined && previous.request.requestId === message.request_id;
    if (same && (message.attempt <= previous.request.attempt || previous.settled)) {
      // A settled request's copies too: its legal actions are all rejected already (or no
      // attempt is left), and asking the bot again on every copy is what a storm wants.
      this.log.debug(
        `request ${printable(message.request_id)} attempt ${message.attempt} already ` +
          (previous.settled ? 'left to the referee' : 'answered'),
      );
      return [];
    }
    const where =
      `request ${printable(message.request_id)} of match ${printable(message.match_id)}, ` +
      `seat ${printable(message.seat)}`;
    const started = this.started.get(key);
    if (started === undefined) {
      this.log.warn(
        `${where}: this connection got no MatchStarted for that match and seat (or could not ` +
          "read it), so the bot's onMatchStart did not see it; answering it anyway (not " +
          'logged again for this seat)',
      );
    }
    this.started.put(key, started === true, keyBytes(key));
    const game = message.observation && message.observation.game;
    if (game !== 'belote' && game !== 'bestia') {
      this.log.error(
        `cannot read request ${printable(message.request_id)}: no observation of a known game`,
      );
      return [];
    }
    const seen = message.observation[game];
    if (seen && seen.seat !== undefined && seen.seat !== message.seat) {
      this.mismatches += 1;
      this.log[often(this.mismatches) ? 'error' : 'debug'](
        `${where}: the observation is seat ${printable(seen.seat)}'s; not answered (the bot is ` +
          `not asked: the server mixed up seats)` +
          (this.mismatches > 3 ? ` (mismatch ${this.mismatches})` : ''),
      );
      return [];
    }
    const entry = {
      request: {
        requestId: message.request_id,
        matchId: message.match_id,
        seat: message.seat,
        game,
        observation: message.observation[game],
        legalActions: message.legal_actions.map((action) => action[game]),
        clock: message.clock || { move_ms: 0, bank_ms: 0 },
        attempt: message.attempt || 1,
        rejected: same ? previous.request.rejected : [],
        message,
      },
      sentKey: null, // what was sent since the last rejection, or null
      sent: null,
      rejectedKeys: same ? previous.rejectedKeys : new Set(),
      distinct: null, // the legal actions without repeats, [{action, key}], once needed
      cursor: 0, // distinct[cursor] is the first that may not be rejected yet
      rejections: same ? previous.rejections : 0,
      settled: false, // no answer will follow: further rejections are ignored
      ignored: 0,
    };
    // What it holds: the message without its events (below), the legal actions' allowance.
    const legal = Math.max(message.legal_actions.length, entry.request.rejected.length);
    const bytes =
      keyBytes(key) + LEGAL_BYTES * legal + footprint({ ...message, events: null }, MAX_KEPT_BYTES);
    this.open.put(key, entry, bytes);
    const replies = await this._answer(entry);
    // The bot has had the whole message; a later ask (after a rejection) gets it without the
    // events, which are not kept (see Memory above).  A new object: the bot may hold the old.
    if (message.events && message.events.length > 0) {
      entry.request = { ...entry.request, message: { ...message, events: [] } };
    }
    return replies;
  }

  async _actionRejected(message) {
    const key = `${message.match_id}/${message.seat}`;
    let entry = this.open.get(key);
    if (entry !== undefined && entry.request.requestId !== message.request_id) entry = undefined;
    const where = `request ${printable(message.request_id)} of match ${printable(message.match_id)}`;
    if (entry !== undefined && entry.settled) {
      entry.ignored += 1;
      this.log[often(entry.ignored) ? 'warn' : 'debug'](
        `${where}: ignoring rejection ${entry.ignored} since the request was settled (nothing ` +
          'was sent since); the server keeps rejecting it',
      );
      return [];
    }
    const action = entry ? entry.sent : null;
    const count = entry ? (entry.rejections += 1) : (this.strayRejections += 1);
    this.log[often(count) ? 'warn' : 'debug'](
      `${where}: ${JSON.stringify(action)} rejected (${printable(message.code)}): ` +
        `${printable(message.message)}; ${printable(message.attempts_left)} attempt(s) left` +
        (count > 3 ? ` (${entry ? 'rejection' : 'rejection of no open request'} ${count})` : ''),
    );
    await this._hook('onRejected', message, action);
    if (entry === undefined) return [];
    if (message.attempts_left === 0) {
      entry.settled = true;
      return [];
    }
    const request = entry.request;
    const rejected = entry.sent === null ? request.rejected : [...request.rejected, entry.sent];
    if (entry.sentKey !== null) entry.rejectedKeys.add(entry.sentKey);
    entry.sent = null; // until the next answer: a rejection now would be of nothing we sent
    entry.sentKey = null;
    entry.request = { ...request, attempt: request.attempt + 1, rejected };
    const distinct = this._distinct(entry).length;
    const why =
      this._fallback(entry) === null
        ? 'every legal action was rejected'
        : entry.rejections > distinct
          ? `${entry.rejections} rejections for ${distinct} distinct legal action(s)`
          : null;
    if (why !== null) {
      entry.settled = true;
      this.log.error(
        `${where}: ${why}; leaving it to the referee (further rejections of it are ignored)`,
      );
      return [];
    }
    return this._answer(entry);
  }

  async _matchEnded(ended) {
    await this._deliver(ended.match_id, ended.seat, ended.events);
    for (const key of [...this.open.keys()]) {
      if (key.startsWith(`${ended.match_id}/`)) this.open.delete(key);
    }
    this.started.delete(`${ended.match_id}/${ended.seat}`);
    this.early.delete(`${ended.match_id}/${ended.seat}`);
    const verified = this._checkDeal(ended);
    const mine = ended.seats.find((result) => result.seat === ended.seat);
    this.log.info(
      `match ${printable(ended.match_id)} ${printable(ended.status)}` +
        (ended.reason ? ` (${printable(ended.reason)})` : '') +
        (mine
          ? `: seat ${printable(mine.seat)} scored ${printable(mine.score)}, ` +
            // The protocol's rank counted from 1 (the hook's seats keep it from 0): "rank 3"
            // is a losing Belote team's seat; Bisca's own screens say its place by sides (2nd).
            `rank ${printable(Number(mine.rank) + 1)}`
          : '') +
        { true: '; deal verified', false: '; DEAL NOT VERIFIED', null: '' }[verified],
    );
    await this._hook('onMatchEnd', { ...ended, deal_verified: verified });
    return [];
  }

  // ---- the deal --------------------------------------------------------------------------

  _rememberCommitment(started) {
    const digest = started.deal_commitment;
    if (!digest || digest.length === 0) return;
    const key = `${started.match_id}/${started.seat}`;
    const known = this.commitments.get(key);
    if (known === undefined) {
      // The game and settings the start named: what dealing again from the revealed seed needs
      // (null, with the reason in `unreadable`, when the engine could not deal from them).
      let game = null;
      let settings = null;
      let unreadable = startProblem(started);
      if (unreadable === null) {
        game = gameName(started.game);
        try {
          settings = dealSettings(game, started.settings);
        } catch (error) {
          unreadable = error.message; // (it may quote a server's string of any length)
        }
      }
      const commitment = {
        digest: Buffer.from(digest),
        changed: false,
        game,
        settings,
        unreadable: unreadable === null ? null : shortText(unreadable, 1000),
        // What the seat was shown of the first deal (lib/deal.js ShownStart).
        shown: new ShownStart(this.dealTypes),
        // The first start this session had was a resumed one (it cannot know what the seat
        // was shown before), or requests or events for the seat came before its start.
        resumedFirst: Boolean(started.resumed),
        early: this.early.has(key),
        bytes: 0, // what it costs shown nothing (and shown.bytes what it was shown)
      };
      this.early.delete(key);
      commitment.bytes = keyBytes(key) + footprint({ ...commitment, shown: null });
      this.commitments.put(key, commitment, commitment.bytes);
    } else if (!known.digest.equals(Buffer.from(digest))) {
      this.log.error(
        `match ${printable(started.match_id)}: the resumed start commits to another deal ` +
          `(${shortHex(Buffer.from(digest))}) than the first start did ` +
          `(${shortHex(known.digest)}); the deal cannot be trusted`,
      );
      known.changed = true;
    }
  }

  /**
   * true, false (logged as an error) or null (no commitment, a sealed deal, a seed not known
   * exactly): deal_verified.
   */
  _checkDeal(ended) {
    const key = `${ended.match_id}/${ended.seat}`;
    const commitment = this.commitments.get(key);
    if (commitment === undefined) return null;
    this.commitments.delete(key);
    if (ended.deal_sealed) {
      this.log.info(
        `match ${printable(ended.match_id)}: the deal stays sealed while a match dealt from the same seed ` +
          "is played; check it later from the match's log",
      );
      return null;
    }
    const salt = Buffer.from(ended.deal_salt || []);
    if (salt.length === 0) {
      this.log.error(
        `match ${printable(ended.match_id)}: the server committed to a deal but revealed no salt to check it`,
      );
      return false;
    }
    // The transport decodes the seed exactly (exact_seed); a Number above 2^53 is not exact.
    const given = ended.exact_seed !== undefined ? ended.exact_seed : ended.seed;
    const seed = exactSeed(given);
    if (seed === null) {
      this.log.error(
        `match ${printable(ended.match_id)}: cannot check the deal: the seed ${printable(given)} ` +
          'is not known exactly (decode MatchEnded.seed as a 64-bit integer, e.g. longs: String)',
      );
      return null;
    }
    const revealed = dealCommitment(salt, seed, ended.match_id);
    if (!revealed.equals(commitment.digest)) {
      this.log.error(
        `match ${printable(ended.match_id)}: the deal does not match its commitment: SHA-256(salt ` +
          `${shortHex(salt)} || seed ${String(seed)} || match id) is ` +
          `${revealed.toString('hex')}, the server committed to ` +
          `${shortHex(commitment.digest)} at the start`,
      );
      return false;
    }
    if (commitment.changed) return false;
    if (commitment.early) {
      this.log.error(
        `match ${printable(ended.match_id)}: the server sent seat ${printable(ended.seat)}'s ` +
          'requests or events before its start: the deal cannot be trusted',
      );
      return false;
    }
    if (commitment.settings !== null) {
      const notASeat = seatOutside(commitment.game, commitment.settings, ended.seat);
      if (notASeat !== null) {
        this.log.error(
          `match ${printable(ended.match_id)}: the deal cannot be checked: ${printable(notASeat)}`,
        );
        return false;
      }
    }
    if (commitment.resumedFirst) {
      this.log.info(
        `match ${printable(ended.match_id)}: its start was not seen from the beginning (a ` +
          'resumed start came first): the deal cannot be checked',
      );
      return null;
    }
    if (commitment.shown.nothing) {
      return true; // the seed was committed to, and no card of it was shown to the seat
    }
    if (commitment.settings === null) {
      this.log.error(
        `match ${printable(ended.match_id)}: its start could not be read ` +
          `(${printable(commitment.unreadable)}): the deal cannot be dealt again`,
      );
      return false;
    }
    const why = startDealtFrom(
      commitment.game,
      commitment.settings,
      seed,
      ended.seat,
      commitment.shown,
      this.gameEvent,
    );
    if (why !== null) {
      this.log.error(
        `match ${printable(ended.match_id)}: the cards were not dealt from the seed the server ` +
          `committed to (${seed}): ${why}`,
      );
      return false;
    }
    return true;
  }

  _error(error) {
    if (error.fatal) {
      this.log.error(
        `fatal error from the server: ${printable(error.code)}: ${printable(error.message)}`,
      );
      throw new BotRejected(error.code, error.message);
    }
    const where = [
      error.match_id ? ` (match ${printable(error.match_id)})` : '',
      error.request_id ? ` (request ${printable(error.request_id)})` : '',
    ].join('');
    this.log.warn(
      `error from the server${where}: ${printable(error.code)}: ${printable(error.message)}`,
    );
    return [];
  }

  // ---- bounded per-match state -----------------------------------------------------------

  /**
   * A table (lib/kept.js) forgot the least recently active `key` past MAX_MATCHES (`reason`
   * 'count') or MAX_KEPT_BYTES ('bytes'): one warning per session and reason, then debug lines.
   */
  _forgotten(what, key, reason) {
    const [matchId, seat] = splitKey(key);
    const which = `match ${printable(shortText(matchId, 200))}, seat ${printable(seat)}`;
    const count = reason === 'count' ? (this.evictions += 1) : (this.outgrown += 1);
    const why =
      reason === 'count'
        ? `more than ${MAX_MATCHES} matches are open at once (started or asked, never ended)`
        : `more than ${MAX_KEPT_BYTES / 2 ** 20} MiB of ${what} are kept (does the server send ` +
          'messages that big, or never end its matches?)';
    if (count === 1) {
      this.log.warn(
        `${why}; forgetting the least recently active, ${which}, and more as needed (not ` +
          'logged again): its deal cannot be checked and a rejection of its request is not ' +
          'answered',
      );
    } else {
      this.log.debug(`forgetting ${which} of ${what} (${why})`);
    }
  }

  // ---- answering -------------------------------------------------------------------------

  async _answer(entry) {
    const request = entry.request;
    const encoded = await this._choose(entry);
    if (encoded === SPENT) {
      entry.settled = true;
      this.log.error(
        `request ${printable(request.requestId)}: every legal action was rejected; leaving it to the referee`,
      );
      return [];
    }
    entry.sent = encoded.action;
    entry.sentKey = encoded.key;
    this.log.debug(
      `request ${printable(request.requestId)} attempt ${request.attempt}: ${safeJson(encoded.action)}`,
    );
    return [{ action: { request_id: request.requestId, action: encoded.gameAction } }];
  }

  /**
   * The action to send for the open request, encoded (_encode: the bot's answer, or the
   * fallback in its place), or SPENT when nothing is left to send.
   */
  async _choose(entry) {
    const request = entry.request;
    const where = ` on request ${printable(request.requestId)} (match ${printable(request.matchId)}, seat ${printable(request.seat)})`;
    let action;
    try {
      action = await this.bot(request);
    } catch (error) {
      if (!this.keepGoing) {
        this.log.error(
          `the bot threw${where}; ending the bot (the option keepGoing sends a legal action ` +
            `instead): ${described(error)}`,
        );
        throw new BotCrashed('bot', where, error);
      }
      this.log.error(
        `the bot threw${where}; keepGoing: sending a legal action instead: ${described(error)}`,
      );
      return this._encodedFallback(entry);
    }
    const encoded = this._encode(request.game, action);
    if (encoded === null) {
      // (JSON has no undefined; a huge answer is cut.)
      const shown = action === undefined ? 'undefined' : shortText(String(safeJson(action)), 200);
      const hint =
        action === undefined || action === null
          ? ' (does every path of the bot return an action?)'
          : ' (an action is one of request.legalActions)';
      const line = `request ${printable(request.requestId)} (match ${printable(request.matchId)}, seat ${printable(request.seat)}): the bot answered ${shown}, ${NOT_AN_ACTION}${hint}`;
      if (!this.keepGoing) {
        this.log.error(
          `${line}; ending the bot (the option keepGoing sends a legal action instead)`,
        );
        throw new BotCrashed('bot', where, undefined, shown);
      }
      this.log.error(`${line}; keepGoing: sending a legal action instead`);
      return this._encodedFallback(entry);
    }
    if (entry.rejectedKeys.has(encoded.key)) {
      const fallback = this._fallback(entry);
      this.log[often(entry.rejections) ? 'warn' : 'debug'](
        `request ${printable(request.requestId)}: the bot repeated the rejected ${safeJson(action)}; ` +
          `sending ${fallback === null ? 'nothing' : safeJson(fallback)} instead`,
      );
      return fallback === null ? SPENT : this._encode(request.game, fallback);
    }
    return encoded;
  }

  /** The first legal action not yet rejected, encoded, or SPENT. */
  _encodedFallback(entry) {
    const fallback = this._fallback(entry);
    return fallback === null ? SPENT : this._encode(entry.request.game, fallback);
  }

  /**
   * The first legal action the referee has not rejected for this request (or null).  Rejected
   * keys only ever grow, so the walk resumes where the last one stopped: all the calls of one
   * request look at each distinct legal action once.
   */
  _fallback(entry) {
    const distinct = this._distinct(entry);
    while (entry.cursor < distinct.length && entry.rejectedKeys.has(distinct[entry.cursor].key)) {
      entry.cursor += 1;
    }
    return entry.cursor < distinct.length ? distinct[entry.cursor].action : null;
  }

  /** The request's legal actions without repeats, in order, with their keys: computed once. */
  _distinct(entry) {
    if (entry.distinct === null) {
      const byKey = new Map();
      for (const action of entry.request.legalActions) {
        const encoded = this._encode(entry.request.game, action);
        if (encoded !== null && !byKey.has(encoded.key)) byKey.set(encoded.key, action);
      }
      entry.distinct = [...byKey].map(([key, action]) => ({ action, key }));
    }
    return entry.distinct;
  }

  /**
   * A bot's answer as a bisca.v1.GameAction, or null when it is not an action of the game.
   * Accepts the game's Action ({play_card: {...}}) or a whole GameAction ({belote: {...}}).
   * The key (the encoded bytes) identifies the action whatever the object's key order.
   */
  _encode(game, action) {
    if (action === null || typeof action !== 'object' || Array.isArray(action)) return null;
    const wrapped = Object.hasOwn(action, game) ? action : { [game]: action };
    let bytes;
    try {
      bytes = this.gameAction.serialize(wrapped);
    } catch {
      return null;
    }
    const gameAction = this.gameAction.deserialize(bytes);
    if (gameAction.game !== game || !gameAction[game].action) return null;
    return { gameAction, action: gameAction[game], key: bytes.toString('base64') };
  }

  async _hook(name, ...args) {
    const hook = this.hooks[name];
    if (!hook) return;
    try {
      await hook(...args);
    } catch (error) {
      if (!this.keepGoing) {
        this.log.error(
          `the bot's ${name} hook threw; ending the bot (the option keepGoing goes on ` +
            `instead): ${described(error)}`,
        );
        throw new BotCrashed(name, '', error);
      }
      this.log.error(`the bot's ${name} hook threw; keepGoing: going on: ${described(error)}`);
    }
  }
}

/** Whether the n-th repeat of a warning is logged as one: the 1st, 2nd, 3rd, 10th, 100th, ... */
function often(n) {
  return n <= 3 || /^10+$/.test(String(n));
}

/**
 * What an entry of a per-match table costs with its key `${match_id}/${seat}`, the value aside:
 * twice the key, since a string made by concatenation may keep its parts (the match id the
 * server sent, which may be megabytes) beside the flat copy V8 makes of it.
 */
function keyBytes(key) {
  return ENTRY_BYTES + 2 * footprint(key);
}

/** Bytes in hex for a log line: the first 32 of them, and how many there are past that. */
function shortHex(bytes) {
  return bytes.length <= 32
    ? bytes.toString('hex')
    : `${bytes.subarray(0, 32).toString('hex')}... (${bytes.length} bytes)`;
}

/** A map key `${match_id}/${seat}` as [match id, seat] (a match id may hold '/'). */
function splitKey(key) {
  const slash = key.lastIndexOf('/');
  return [key.slice(0, slash), key.slice(slash + 1)];
}

/** The game name of a bisca.v1.Game value ('GAME_BELOTE' -> 'belote'), or undefined. */
function gameName(value) {
  return Object.keys(GAMES).find((name) => GAMES[name] === value);
}

/** What is wrong with a MatchStarted (an unknown game, another game's settings), or null. */
function startProblem(started) {
  const game = gameName(started.game);
  if (game === undefined) return `unknown game ${printable(JSON.stringify(started.game))}`;
  const given = started.settings && started.settings.game;
  if (given && given !== game) return `${printable(given)} settings were given for a ${game} match`;
  return null;
}

module.exports = {
  BotCrashed,
  BotRejected,
  ConnectionLost,
  GAMES,
  MAX_KEPT_BYTES,
  MAX_MATCHES,
  NOT_AN_ACTION,
  PROTOCOL_VERSION,
  Session,
  dealCommitment,
  gameValues,
};
