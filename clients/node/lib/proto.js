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
 * package definition: `definition['bisca.v1.GameAction'].serialize(...)` and so on) and
 * `protoDir`.  Loaded once per directory.
 */
function loadProto(protoDir = defaultProtoDir()) {
  let loaded = cache.get(protoDir);
  if (loaded === undefined) {
    const definition = protoLoader.loadSync('bisca/v1/arena.proto', {
      ...LOADER_OPTIONS,
      includeDirs: [protoDir],
    });
    const tree = grpc.loadPackageDefinition(definition);
    loaded = { Arena: tree.bisca.v1.Arena, definition, protoDir };
    cache.set(protoDir, loaded);
  }
  return loaded;
}

module.exports = { LOADER_OPTIONS, defaultProtoDir, loadProto };
