// TLS for a bot's connection (the C++ twin of the Python SDK's bisca.client._tls and the Node
// SDK's lib/tls.js): what an address and the files given ask for, and what a failed TLS
// connection means, in words (private to the library).
//
// A connection uses TLS when the address is grpcs://HOST:PORT, or when a CA file or a client
// certificate is given (Options::ca, Options::client_cert + client_key, or $BISCA_CA,
// $BISCA_CLIENT_CERT + $BISCA_CLIENT_KEY).  The server's certificate is verified against the CA
// file, or against the system's root certificates when there is none.  unix: addresses are
// always plaintext: the server serves its unix socket so (it is local, and the sandboxed bots it
// launches connect through one).
//
// gRPC reports every failed connection as UNAVAILABLE, which a bot retries for its whole
// backoff budget; a certificate that cannot be verified will not become valid by retrying, so
// Target::refusal() names the failures of a first connection's handshake and run() stops at
// once.
#pragma once

#include <grpcpp/security/credentials.h>

#include <memory>
#include <optional>
#include <string>

#include "bisca/client/types.h"

namespace bisca::client::detail {

/// Where a bot connects and how.
struct Target {
  std::string address;  // as given (what messages name)
  std::string dial;     // what gRPC connects to: the address without grpcs://
  std::shared_ptr<grpc::ChannelCredentials> credentials;  // insecure ones for plaintext
  bool tls = false;
  // The files given, for messages (empty: not given).
  std::string ca;
  std::string client_cert;
  std::string client_key;

  /// Why a failed connection cannot succeed by retrying (a sentence naming the cause and the
  /// files), or nothing: retry it.  Only before the run's first Welcome: a bot that has played
  /// through this server already retries as after any failure (a server restarting may drop a
  /// connection in the middle of its handshake).  `details` is gRPC's status message.
  std::optional<std::string> refusal(const std::string& details, bool ever_welcomed) const;
  /// A hint for a plaintext connection that a TLS server closed (retried as any other): " (if
  /// the server serves TLS, connect to grpcs://...)", or "".
  std::string hint(const std::string& details) const;
};

/// The connection `address` and the TLS files of `options` (else their environment variables)
/// ask for.  Throws std::invalid_argument naming the file for one that is missing, unreadable
/// or not PEM, for a certificate without its key (or a key without its certificate), and for a
/// grpcs:// unix socket.
Target target_for(const std::string& address, const Options& options);

}  // namespace bisca::client::detail
