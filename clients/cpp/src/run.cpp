#include "bisca/client/run.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>

#include "bisca/client/log.h"
#include "bisca/client/session.h"
#include "bisca/v1/arena.grpc.pb.h"
#include "text.h"
#include "tls.h"

namespace bisca::client {
namespace {

using detail::cat;
using detail::Target;
using Clock = std::chrono::steady_clock;

constexpr const char* kAddressVariable = "BISCA_ADDRESS";
constexpr const char* kTokenVariable = "BISCA_TOKEN";

/// The channel options of every bot connection, as in the Python and Node SDKs (the server
/// accepts a ping every second at most).  In gRPC core the keepalive timeout is the ping
/// timeout, so there is no separate ping_timeout option to set.
grpc::ChannelArguments channel_arguments() {
  grpc::ChannelArguments arguments;
  // Notice a dead or frozen server: ping every 10 s, give up on a ping after 5 s.
  arguments.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 10'000);
  arguments.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 5'000);
  // A bot waiting for its turn sends no data for a long time: keep pinging anyway.
  arguments.SetInt(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
  arguments.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  // Several bots in one process each get their own connection, not one shared subchannel.
  arguments.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  return arguments;
}

/// Transport-level failures, worth a reconnect.  Anything else (UNIMPLEMENTED,
/// INVALID_ARGUMENT, UNAUTHENTICATED, ...) means this server will not talk to this bot, and
/// retrying cannot help.
bool retryable(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::UNAVAILABLE:
    case grpc::StatusCode::CANCELLED:
    case grpc::StatusCode::INTERNAL:
    case grpc::StatusCode::UNKNOWN:
    case grpc::StatusCode::ABORTED:
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return true;
    default:
      return false;
  }
}

const char* status_name(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK: return "OK";
    case grpc::StatusCode::CANCELLED: return "CANCELLED";
    case grpc::StatusCode::UNKNOWN: return "UNKNOWN";
    case grpc::StatusCode::INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case grpc::StatusCode::DEADLINE_EXCEEDED: return "DEADLINE_EXCEEDED";
    case grpc::StatusCode::NOT_FOUND: return "NOT_FOUND";
    case grpc::StatusCode::ALREADY_EXISTS: return "ALREADY_EXISTS";
    case grpc::StatusCode::PERMISSION_DENIED: return "PERMISSION_DENIED";
    case grpc::StatusCode::RESOURCE_EXHAUSTED: return "RESOURCE_EXHAUSTED";
    case grpc::StatusCode::FAILED_PRECONDITION: return "FAILED_PRECONDITION";
    case grpc::StatusCode::ABORTED: return "ABORTED";
    case grpc::StatusCode::OUT_OF_RANGE: return "OUT_OF_RANGE";
    case grpc::StatusCode::UNIMPLEMENTED: return "UNIMPLEMENTED";
    case grpc::StatusCode::INTERNAL: return "INTERNAL";
    case grpc::StatusCode::UNAVAILABLE: return "UNAVAILABLE";
    case grpc::StatusCode::DATA_LOSS: return "DATA_LOSS";
    case grpc::StatusCode::UNAUTHENTICATED: return "UNAUTHENTICATED";
    default: return "UNKNOWN_STATUS";
  }
}

/// The status as a log line or an exception says it: its details are the server's text.
std::string describe(const grpc::Status& status) {
  return cat(status_name(status.error_code()), ": ", printable(status.error_message()));
}

/// An explicit value, else the environment variable, else an error naming both.
std::string resolve(const std::string& value, const char* variable, const char* what) {
  if (!value.empty()) return value;
  const char* from_environment = std::getenv(variable);
  if (from_environment != nullptr && *from_environment != '\0') return from_environment;
  throw std::invalid_argument(cat("no server ", what, " given: set Options::", what, " or the ",
                                  variable, " variable"));
}

/// Cancels a call that gets no Welcome in time, from a thread of its own (the reading thread is
/// blocked in Read(), or in opening the call); stop() once the Welcome came.
class WelcomeWatch {
 public:
  WelcomeWatch(grpc::ClientContext& context, std::chrono::milliseconds timeout)
      : thread_([this, &context, timeout] {
          std::unique_lock<std::mutex> hold(lock_);
          if (!changed_.wait_for(hold, timeout, [this] { return stopped_; })) {
            expired_ = true;
            context.TryCancel();
          }
        }) {}
  WelcomeWatch(const WelcomeWatch&) = delete;
  WelcomeWatch& operator=(const WelcomeWatch&) = delete;
  ~WelcomeWatch() {
    stop();
    thread_.join();
  }

  void stop() {
    {
      const std::lock_guard<std::mutex> hold(lock_);
      stopped_ = true;
    }
    changed_.notify_all();
  }
  bool expired() {
    const std::lock_guard<std::mutex> hold(lock_);
    return expired_;
  }

 private:
  std::mutex lock_;
  std::condition_variable changed_;
  bool stopped_ = false;
  bool expired_ = false;
  std::thread thread_;  // last: it starts once the rest is made
};

/// One connection: hello, then every server message until the stream ends; returns how it
/// ended (OK: the server closed it cleanly) and sets `welcomed_at` when the Welcome came.
/// BotRejected passes through.
grpc::Status play_once(const Target& target, const grpc::ChannelArguments& arguments,
                       Session& session, std::chrono::milliseconds welcome_timeout,
                       std::optional<Clock::time_point>& welcomed_at) {
  const std::string& address = target.address;
  const auto channel = grpc::CreateCustomChannel(target.dial, target.credentials, arguments);
  const auto stub = pb::Arena::NewStub(channel);
  grpc::ClientContext context;
  WelcomeWatch watch(context, welcome_timeout);  // before the call: opening it may hang too
  const auto stream = stub->Play(&context);
  // Sent at once: the server allows 10 s for it.  A failed write needs no check here: the
  // read below then ends and Finish() says why.
  stream->Write(session.hello());
  pb::ServerMessage message;
  try {
    while (stream->Read(&message)) {
      for (const pb::BotMessage& reply : session.handle(message)) {
        if (!stream->Write(reply)) break;  // the stream is going away; Read() says how next
      }
      if (!welcomed_at && session.welcomed()) {
        welcomed_at = Clock::now();
        watch.stop();
      }
    }
  } catch (...) {
    // A fatal Error: the server closes the stream anyway; end our side now and pass it on.
    context.TryCancel();
    stream->Finish();
    throw;
  }
  const grpc::Status status = stream->Finish();
  if (!session.welcomed() && watch.expired()) {
    const double seconds = welcome_timeout.count() / 1000.0;
    log(LogLevel::warn, cat("no Welcome from ", address, " within ", seconds,
                            " s (a server that never speaks, or not a Bisca server); dropping "
                            "this connection"));
    return grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED,
                        cat("no Welcome from the server within ", seconds, " s"));
  }
  if (status.ok()) {
    if (session.welcomed()) {
      log(LogLevel::info, "the server closed the stream; done");
    } else {
      log(LogLevel::warn, cat("the server closed the stream to ", address, " without a welcome"));
    }
  }
  return status;
}

}  // namespace

void run(Bot bot, Options options) {
  const std::string address = resolve(options.address, kAddressVariable, "address");
  options.token = resolve(options.token, kTokenVariable, "token");
  const Target target = detail::target_for(address, options);
  Session session(std::move(bot), options);  // refuses a bad configuration before connecting
  const grpc::ChannelArguments arguments = channel_arguments();
  const Backoff& backoff = options.backoff;
  std::optional<Clock::time_point> lost_at;
  std::chrono::milliseconds delay = backoff.initial;
  int dropped = 0;  // connections welcomed, then lost before they proved themselves
  bool ever_welcomed = false;
  for (;;) {
    std::optional<Clock::time_point> welcomed_at;
    const grpc::Status status =
        play_once(target, arguments, session, options.welcome_timeout, welcomed_at);
    if (status.ok()) return;
    const int code = static_cast<int>(status.error_code());
    ever_welcomed = ever_welcomed || welcomed_at.has_value();
    if (const auto refused = target.refusal(status.error_message(), ever_welcomed)) {
      throw ConnectionLost(printable(*refused), code);
    }
    // A connection that stayed up `stable` after its Welcome worked: the delays and the budget
    // start again from this failure.  A Welcome alone proves nothing (see Backoff).
    const Clock::time_point now = Clock::now();
    const bool proved = welcomed_at && now - *welcomed_at >= backoff.stable;
    if (proved || !lost_at) {
      lost_at = now;
      delay = backoff.initial;
      dropped = 0;
    }
    if (welcomed_at && !proved) dropped += 1;
    const std::string failure = describe(status) + printable(target.hint(status.error_message()));
    if (!options.reconnect || !retryable(status.error_code())) {
      throw ConnectionLost(cat("connection to ", address, " failed: ", failure), code);
    }
    if (now - *lost_at + delay > backoff.budget) {
      const std::string welcomes =
          dropped == 0 ? ""
                       : cat(" (the server welcomed the bot ", dropped,
                             " time(s) but dropped the connection within ",
                             backoff.stable.count() / 1000.0, " s each time)");
      throw ConnectionLost(cat("could not reconnect to ", address, " within ",
                               backoff.budget.count() / 1000.0, " s", welcomes, ": ",
                               failure),
                           code);
    }
    log(LogLevel::warn,
        cat("connection to ", address, " failed (", failure, "); reconnecting in ", delay.count(),
            " ms"));
    std::this_thread::sleep_for(delay);
    delay = std::min(delay * 2, backoff.maximum);
  }
}

}  // namespace bisca::client
