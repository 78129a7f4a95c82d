// The gRPC plumbing: one Play stream at a time, reconnects, nothing else.
//
// The bot and the hooks are called on the thread that called run(), one server message at a
// time, in the order the server sent them (several matches on one connection are answered in
// turn).  gRPC's synchronous API: a bot is a plain function, and a thread blocked in it is
// exactly what a bot process wants.
//
// Transport failures (the server gone, a reset connection, a peer that stopped answering the
// keepalive pings: UNAVAILABLE, CANCELLED, INTERNAL, UNKNOWN, ABORTED, DEADLINE_EXCEEDED)
// reconnect with exponential backoff and say hello again with the same token; the server gives
// the seats back.  The budget counts from the first failure since the last connection that
// proved itself by staying up Backoff::stable (10 s) after its Welcome, so a bot that
// reconnected once has the whole budget again next time, and a server that welcomes and drops
// at once, again and again, runs it out as one that never answers does.  A connection with no
// Welcome within Options::welcome_timeout (30 s) is dropped and counts as a failed one.
//
// TLS (a grpcs:// address, a CA file, a client certificate: Options::ca, client_cert and
// client_key, or $BISCA_CA, $BISCA_CLIENT_CERT and $BISCA_CLIENT_KEY) only changes the channel's
// credentials; unix: addresses stay plaintext.  A first connection's TLS handshake that cannot
// succeed (a server certificate that cannot be verified, a client certificate refused or
// missing, a peer that does not speak TLS, a file gRPC cannot use) is not retried.
#pragma once

#include "bisca/client/types.h"

namespace bisca::client {

/// Connects `bot` to a Bisca server and plays until the server ends the stream cleanly (how a
/// local match tells its bots to exit): then it returns.  Throws BotRejected on a fatal Error
/// from the server, ConnectionLost when the connection fails and cannot be re-established
/// within the backoff budget (or at once, with reconnect off, on a status that retrying cannot
/// help, or when the first connection's TLS handshake fails: what() names the cause and the
/// files), and std::invalid_argument when no address or token is given, when a TLS file is
/// missing, unreadable or not PEM (what() names it), when a client certificate comes without
/// its key or a key without its certificate, or for a grpcs:// unix socket.
void run(Bot bot, Options options);

}  // namespace bisca::client
