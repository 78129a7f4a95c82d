'use strict';
// What a session keeps per (match, seat), bounded by count and by bytes: the Node twin of the
// Python SDK's bisca/client/_kept.py and the C++ SDK's Recent tables.
//
// A server decides how many matches a bot is in and how big each of their messages is, so each
// table of the session (the open requests, the deal commitments, the starts seen) keeps at most
// MAX_MATCHES entries and about MAX_KEPT_BYTES.  A count alone let a hostile server make 1,024
// entries of tens of megabytes each: a decoded request holds up to 113 times its wire bytes in
// JavaScript objects (below), and 40 requests of 1 MB for matches never started held 1.2 GB.
// Past either bound the least recently active entry goes, the one most likely to be a match the
// server forgot; the newest always stays.  Losing one costs little (its deal is not checked at
// the end, a rejection of its request is not answered; the re-sent request is), far less than a
// bot whose memory grows until it is killed.
//
// Sizes: footprint() walks what an entry holds and adds an allowance per object, property,
// array slot, string and buffer, from V8's layout (a plain object of up to 4 properties takes
// 56 bytes, a property past 16 sends it to a hash table).  Measured with process.memoryUsage()
// (heapUsed after a collection) over decoded requests of 256 KB on the wire (test/kept.test.js
// checks the estimate is never below what is held, nor above 3 times it):
//
//   request whose bulk is                      held per wire byte   estimate / held
//   legal Pass actions                                  29.5             1.68
//   legal PlayCard actions                              19.4             1.97
//   an observation of empty cards                       33.1             2.66
//   an observation of empty deal results               113.3             1.27
//   an observation of numbers (card_points)             11.8             1.36
//   a match id                                           1.0             1.02
//   a real one (510 bytes: 7 tricks, 8 legal cards)     17.7             1.59
//
// so an entry costs what it holds within a factor of 1 to 2.7; no single factor of the wire
// size would do (1 to 113).

/** The most (match, seat) entries in each table of a session. */
const MAX_MATCHES = 1024;

/**
 * About the most each table of a session holds (by footprint(), so 6 to 16 MiB in fact).  An
 * honest entry is estimated at kilobytes (a late Belote request with its observation 17 KB, a
 * deal commitment with its 32 events 34 KB, a start 0.5 KB), so 16 MiB is 500 to 1,000 honest
 * matches, far above the handful a bot plays at once: only a server that sends enormous
 * messages for matches it never ends reaches it.
 */
const MAX_KEPT_BYTES = 16 * 1024 * 1024;

// The allowances of footprint(), in bytes (a 64-bit V8 without pointer compression, as Node
// ships): a plain object's header with its first in-object slots, each of its properties, an
// array's header (JSArray and its backing store), a string's header, a Buffer's (the Buffer
// object, its ArrayBuffer and their bookkeeping).
const OBJECT_BYTES = 64;
const SLOT_BYTES = 8;
const ELEMENT_BYTES = 16; // an array's slot, with the room an array grown by push() keeps
const DICTIONARY_BYTES = 48; // a property of an object past FAST_PROPERTIES (a hash table's)
const FAST_PROPERTIES = 16;
const ARRAY_BYTES = 48;
const STRING_BYTES = 24;
const BUFFER_BYTES = 160;

/**
 * About the bytes `value` (a plain object tree: objects, arrays, strings, numbers, Buffers, as
 * the SDK decodes messages) holds in this process, each value counted every time it is reached
 * (an enum's name, one string shared by every card, is counted at each card: an over-estimate).
 * The walk stops past `limit`, returning a number above it: an entry that big is alone in its
 * table anyway.
 */
function footprint(value, limit = Infinity) {
  let bytes = 0;
  const stack = [value];
  while (stack.length > 0 && bytes <= limit) {
    const item = stack.pop();
    if (typeof item === 'string') {
      bytes += STRING_BYTES + stringBytes(item);
    } else if (typeof item === 'bigint') {
      bytes += STRING_BYTES;
    } else if (item === null || typeof item !== 'object') {
      // A number, a boolean, undefined: in its slot.
    } else if (Buffer.isBuffer(item) || ArrayBuffer.isView(item)) {
      bytes += BUFFER_BYTES + item.byteLength;
    } else if (Array.isArray(item)) {
      bytes += ARRAY_BYTES + ELEMENT_BYTES * item.length;
      for (const element of item)
        if (element !== null && element !== undefined) stack.push(element);
    } else if (item instanceof Map || item instanceof Set) {
      bytes += ARRAY_BYTES + 3 * SLOT_BYTES * item.size;
      for (const entry of item) stack.push(entry);
    } else {
      bytes += OBJECT_BYTES;
      let properties = 0;
      for (const name in item) {
        properties += 1;
        bytes += properties > FAST_PROPERTIES ? DICTIONARY_BYTES : SLOT_BYTES;
        if (name.length > 16) bytes += STRING_BYTES + stringBytes(name); // (a server's key)
        const inner = item[name];
        if (inner !== null && typeof inner === 'object') stack.push(inner);
        else if (typeof inner === 'string' && inner.length > 0) stack.push(inner);
      }
    }
  }
  return bytes;
}

/** A string's characters: one byte each when all are Latin-1 (as V8 stores them), else two. */
function stringBytes(text) {
  // eslint-disable-next-line no-control-regex
  return text.length * (/[^\x00-\xff]/.test(text) ? 2 : 1);
}

/**
 * Entries by key in the order of their last use, within MAX_MATCHES entries and MAX_KEPT_BYTES
 * (the options maxCount and maxBytes).  Each entry costs what it is put with (put(), recost());
 * past a bound the least recently used entries go (never the most recent), each reported to
 * forgotten(what, key, reason), reason 'count' or 'bytes'.  Reads as a Map of the values (get,
 * has, size, keys, values, delete, clear).
 */
class Kept {
  constructor(what, forgotten, { maxCount = MAX_MATCHES, maxBytes = MAX_KEPT_BYTES } = {}) {
    this.what = what;
    this.forgotten = forgotten;
    this.maxCount = maxCount;
    this.maxBytes = maxBytes;
    this.entries = new Map(); // key -> {value, bytes}, the least recently used first
    this.bytes = 0;
  }

  get size() {
    return this.entries.size;
  }

  get(key) {
    const entry = this.entries.get(key);
    return entry === undefined ? undefined : entry.value;
  }

  has(key) {
    return this.entries.has(key);
  }

  *keys() {
    yield* this.entries.keys();
  }

  *values() {
    for (const entry of this.entries.values()) yield entry.value;
  }

  /** What `key`'s entry is counted for (0 when there is none). */
  cost(key) {
    const entry = this.entries.get(key);
    return entry === undefined ? 0 : entry.bytes;
  }

  /** `value` for `key`, as the most recent entry, costing `bytes`; then within the bounds. */
  put(key, value, bytes) {
    this.delete(key);
    this.entries.set(key, { value, bytes });
    this.bytes += bytes;
    this.trim();
    return value;
  }

  /** `key`'s entry (if any) as the most recent, costing `bytes` when given; then within the bounds. */
  touch(key, bytes) {
    const entry = this.entries.get(key);
    if (entry === undefined) return;
    this.entries.delete(key);
    this.entries.set(key, entry);
    if (bytes !== undefined) {
      this.bytes += bytes - entry.bytes;
      entry.bytes = bytes;
      this.trim();
    }
  }

  delete(key) {
    const entry = this.entries.get(key);
    if (entry === undefined) return false;
    this.entries.delete(key);
    this.bytes -= entry.bytes;
    return true;
  }

  clear() {
    this.entries.clear();
    this.bytes = 0;
  }

  /** Forgets the least recently used entries while a bound is passed, the newest never. */
  trim() {
    while (
      this.entries.size > 1 &&
      (this.entries.size > this.maxCount || this.bytes > this.maxBytes)
    ) {
      const reason = this.entries.size > this.maxCount ? 'count' : 'bytes';
      const [oldest] = this.entries.keys();
      this.delete(oldest);
      this.forgotten(this.what, oldest, reason);
    }
  }
}

module.exports = { Kept, MAX_KEPT_BYTES, MAX_MATCHES, footprint };
