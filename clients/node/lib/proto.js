'use strict';
// The bisca.v1 contract, loaded at run time from the repository's proto/ directory: no
// generated code.  Messages are plain objects with the .proto field names (keepCase), enums as
// their names ('SUIT_HEARTS'), 64-bit integers as Numbers, every field present (defaults; an
// absent message field is null, an absent `optional` scalar is undefined) and, for each oneof,
// a property naming the member that is set (oneofs: message.kind === 'action_request').

const path = require('node:path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

const LOADER_OPTIONS = Object.freeze({
  keepCase: true,
  enums: String,
  longs: Number,
  defaults: true,
  oneofs: true,
});

/** Where the .proto files are: $BISCA_PROTO_DIR, else the repository's proto/ folder. */
function defaultProtoDir() {
  return process.env.BISCA_PROTO_DIR || path.resolve(__dirname, '..', '..', '..', 'proto');
}

const cache = new Map();

/**
 * The loaded contract: `Arena` (the gRPC client constructor), `definition` (proto-loader's
 * package definition: `definition['bisca.v1.GameAction'].serialize(...)` and so on),
 * `decodeServerMessage` (see below) and `protoDir`.  Loaded once per directory.
 */
function loadProto(protoDir = defaultProtoDir()) {
  let loaded = cache.get(protoDir);
  if (loaded === undefined) {
    const load = (options) =>
      protoLoader.loadSync('bisca/v1/arena.proto', { ...options, includeDirs: [protoDir] });
    const definition = load(LOADER_OPTIONS);
    const tree = grpc.loadPackageDefinition(definition);
    const serverMessage = definition['bisca.v1.ServerMessage'];
    // Loaded now, not at the first MatchEnded: loading takes a good 100 ms, which would hold
    // up the end of the first match (and its log line) that long.
    const exactServerMessage = load({ ...LOADER_OPTIONS, longs: String })[
      'bisca.v1.ServerMessage'
    ];
    /**
     * A ServerMessage's bytes as a plain object, like the Arena client's own decoding, except
     * that a MatchEnded also gets `exact_seed`: its seed as a decimal string.  `seed` is a
     * Number, which loses the last digits of a seed above 2^53, and the deal's check needs
     * all 64 bits (random seeds are 63-bit).
     */
    const decodeServerMessage = (bytes) => {
      const message = serverMessage.deserialize(bytes);
      if (message.kind === 'match_ended') {
        message.match_ended.exact_seed = exactServerMessage.deserialize(bytes).match_ended.seed;
      }
      return message;
    };
    // protobufjs writes each message type's decoder on its first use (several ms each); a
    // MatchEnded decoded now spares the end of the first match that time.
    decodeServerMessage(serverMessage.serialize({ match_ended: { seats: [{}] } }));
    loaded = { Arena: tree.bisca.v1.Arena, definition, decodeServerMessage, protoDir };
    cache.set(protoDir, loaded);
  }
  return loaded;
}

module.exports = { LOADER_OPTIONS, defaultProtoDir, loadProto };
