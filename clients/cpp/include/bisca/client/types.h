// The values a bot sees and the SDK's errors (the C++ twin of bisca.client's _types.py).
//
// A bot is handed the server's own messages (bisca::v1, generated from proto/ at build time),
// with one wrapper, Request, that adds what only the SDK knows: the attempt as the SDK counts
// it and the actions the referee already refused for this request.  The same types serve both
// games: the game is the oneof member set in the observation and in every legal action.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "bisca/v1/arena.pb.h"

namespace bisca::client {

namespace pb = ::bisca::v1;

/// One decision to take: everything a stateless bot needs to answer.
struct Request {
  /// What the server sent: the seat's complete observation, every legal action in the
  /// engine's canonical order, the clock (time left for this move and in the bank).
  pb::ActionRequest message;
  /// GAME_BELOTE or GAME_BESTIA: which member of observation() and of each legal action is set.
  pb::Game game = pb::GAME_UNSPECIFIED;
  /// 1 for a first answer; 2, 3 when the SDK asks again after the referee refused the last one.
  std::uint32_t attempt = 1;
  /// The actions the referee refused for this request so far (empty on attempt 1).
  std::vector<pb::GameAction> rejected;

  const std::string& request_id() const { return message.request_id(); }
  const std::string& match_id() const { return message.match_id(); }
  std::uint32_t seat() const { return message.seat(); }
  const pb::GameObservation& observation() const { return message.observation(); }
  const google::protobuf::RepeatedPtrField<pb::GameAction>& legal_actions() const {
    return message.legal_actions();
  }
  const pb::ClockState& clock() const { return message.clock(); }
  /// The legal actions not rejected yet, in order: what a bot asked again should pick from.
  std::vector<pb::GameAction> remaining_actions() const;
  /// Whether the referee already refused `action` for this request.
  bool was_rejected(const pb::GameAction& action) const;
};

/// A bot: from a request to one of its legal actions (return a copy of one of them).
using Bot = std::function<pb::GameAction(const Request&)>;

/// What the deal check found at a match's end (see deal_check.h and deal_start.h).
enum class DealCheck {
  verified,       // SHA-256(salt || seed || match id) is the commitment MatchStarted made, and
                  // the revealed seed deals the start the seat was shown
  mismatch,       // the hash is not the commitment (or no salt came, or a resumed start
                  // committed to another deal): the seed was not the one committed to
  rigged,         // the hash holds, but what the seat was shown is not what the revealed seed
                  // deals (or the start's game or settings make no match to deal again, the
                  // seat is not one of the table, or the seat was sent requests or events
                  // before its start)
  not_committed,  // MatchStarted carried no commitment (or this session never saw it, or saw
                  // a resumed start first: what the seat was shown before is unknown)
  sealed,         // MatchEnded.deal_sealed: a twin dealt from the same seed is still played
};

/// Optional callbacks, called on the SDK's thread in the order the messages arrive.  A hook
/// that throws ends the bot, as the bot itself does (see Options::keep_going).
struct Hooks {
  std::function<void(const pb::MatchStarted&)> on_match_start;
  /// Every event the seat may see, one call each (match id, seat, event), in order, before the
  /// request or the end that follows it (whether it came alone or inside that message).
  std::function<void(const std::string&, std::uint32_t, const pb::GameEvent&)> on_event;
  std::function<void(const pb::MatchEnded&, DealCheck)> on_match_end;
  /// The rejection and the action it refused (nullptr when the SDK does not know it).
  std::function<void(const pb::ActionRejected&, const pb::GameAction*)> on_rejected;
};

/// Reconnect delays: `initial`, doubling up to `maximum`, for at most `budget` in all since
/// the connection was lost (the Python and Node SDKs' defaults).  A connection that stayed up
/// `stable` after its Welcome proved itself: the next failure starts the delays and the budget
/// again.  A Welcome alone does not, or a server (or a proxy) that welcomes and drops at once
/// would keep the bot reconnecting at the first delay forever.
struct Backoff {
  std::chrono::milliseconds initial{100};
  std::chrono::milliseconds maximum{2000};
  std::chrono::milliseconds budget{30000};
  std::chrono::milliseconds stable{10000};
};

struct Options {
  /// "host:port", "grpcs://host:port" (TLS) or "unix:/path" (always plaintext); empty:
  /// $BISCA_ADDRESS (which `bisca match` sets).
  std::string address;
  /// The bot's token; empty: $BISCA_TOKEN.
  std::string token;
  /// TLS: the PEM file of the CA that signed the server's certificate; empty: $BISCA_CA.
  /// Giving it, or a grpcs:// address, connects with TLS, verified against the system's root
  /// certificates when there is no CA file.
  std::string ca;
  /// The bot's certificate (chain) and private key, PEM, for a server that requires them
  /// (mutual TLS): both or neither; empty: $BISCA_CLIENT_CERT and $BISCA_CLIENT_KEY.  Giving
  /// them connects with TLS too.
  std::string client_cert;
  std::string client_key;
  /// The name and version the Hello gives, for the server's logs (the token decides the
  /// name the bot is registered under).
  std::string name;
  std::string version = "0";
  /// The games the bot plays (at least one).
  std::vector<pb::Game> games = {pb::GAME_BELOTE};
  Hooks hooks;
  /// false (the default, protocol version 2): a seat's events come inside its next
  /// ActionRequest or its MatchEnded, one message per decision.  true: the Hello asks for
  /// each step's events as they happen (EventBatch).  Either way hooks.on_event sees every
  /// event, in order, before the request or the end that follows it.
  bool live_events = false;
  /// false (the default): a callback that throws (the bot or a hook) has its what() logged and
  /// ends the bot: run() throws BotCrashed; so does a bot that answers something that is not an
  /// action of the request's game (an empty GameAction, the other game's), logged with "which
  /// is not an action of the game" (what `bisca check-bot` looks for).  true: either is
  /// logged, with a line saying so on every use, and the session goes on, sending the first
  /// legal action not yet rejected in place of the bot's answer.
  bool keep_going = false;
  /// Reconnect on transport failures (UNAVAILABLE, ...) with `backoff`.
  bool reconnect = true;
  Backoff backoff;
  /// A connection with no Welcome by then is dropped and counts as a failed one (reconnect
  /// with `backoff`, within its budget): a server that accepts the stream and never speaks, or
  /// a port that accepts and never answers, would otherwise keep the bot waiting forever
  /// without a word.  A real server sends the Welcome at once, before any pairing.
  std::chrono::milliseconds welcome_timeout{30000};
};

/// What run() throws when it cannot go on; main() prints what() and exits non-zero.
class Failure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The server refused the bot with a fatal Error (unknown token, unsupported protocol, ...):
/// retrying cannot help.  code() is the ErrorCode's name, e.g. "ERROR_CODE_UNKNOWN_TOKEN".
class BotRejected : public Failure {
 public:
  BotRejected(std::string code, std::string detail);
  const std::string& code() const { return code_; }
  const std::string& detail() const { return detail_; }

 private:
  std::string code_;
  std::string detail_;
};

/// A callback of the bot (the bot itself, or a hook) threw, or the bot answered something that
/// is not an action of the game, and Options::keep_going is off.  what() names the callback
/// and says what it threw (or answered).
class BotCrashed : public Failure {
 public:
  using Failure::Failure;
};

/// The connection failed and could not be re-established (or reconnecting was off).
class ConnectionLost : public Failure {
 public:
  ConnectionLost(const std::string& message, int status_code);
  /// The last gRPC status code (grpc::StatusCode as an int).
  int status_code() const { return status_code_; }

 private:
  int status_code_;
};

/// The Game of a name: "belote" or "bestia" (std::invalid_argument naming the known ones).
pb::Game game_named(const std::string& name);

/// The game an observation or an action is of: GAME_UNSPECIFIED when no game's member is set
/// (and, for an action, when that game's Action names no action: not an action at all).
pb::Game game_of(const pb::GameObservation& observation);
pb::Game game_of(const pb::GameAction& action);

}  // namespace bisca::client
