'use strict';
// What the transport tests share: a scripted fake arena and a wait for its messages.

const grpc = require('@grpc/grpc-js');
const { loadProto } = require('..');

const { Arena } = loadProto();

// Arena's service, but a Buffer written to a stream is sent as it is (a ServerMessage encoded
// once, for a flood of copies).
const service = {
  ...Arena.service,
  Play: {
    ...Arena.service.Play,
    responseSerialize: (value) =>
      Buffer.isBuffer(value) ? value : Arena.service.Play.responseSerialize(value),
  },
};

/**
 * A server whose n-th Play stream (from 0) is handled by scripts[n](call, messages), the last
 * script handling every stream after; `messages` collects what the bot sent on that stream.
 * A script may write a ServerMessage as an object or as its bytes.
 */
async function scriptedServer(address, scripts) {
  const server = new grpc.Server();
  const streams = [];
  server.addService(service, {
    Play(call) {
      const messages = [];
      streams.push(messages);
      call.on('data', (message) => messages.push(message));
      call.on('error', () => {});
      scripts[Math.min(streams.length, scripts.length) - 1](call, messages);
    },
  });
  const port = await new Promise((done, fail) =>
    server.bindAsync(address, grpc.ServerCredentials.createInsecure(), (error, bound) =>
      error ? fail(error) : done(bound),
    ),
  );
  return { server, streams, address: address.startsWith('unix:') ? address : `127.0.0.1:${port}` };
}

/** Resolves once `messages` holds `count` of them. */
const waitFor = (messages, count) =>
  new Promise((done) => {
    const poll = () => (messages.length >= count ? done() : setTimeout(poll, 5));
    poll();
  });

/**
 * The observation of a Belote seat's first request in the first deal's first bidding round,
 * before anyone took (its first five cards, sorted by the engine's card index, and the turned
 * card), as dealt from `seed` (a BigInt, or anything BigInt() takes) with `settings`.
 */
function firstObservation(seed, seat, settings = null) {
  const { dealSettings, startShown } = require('../lib/deal');
  const shown = startShown('belote', dealSettings('belote', settings), BigInt(seed), seat);
  const order = (card) =>
    ['SPADES', 'HEARTS', 'DIAMONDS', 'CLUBS'].indexOf(card.suit.slice(5)) * 8 +
    ['SEVEN', 'EIGHT', 'NINE', 'TEN', 'JACK', 'QUEEN', 'KING', 'ACE'].indexOf(card.rank.slice(5));
  const dealt = shown.find((event) => event.belote.cards_dealt).belote.cards_dealt.cards;
  return {
    seat,
    phase: 'PHASE_BIDDING_ROUND_1',
    hand: [...dealt].sort((a, b) => order(a) - order(b)),
    turned_card: shown.find((event) => event.belote.card_turned).belote.card_turned.card,
  };
}

module.exports = { firstObservation, scriptedServer, waitFor };
