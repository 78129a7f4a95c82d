'use strict';
// Dealing a match's start again from its seed, as the engine deals it: the Node twin of the
// Python SDK's bisca/client/_deal.py.
//
// Why: the commitment (MatchStarted.deal_commitment, opened by MatchEnded) proves only that the
// seed revealed at the end was fixed before the first card; a server could commit to one seed
// and deal from another.  The engine deals from the seed alone, so the bot deals again from
// the revealed seed and compares what it was shown of the first deal (ShownStart, kept as the
// messages come; the rules of the Python SDK's _deal.py, review 37):
// - the events the engine gives its seat at the start of the match, before anyone acts (Belote:
//   its first five cards and the turned card; Bestia: the antes and the turned trump), each
//   index as first sent (a later copy that differs fails), and no start event it may not see;
// - Bestia: the cards the seat looks at in the first hand (its first HandLooked): when it looks
//   depends on the blind round, which cards it sees on the seed alone (its dealt four, and the
//   turned trump for a dealer who stole it);
// - Bestia: the hand in the observation of its first request after that look, the one the bot
//   plays from, while it is still in the first hand and has neither exchanged nor played (i);
// - Belote: the hand and the turned card in the observation of its first request, the one the
//   bot plays from, once the moves it shows are played again (lib/belote_replay.js).
// Later deals depend on the moves and on cards the seat never sees, so the match's log checks
// the rest (`bisca replay verify`), for whoever holds it.  Of Bestia's observations only the
// hand of that first request after the look is compared (its events are).
//
// The engine is Python, so this is a port, and it must follow it bit for bit: the generator of
// engine/bisca/engine/_rng.py (fixed forever by the engine, so that recorded matches replay),
// and the starts of engine/bisca/engine/belote/_state.py and bestia/_state.py.  The events are
// built in the wire's object form (bisca.v1.belote.Event, bisca.v1.bestia.Event, as proto-loader
// decodes them) and compared encoded, so a difference in any field is caught.
// tests/client/test_node_deal_vectors.py checks every event of the port against the engine's.

const crypto = require('node:crypto');
const { BeloteReplay, cardIndex, suitIndex } = require('./belote_replay');
const { footprint } = require('./kept');
const { printable, safeJson, shortText } = require('./log');

// ---- the engine's generator (engine/bisca/engine/_rng.py) --------------------------------
// SplitMix64 on BigInts: JavaScript Numbers hold 53 bits, the generator's words are 64.

const MASK64 = (1n << 64n) - 1n;
const TWO_TO_64 = 1n << 64n;
const GOLDEN_GAMMA = 0x9e3779b97f4a7c15n;
const STREAM_GAMMA = 0xd1b54a32d192ed03n;

function mix64(word) {
  let z = ((word ^ (word >> 30n)) * 0xbf58476d1ce4e5b9n) & MASK64;
  z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & MASK64;
  return z ^ (z >> 31n);
}

/** The engine's SplitMix64 stream for one deal (or hand) of one match: see DealRng.forDeal. */
class DealRng {
  /** A generator in the given state (a BigInt, or anything BigInt() takes), mod 2^64. */
  constructor(state) {
    this.state = BigInt(state) & MASK64;
  }

  /**
   * The stream of deal `dealNumber` of the match seeded with `seed`, the only way the engine
   * seeds it: deal k never depends on how the deals before it were played.  `stream` separates
   * independent uses inside one deal (0, the deal's own, is the only one a start uses).
   */
  static forDeal(seed, dealNumber, stream = 0) {
    const [s, d, t] = [BigInt(seed), BigInt(dealNumber), BigInt(stream)];
    if (s < 0n || d < 0n || t < 0n) {
      throw new RangeError('seed, deal number and stream must be non-negative');
    }
    let state = mix64((s & MASK64) ^ GOLDEN_GAMMA);
    state = mix64(state ^ (((d + 1n) * GOLDEN_GAMMA) & MASK64));
    state = mix64(state ^ (((t + 1n) * STREAM_GAMMA) & MASK64));
    return new DealRng(state);
  }

  /** The next 64-bit output, a BigInt. */
  next64() {
    this.state = (this.state + GOLDEN_GAMMA) & MASK64;
    return mix64(this.state);
  }

  /**
   * An unbiased integer in [0, n) for 1 <= n < 2^32, by Lemire's multiply-and-reject on 64-bit
   * words: the high word of output * n, drawing again while the low word is under 2^64 mod n.
   */
  below(n) {
    if (!Number.isInteger(n) || n < 1 || n >= 2 ** 32) {
      throw new RangeError(`below() takes 1 <= n < 2**32, got ${n}`);
    }
    const size = BigInt(n);
    const threshold = (TWO_TO_64 - size) % size;
    for (;;) {
      const product = this.next64() * size;
      if ((product & MASK64) >= threshold) return Number(product >> 64n);
    }
  }

  /** Fisher-Yates in place, from the last position down. */
  shuffle(items) {
    this.shuffleTop(items, Math.max(items.length - 1, 0));
  }

  /**
   * The first `steps` steps of shuffle(): they fix the last `steps` positions as the whole
   * shuffle would (Bestia shuffles only the part of its deck that a deal takes).
   */
  shuffleTop(items, steps) {
    const last = items.length - 1;
    if (!Number.isInteger(steps) || steps < 0 || steps > Math.max(last, 0)) {
      throw new RangeError(`a shuffle of ${items.length} items has 0..${Math.max(last, 0)} steps`);
    }
    for (let i = last; i > last - steps; i -= 1) {
      const j = this.below(i + 1);
      [items[i], items[j]] = [items[j], items[i]];
    }
  }
}

// ---- cards and events in the wire's form ---------------------------------------------------

// The engine's suits and ranks in its order: a card's index is suit * ranks + rank, and the
// .proto names each member E_MEMBER (its numbers are not the engine's: 0 is E_UNSPECIFIED).
const DECKS = Object.freeze({
  belote: {
    suits: ['SPADES', 'HEARTS', 'DIAMONDS', 'CLUBS'],
    ranks: ['SEVEN', 'EIGHT', 'NINE', 'TEN', 'JACK', 'QUEEN', 'KING', 'ACE'],
  },
  bestia: {
    suits: ['COINS', 'CUPS', 'SWORDS', 'CLUBS'],
    ranks: ['TWO', 'THREE', 'FOUR', 'FIVE', 'SIX', 'SEVEN', 'JACK', 'QUEEN', 'KING', 'ACE'],
  },
});

/** The game's deck in the engine's order: card indices 0..n-1, as a fresh array to shuffle. */
function newDeck(game) {
  const { suits, ranks } = DECKS[game];
  return [...Array(suits.length * ranks.length).keys()];
}

/** A card index as the wire's Card. */
function wireCard(game, index) {
  const { ranks } = DECKS[game];
  return {
    suit: `SUIT_${DECKS[game].suits[Math.floor(index / ranks.length)]}`,
    rank: `RANK_${ranks[index % ranks.length]}`,
  };
}

const BELOTE_SEATS = 4;

// An event's audience is a bit mask of the seats it is given to, as the engine records it.
const everyone = (seats) => (1 << seats) - 1;
const only = (seat) => 1 << seat;
const HIDDEN = 0; // the omniscient record only (the match log)

// ---- the settings a match was started with -------------------------------------------------

/** A refusal of settings, as the engine's InvalidSettingsError. */
class InvalidSettings extends Error {
  constructor(message) {
    super(message);
    this.name = 'InvalidSettings';
  }
}

function checkRange(name, value, low, high) {
  if (!Number.isInteger(value) || value < low || value > high) {
    throw new InvalidSettings(`${name} must be ${low}..${high}, got ${value}`);
  }
}

// Each game's settings: the engine's defaults and its refusals (the *Settings dataclasses'
// __post_init__), so that settings the engine would refuse are not dealt from.
const SETTINGS = Object.freeze({
  belote: {
    defaults: { deals: 4, first_dealer: 0, target_score: null, max_deals: 24, duplicate: false },
    check(s) {
      checkRange('first_dealer', s.first_dealer, 0, BELOTE_SEATS - 1);
      const [name, limit] =
        s.target_score === null ? ['deals', s.deals] : ['max_deals', s.max_deals];
      if (s.target_score !== null) checkRange('target_score', s.target_score, 1, 100_000);
      checkRange(name, limit, 1, 1000);
      if (s.duplicate && limit % 2) {
        throw new InvalidSettings(
          `duplicate mode plays deals in pairs: ${name} must be even, got ${limit}`,
        );
      }
    },
  },
  bestia: {
    defaults: {
      seats: 5,
      stake: 10,
      ante_mode: 'all',
      rounds: 2,
      blind_raises: true,
      giro_max_hands: 10,
      first_dealer: 0,
    },
    check(s) {
      checkRange('seats', s.seats, 4, 7);
      checkRange('stake', s.stake, 1, 1_000_000);
      if (s.ante_mode !== 'all' && s.ante_mode !== 'dealer') {
        throw new InvalidSettings(`ante_mode must be 'all' or 'dealer', got ${s.ante_mode}`);
      }
      checkRange('rounds', s.rounds, 1, 100);
      checkRange('giro_max_hands', s.giro_max_hands, 1, 1000);
      checkRange('first_dealer', s.first_dealer, 0, s.seats - 1);
    },
  },
});

/**
 * The settings of a `game` match from its MatchStarted.settings (a decoded GameSettings, or
 * null: the defaults), each absent field the engine's default.  Throws InvalidSettings for
 * settings the engine would refuse, or another game's.
 */
function dealSettings(game, given) {
  const { defaults, check } = SETTINGS[game];
  // A decoded GameSettings names its member in `game`; a plain object may only hold it.
  const which = given ? given.game || Object.keys(SETTINGS).find((name) => given[name]) : undefined;
  if (which && which !== game) {
    throw new InvalidSettings(`${which} settings were given for a ${game} match`);
  }
  const present = (which && given[which]) || {};
  const settings = { ...defaults };
  for (const name of Object.keys(defaults)) {
    if (present[name] !== undefined && present[name] !== null) settings[name] = present[name];
  }
  check(settings);
  return Object.freeze(settings);
}

// ---- Belote (engine/bisca/engine/belote/_state.py, _start_deal) ----------------------------

/** Belote deal `dealNumber`'s dealer and shuffled deck (card indices, the top first). */
function beloteShuffle(settings, seed, dealNumber) {
  const dealer = (settings.first_dealer + dealNumber) % BELOTE_SEATS;
  // Duplicate mode plays each shuffle twice, the second time with every seat one place on.
  const shuffleNumber = settings.duplicate ? Math.floor(dealNumber / 2) : dealNumber;
  const deck = newDeck('belote');
  DealRng.forDeal(seed, shuffleNumber).shuffle(deck);
  return { dealer, deck };
}

/**
 * The events of the start of Belote deal `dealNumber` ({audience, event}, event a
 * bisca.v1.belote.Event): the deal's announcement, each seat's first five cards (3 then 2, from
 * the seat after the dealer) and the turned card.  They depend on the seed and the deal's
 * number only, not on the play before it (the vector tests deal later deals too).
 */
function beloteDeal(settings, seed, dealNumber) {
  const { dealer, deck } = beloteShuffle(settings, seed, dealNumber);
  const first = (dealer + 1) % BELOTE_SEATS;
  const order = [...Array(BELOTE_SEATS).keys()].map((offset) => (first + offset) % BELOTE_SEATS);
  const hands = order.map(() => []);
  let position = 0;
  for (const packet of [3, 2]) {
    for (const seat of order) {
      hands[seat].push(...deck.slice(position, position + packet));
      position += packet;
    }
  }
  const replayOf = settings.duplicate && dealNumber % 2 ? dealNumber - 1 : undefined;
  const all = everyone(BELOTE_SEATS);
  return [
    {
      audience: all,
      event: { deal_started: { deal_number: dealNumber, dealer, replay_of: replayOf } },
    },
    ...order.map((seat) => ({
      audience: only(seat),
      event: { cards_dealt: { seat, cards: hands[seat].map((card) => wireCard('belote', card)) } },
    })),
    { audience: all, event: { card_turned: { card: wireCard('belote', deck[position]) } } },
  ];
}

// ---- Bestia (engine/bisca/engine/bestia/_state.py, _setup and _start_hand) -----------------

/**
 * The events of a Bestia match before its first decision ({audience, event}, event a
 * bisca.v1.bestia.Event): the first hand's announcement, the antes, the hands (hidden: no seat
 * has looked yet) and the turned trump.  The first decision always follows (a buio, else the
 * dealer's rubata: nobody has folded yet).
 */
function bestiaStart(settings, seed) {
  const n = settings.seats;
  const dealer = settings.first_dealer; // turn of deal 0
  // The last round of deals is the giro: with one round, the first hand is already in it.
  const giro = settings.rounds === 1;
  // "all": every seat antes into an empty pot (it is, at the start); "dealer": the dealer only.
  const antes = settings.ante_mode === 'all' ? [...Array(n).keys()] : [dealer];
  // The deck is a pile whose top is its end; a deal takes 4 cards a seat and the turned card
  // from the top, and only that part of the deck is shuffled before the first decision.
  const deck = newDeck('bestia');
  const dealt = 4 * n + 1;
  DealRng.forDeal(seed, 0).shuffleTop(deck, dealt);
  const top = deck.length - 1;
  const first = (dealer + 1) % n;
  const second = top - 2 * n - 1; // 2 cards each, the turned card, then 2 more each
  const hands = new Array(n);
  for (let i = 0; i < n; i += 1) {
    const at = top - 2 * i;
    const hand = [deck[at], deck[at - 1], deck[second - 2 * i], deck[second - 2 * i - 1]];
    hands[(first + i) % n] = hand.sort((a, b) => a - b);
  }
  const all = everyone(n);
  return [
    { audience: all, event: { hand_started: { hand_number: 0, dealer, giro, dealer_hand: 1 } } },
    ...antes.map((seat) => ({
      audience: all,
      event: { ante_paid: { seat, amount: settings.stake } },
    })),
    {
      audience: HIDDEN,
      event: { hand_dealt: { cards: hands.flat().map((card) => wireCard('bestia', card)) } },
    },
    {
      audience: all,
      event: { trump_turned: { card: wireCard('bestia', deck[top - 2 * n]), number: 1 } },
    },
  ];
}

/** Every event of a match before its first action, in order (an event's index is its place). */
function startEvents(game, settings, seed) {
  return game === 'belote' ? beloteDeal(settings, seed, 0) : bestiaStart(settings, seed);
}

// ---- the check -------------------------------------------------------------------------------

/**
 * The events of a match kept for the check, by index: those before the first action are among
 * the first few (6 in Belote, 9 in Bestia at 7 seats), the rest are not kept.
 */
const KEPT_EVENTS = 32;
/**
 * The largest event (or first request's observation) kept for the check, on the wire: a
 * start's events are tens of bytes, a first request's observation hundreds; a bigger one is
 * not one of them, and only its size is kept (it fails the check where it counts).
 */
const MAX_KEPT_EVENT_BYTES = 16 * 1024;
const SHORT_TEXT = 200;
// What the record of one event costs at most (its fingerprint(), whose text has at most 203
// characters, or its size; its slot).
const SHOWN_BYTES = 1024;

/**
 * What is kept of an event sent (a GameEvent, `gameEvent` its proto-loader type): the SHA-256
 * of its encoding, which is what the check compares (not the event: a hostile server's events
 * can be large, and a session keeps them for up to MAX_MATCHES matches), and a short text of
 * it for the error.
 */
function fingerprint(gameEvent, event) {
  return {
    digest: digestOf(gameEvent, event),
    text: shortText(printable(safeJson(event)), SHORT_TEXT), // (a copy: not the whole text)
  };
}

/**
 * What is kept of an event: its fingerprint(), or for one over MAX_KEPT_EVENT_BYTES on the wire
 * only its size ({oversized}).  footprint() first (bounded): an event that holds little is
 * small on the wire, and a big one is encoded only to learn its size.
 */
function record(gameEvent, event) {
  if (footprint(event, MAX_KEPT_EVENT_BYTES) > MAX_KEPT_EVENT_BYTES) {
    let size;
    try {
      size = gameEvent.serialize(event).length;
    } catch {
      size = footprint(event, MAX_KEPT_EVENT_BYTES); // (it matches nothing either way)
    }
    if (size > MAX_KEPT_EVENT_BYTES) return { digest: null, oversized: size, text: '' };
  }
  return fingerprint(gameEvent, event);
}

/** Whether two record()s are of the same event (an oversized one is the same as nothing). */
function sameRecord(a, b) {
  return (
    a.oversized === undefined &&
    b.oversized === undefined &&
    a.digest !== null &&
    b.digest !== null &&
    a.digest.equals(b.digest)
  );
}

/** The SHA-256 of an event's canonicalEncoding(), or null for an event that cannot be encoded
 * (it matches nothing). */
function digestOf(gameEvent, event) {
  try {
    return crypto.createHash('sha256').update(canonicalEncoding(gameEvent, event)).digest();
  } catch {
    return null;
  }
}

/**
 * An event's encoding, the same for every object of the same value: protobufjs writes a field
 * set to its default (a decoded event has them all) and skips one left out, so the event is
 * encoded once decoded, with every field.  Two events encode alike exactly when they are equal
 * as protobuf messages: every field alike, and an `optional` one present in both or neither.
 * Unknown fields are not in it: decoding drops them (a field this SDK does not know cannot have
 * fooled the bot, and a newer honest server may add one).
 */
function canonicalEncoding(gameEvent, event) {
  return gameEvent.serialize(gameEvent.deserialize(gameEvent.serialize(event)));
}

/** The member set in a oneof of a decoded message (`oneof` its name), or of a plain object. */
function memberOf(message, oneof, names) {
  if (!message) return undefined;
  if (typeof message[oneof] === 'string') return message[oneof];
  return names.find((name) => message[name] !== undefined && message[name] !== null);
}
const GAME_NAMES = ['belote', 'bestia'];
const gameOf = (event) => memberOf(event, 'game', GAME_NAMES);
/** The kind of a game's event (its oneof member: 'hand_looked', ...). */
const kindOf = (event) =>
  event ? Object.keys(event).find((name) => name !== 'event' && event[name]) : undefined;

/**
 * What a seat was shown of the first deal, as the messages came (the Node twin of the Python
 * SDK's ShownStart; `types` the proto-loader types {gameEvent, observation, bestiaObservation}
 * of a GameEvent, of a Belote Observation and of a Bestia one):
 * - `events`: index -> the record() of the first copy of each of the first KEPT_EVENTS events
 *   (a later copy that differs sets `resentDifferently`: a server could show rigged cards and
 *   send the honest ones again at the end);
 * - Bestia: the seat's first HandLooked in the first hand (`firstLook`, {index, digest, text},
 *   or its size in `oversizedLook`), the first hand ending at a HandStarted of another index
 *   than the first one's;
 * - Bestia: what the check needs of the observation of the seat's first request whose
 *   observation has `looked` (`firstLookedObservation`, or its size in `oversizedObservation`);
 * - Belote: what the check needs of the observation of the seat's first request
 *   (`firstObservation`, or its size in `oversizedObservation`).
 */
class ShownStart {
  constructor(types) {
    this.types = types;
    this.events = new Map();
    this.resentDifferently = null;
    this.firstHand = null;
    this.firstHandOver = false;
    this.firstLook = null;
    this.oversizedLook = null;
    this.firstObservation = null;
    this.firstLookedObservation = null;
    this.oversizedObservation = null;
    this.asked = false;
    this.bytes = 0; // what it holds beyond an empty one
  }

  /** The seat was shown `event` (a GameEvent, in a batch, a request or the end). */
  show(event) {
    if (!event) return;
    const index = Number(event.index || 0);
    if (gameOf(event) === 'bestia') {
      const kind = kindOf(event.bestia);
      if (kind === 'hand_started' && this.firstHand === null) this.firstHand = index;
      else if (kind === 'hand_started' && index !== this.firstHand) this.firstHandOver = true;
      else if (kind === 'hand_looked' && !this.firstHandOver && !this.looked) {
        const kept = record(this.types.gameEvent, event);
        if (kept.oversized !== undefined) this.oversizedLook = kept.oversized;
        else this.firstLook = { index, ...kept };
        this.bytes += SHOWN_BYTES;
      }
    }
    if (index >= KEPT_EVENTS) return;
    const kept = record(this.types.gameEvent, event);
    const first = this.events.get(index);
    if (first === undefined) {
      this.events.set(index, kept);
      this.bytes += SHOWN_BYTES;
    } else if (!sameRecord(first, kept) && this.resentDifferently === null) {
      this.resentDifferently = index;
    }
  }

  /** The seat was asked `request` (an ActionRequest: its observation is what the bot plays from). */
  ask(request) {
    const observation = request.observation;
    const game = memberOf(observation, 'game', GAME_NAMES);
    if (game === 'belote' && !this.asked) {
      this.firstObservation = this._keep(this.types.observation, observation.belote, firstMoves);
    } else if (
      game === 'bestia' &&
      observation.bestia.looked &&
      this.firstLookedObservation === null &&
      this.oversizedObservation === null
    ) {
      this.firstLookedObservation = this._keep(
        this.types.bestiaObservation,
        observation.bestia,
        lookedHand,
      );
    }
    this.asked = true;
  }

  /**
   * What the check needs of `seen` (an observation of the proto-loader type `type`), by `take`;
   * null, its size noted, when it is too big to be an honest one (those are under a kilobyte).
   */
  _keep(type, seen, take) {
    let size = 0;
    if (footprint(seen, MAX_KEPT_EVENT_BYTES) > MAX_KEPT_EVENT_BYTES) {
      try {
        size = type.serialize(seen).length;
      } catch {
        size = footprint(seen, MAX_KEPT_EVENT_BYTES);
      }
    }
    if (size > MAX_KEPT_EVENT_BYTES) {
      this.oversizedObservation = size;
      return null;
    }
    const kept = take(seen);
    this.bytes += footprint(kept);
    return kept;
  }

  get looked() {
    return this.firstLook !== null || this.oversizedLook !== null;
  }

  /** Nothing of the deal reached the seat (a match that failed before its first card). */
  get nothing() {
    return this.events.size === 0 && !this.asked && !this.looked;
  }
}

const copyCard = (card) => (card ? { suit: card.suit, rank: card.rank } : null);

/** What the check reads of a Belote observation: its deal, hand, turned card and moves. */
function firstMoves(observation) {
  const bids = (observation.bids || []).map((bid) => ({
    seat: Number(bid.seat || 0),
    suit: bid.suit === undefined || bid.suit === null ? undefined : bid.suit,
  }));
  const plays = [];
  for (const trick of observation.tricks || []) {
    for (const play of (trick && trick.plays) || []) {
      plays.push({ seat: Number(play.seat || 0), card: copyCard(play.card) });
    }
  }
  return {
    deal_number: Number(observation.deal_number || 0),
    hand: (observation.hand || []).map(copyCard),
    turned_card: copyCard(observation.turned_card),
    bids,
    plays,
  };
}

/**
 * What the check reads of a Bestia observation: its hand's number, its hand, and the seats that
 * exchanged or played a card in it (a seat's hand may differ from its look since).
 */
function lookedHand(observation) {
  const changed = new Set();
  for (const exchange of observation.exchanges || []) {
    if (exchange) changed.add(Number(exchange.seat || 0));
  }
  for (const trick of observation.tricks || []) {
    for (const play of (trick && trick.plays) || []) {
      if (play) changed.add(Number(play.seat || 0));
    }
  }
  return {
    hand_number: Number(observation.hand_number || 0),
    hand: (observation.hand || []).map(copyCard),
    changed: [...changed],
  };
}

/**
 * The events the engine gives `seat` before the first action of a `game` match dealt from
 * `seed` with `settings`: GameEvents in the wire's object form, with their indices.
 */
function startShown(game, settings, seed, seat) {
  return startEvents(game, settings, seed).flatMap(({ audience, event }, index) =>
    (audience >> seat) & 1 ? [{ index, [game]: event }] : [],
  );
}

/**
 * Why `seat` is no seat of a `game` match with `settings` (null: it is one).  A seat outside
 * the table is shown no card of the start, so nothing would be compared: not a start that holds.
 */
function seatOutside(game, settings, seat) {
  const seats = game === 'belote' ? BELOTE_SEATS : settings.seats;
  return Number.isInteger(seat) && seat >= 0 && seat < seats
    ? null
    : `seat ${seat} is not a seat of a ${seats}-seat ${game} match`;
}

/** A number as Python's f"{n:,}" writes it. */
const grouped = (n) => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');

/**
 * null when what `seat` was shown of the first deal (`shown`, a ShownStart) is what a `game`
 * match dealt from `seed` (a BigInt) with `settings` (from dealSettings) shows it; else what
 * differs.  `gameEvent` is the GameEvent's proto-loader type.  As the Python SDK's
 * start_dealt_from: each start event the seat is shown, as first sent, and none it is not;
 * Bestia's first look at its cards; Belote's first request's hand and turned card.
 */
function startDealtFrom(game, settings, seed, seat, shown, gameEvent) {
  const notASeat = seatOutside(game, settings, seat);
  if (notASeat !== null) return notASeat;
  if (shown.resentDifferently !== null) {
    return `event ${shown.resentDifferently} was sent twice, with different content`;
  }
  const start = startEvents(game, settings, seed);
  for (const [index, { audience, event }] of start.entries()) {
    const sent = shown.events.get(index);
    if (!((audience >> seat) & 1)) {
      if (sent !== undefined) return `event ${index} was sent, but seat ${seat} is not shown it`;
      continue;
    }
    if (sent !== undefined && sent.oversized !== undefined) {
      return `event ${index} is not what seed ${seed} deals: ${grouped(sent.oversized)} bytes were sent`;
    }
    if (sent === undefined) return `event ${index} of the start (${kindOf(event)}) was never sent`;
    const digest = digestOf(gameEvent, { index, [game]: event });
    if (sent.digest === null || !sent.digest.equals(digest)) {
      return `event ${index} is not what seed ${seed} deals: ${sent.text} was sent`;
    }
  }
  if (shown.oversizedLook !== null) {
    return (
      `the cards seat ${seat} looked at are not what seed ${seed} deals: ` +
      `${grouped(shown.oversizedLook)} bytes were sent`
    );
  }
  if (shown.oversizedObservation !== null) {
    return (
      `the hand in seat ${seat}'s first request is not what seed ${seed} deals: ` +
      `${grouped(shown.oversizedObservation)} bytes were sent`
    );
  }
  return game === 'bestia'
    ? firstLookDiffers(start, seed, seat, shown, gameEvent)
    : firstHandDiffers(settings, seed, seat, shown);
}

/** A wire card's index in the engine's deck of `game` (suit * ranks + rank). */
function cardOrder(game, card) {
  const { suits, ranks } = DECKS[game];
  return suits.indexOf(card.suit.slice(5)) * ranks.length + ranks.indexOf(card.rank.slice(5));
}

/**
 * Bestia: the seat's first look is its dealt four (its slice of the hidden HandDealt: hands by
 * seat, each sorted) or, for the dealer who stole the turned trump, those and the trump sorted
 * (g); so is the hand in its first request after it looked, while that request is of the first
 * hand and the seat has neither exchanged nor played a card (i).
 */
function firstLookDiffers(start, seed, seat, shown, gameEvent) {
  const of = (kind) => start.find(({ event }) => event[kind]).event[kind];
  const own = of('hand_dealt').cards.slice(4 * seat, 4 * seat + 4);
  const looks = [own];
  if (seat === of('hand_started').dealer) {
    const stolen = [...own, of('trump_turned').card];
    looks.push(stolen.sort((a, b) => cardOrder('bestia', a) - cardOrder('bestia', b)));
  }
  const look = shown.firstLook;
  if (look !== null) {
    const expected = (cards) => ({ index: look.index, bestia: { hand_looked: { seat, cards } } });
    if (
      look.digest === null ||
      !looks.some((cards) => look.digest.equals(digestOf(gameEvent, expected(cards))))
    ) {
      return `the cards seat ${seat} looked at are not what seed ${seed} deals: ${look.text} was sent`;
    }
  }
  const first = shown.firstLookedObservation;
  if (
    first === null ||
    first.hand_number !== of('hand_started').hand_number ||
    first.changed.includes(seat)
  ) {
    return null; // not asked after looking in the first hand, or its hand has changed since
  }
  const sameHand = (cards) =>
    first.hand.length === cards.length && first.hand.every((card, at) => sameCard(card, cards[at]));
  if (looks.some(sameHand)) return null;
  return (
    `the hand in seat ${seat}'s first request after it looked is not what seed ${seed} ` +
    `deals: ${first.hand.map(cardText).join(' ')}`
  );
}

/** A wire Card as the protobuf text format writes it, on one line (the Python SDK's words). */
function cardText(card) {
  const parts = [];
  for (const name of ['suit', 'rank']) {
    const value = card ? card[name] : undefined;
    if (value !== undefined && value !== null && value !== 0 && !/_UNSPECIFIED$/.test(value)) {
      parts.push(`${name}: ${value}`);
    }
  }
  return parts.join(' ');
}

const sameCard = (a, b) => Boolean(a && b) && a.suit === b.suit && a.rank === b.rank;

/**
 * Belote: the hand and the turned card of the seat's first request are those the seed deals,
 * once the moves its observation shows (its bids, then its tricks' cards) are played on the
 * deal again (lib/belote_replay.js): a seat first asked after a take holds its eight cards,
 * which the taker decides.  A first request of a later deal (a seat first asked after a
 * reconnect) is not compared.
 */
function firstHandDiffers(settings, seed, seat, shown) {
  const first = shown.firstObservation;
  if (first === null || first.deal_number !== 0) return null;
  const why = `the hand in seat ${seat}'s first request is not what seed ${seed} deals`;
  const state = new BeloteReplay(settings, (deal) => beloteShuffle(settings, seed, deal));
  const moves = [
    ...first.bids.map(({ seat: mover, suit }) => {
      if (suit === undefined) return { mover, move: { pass: true } };
      const take = suitIndex(suit);
      return { mover, move: take === null ? null : { take } };
    }),
    ...first.plays.map(({ seat: mover, card }) => {
      const index = cardIndex(card);
      return { mover, move: index === null ? null : { card: index } };
    }),
  ];
  for (const { mover, move } of moves) {
    if (state.isOver || state.toAct !== mover)
      return `${why}: its moves before it are not the match's`;
    if (move === null) return `${why}: its moves before it cannot be read`;
    if (!state.isLegal(move)) return `${why}: its moves before it are not legal with that deal`;
    state.apply(move);
  }
  const hand = state.handOf(seat).map((card) => wireCard('belote', card));
  const turned = wireCard('belote', state.turned);
  if (
    first.hand.length === hand.length &&
    first.hand.every((card, at) => sameCard(card, hand[at])) &&
    sameCard(first.turned_card, turned)
  ) {
    return null;
  }
  return `${why}: ${first.hand.map(cardText).join(' ')}`;
}

module.exports = {
  DealRng,
  InvalidSettings,
  KEPT_EVENTS,
  MAX_KEPT_EVENT_BYTES,
  SHOWN_BYTES,
  ShownStart,
  beloteDeal,
  beloteShuffle,
  bestiaStart,
  canonicalEncoding,
  dealSettings,
  fingerprint,
  firstHandDiffers,
  seatOutside,
  startDealtFrom,
  startEvents,
  startShown,
};
