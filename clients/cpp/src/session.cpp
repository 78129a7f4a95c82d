#include "bisca/client/session.h"

#include <algorithm>
#include <exception>
#include <optional>
#include <stdexcept>

#include <google/protobuf/util/message_differencer.h>

#include "bisca/client/deal_check.h"
#include "bisca/client/deal_start.h"
#include "bisca/client/log.h"
#include "text.h"

namespace bisca::client {
namespace {

using detail::brief;
using detail::cat;

constexpr std::uint32_t kProtocolVersion = pb::PROTOCOL_VERSION_CURRENT;

/// The phrase in the line about a bot's answer that is not an action of the game, word for word
/// the Python and Node SDKs' too: `bisca check-bot` finds this bug by it in the bot's stderr
/// (server/bisca/server/conformance/_crashes.py), as it finds a `terminate called`, since the
/// fallback sent with keep_going passes every other check.
constexpr const char* kNotAnAction = "which is not an action of the game";

/// What the exception being handled says: its what(), or that it is not a std::exception.
std::string current_exception_text() {
  try {
    throw;
  } catch (const std::exception& error) {
    return error.what();
  } catch (...) {
    return "(an exception that is not a std::exception)";
  }
}


const pb::SeatResult* result_of(const pb::MatchEnded& ended) {
  for (const pb::SeatResult& result : ended.seats()) {
    if (result.seat() == ended.seat()) return &result;
  }
  return nullptr;
}

}  // namespace

// ---- an open request's rejections ---------------------------------------------------------

void Session::OpenRequest::index_legal() {
  distinct.clear();
  distinct_keys.clear();
  std::unordered_set<std::string> seen;
  const auto& legal = request.legal_actions();
  for (int index = 0; index < legal.size(); ++index) {
    std::string key = legal.Get(index).SerializeAsString();
    if (!seen.insert(key).second) continue;
    distinct.push_back(index);
    distinct_keys.push_back(std::move(key));
  }
}

std::size_t Session::OpenRequest::footprint() const {
  std::size_t bytes = request.message.SpaceUsedLong() + distinct.capacity() * sizeof(int);
  const auto& legal = request.legal_actions();
  for (std::size_t index = 0; index < distinct.size(); ++index) {
    // The key, and the room for the action and its key once it is rejected.
    bytes += 2 * (sizeof(std::string) + distinct_keys[index].size()) +
             legal.Get(distinct[index]).SpaceUsedLong();
  }
  for (const pb::GameAction& action : request.rejected) bytes += action.SpaceUsedLong();
  for (const std::string& key : rejected_keys) bytes += sizeof(std::string) + key.size();
  return bytes;
}

bool Session::OpenRequest::spent() {
  if (!given_up) {
    given_up = rejections > distinct_keys.size() ||
               (rejected_keys.size() >= distinct_keys.size() &&
                std::all_of(distinct_keys.begin(), distinct_keys.end(),
                            [&](const std::string& key) { return rejected_keys.count(key) != 0; }));
  }
  return given_up;
}

bool Session::OpenRequest::was_rejected(const pb::GameAction& action) const {
  return !rejected_keys.empty() && rejected_keys.count(action.SerializeAsString()) != 0;
}

std::optional<pb::GameAction> Session::OpenRequest::fallback() const {
  for (std::size_t index = 0; index < distinct.size(); ++index) {
    if (rejected_keys.count(distinct_keys[index]) == 0) {
      return request.legal_actions().Get(distinct[index]);
    }
  }
  return std::nullopt;
}

std::optional<std::uint64_t> Session::Throttle::allow() {
  const auto now = std::chrono::steady_clock::now();
  if (!begun || now - since >= std::chrono::minutes(1)) {
    begun = true;
    since = now;
    said = 0;
  }
  if (said >= burst) {
    left_out += 1;
    return std::nullopt;
  }
  said += 1;
  const std::uint64_t was = left_out;
  left_out = 0;
  return was;
}

Session::Session(Bot bot, const Options& options)
    : bot_(std::move(bot)),
      token_(options.token),
      name_(options.name),
      version_(options.version.empty() ? "0" : options.version),
      games_(options.games),
      hooks_(options.hooks),
      live_events_(options.live_events),
      keep_going_(options.keep_going) {
  if (!bot_) throw std::invalid_argument("the bot must be a callable");
  if (name_.empty()) throw std::invalid_argument("a bot needs a name (Options::name)");
  if (games_.empty()) throw std::invalid_argument("a bot must play at least one game");
  for (const pb::Game game : games_) {
    if (game != pb::GAME_BELOTE && game != pb::GAME_BESTIA) {
      throw std::invalid_argument(cat("unknown game ", static_cast<int>(game),
                                      "; known: GAME_BELOTE, GAME_BESTIA"));
    }
  }
}

// ---- the bot's callbacks ---------------------------------------------------------------------

void Session::crashed(const std::string& callback, const std::string& where,
                      const std::string& instead) {
  const std::string what = current_exception_text();
  if (keep_going_) {
    log(LogLevel::error, cat(callback, " threw", where, "; keep_going: ", instead, ": ", what));
    return;
  }
  log(LogLevel::error, cat(callback, " threw", where,
                           "; ending the bot (with Options::keep_going it would go on): ", what));
  // `where` names the server's request and match ids.
  throw BotCrashed(cat(callback, " threw", printable(where), ": ", what));
}

/// Calls a hook if there is one (an exception in it: see crashed()).
template <typename Hook, typename... Args>
void Session::call_hook(const char* name, const Hook& hook, const Args&... args) {
  if (!hook) return;
  try {
    hook(args...);
  } catch (...) {
    crashed(cat("the bot's ", name, " hook"), "", "going on");
  }
}

// ---- bounded per-match state ----------------------------------------------------------------

template <typename V>
V& Session::keep(Recent<V>& table, const SeatKey& key, V value, std::size_t cost,
                 const char* what) {
  V& kept = table.put(key, std::move(value), cost);
  trim(table, what);
  return kept;  // (trim never forgets the most recent entry)
}

template <typename V>
void Session::trim(Recent<V>& table, const char* what) {
  while (table.size() > 1 && (table.size() > kMaxMatches || table.bytes() > kMaxKeptBytes)) {
    const bool crowded = table.size() > kMaxMatches;
    const SeatKey oldest = table.pop_oldest();
    std::uint64_t& count = crowded ? forgotten_ : outgrown_;
    count += 1;
    if (count == 1) {
      log(LogLevel::warn,
          cat(crowded ? cat("more than ", kMaxMatches, " matches open at once (does the server "
                            "never end them?)")
                      : cat("more than ", kMaxKeptBytes >> 20, " MiB kept for open matches in "
                            "one table (does the server send that much, or never end them?)"),
              ": forgetting ", what, " (match ", oldest.first, ", seat ", oldest.second,
              "), the least recently active one, and so on for the next ones without a word"));
    } else {
      log(LogLevel::debug, cat("forgetting ", what, " (match ", oldest.first, ", seat ",
                               oldest.second, ")"));
    }
  }
}

// ---- the conversation ----------------------------------------------------------------------

pb::BotMessage Session::hello() {
  welcomed_ = false;
  open_.clear();
  started_.clear();
  strangers_.clear();
  early_.clear();
  pb::BotMessage message;
  pb::Hello* hello = message.mutable_hello();
  hello->set_token(token_);
  hello->set_bot_name(name_);
  hello->set_bot_version(version_);
  hello->set_protocol_version(kProtocolVersion);
  for (const pb::Game game : games_) hello->add_games(game);
  hello->set_live_events(live_events_);
  return message;
}

std::vector<pb::BotMessage> Session::handle(const pb::ServerMessage& message) {
  switch (message.kind_case()) {
    case pb::ServerMessage::kWelcome: return on_welcome(message.welcome());
    case pb::ServerMessage::kMatchStarted: return on_match_started(message.match_started());
    case pb::ServerMessage::kEvents: return on_events(message.events());
    case pb::ServerMessage::kActionRequest: return on_action_request(message.action_request());
    case pb::ServerMessage::kActionRejected:
      return on_action_rejected(message.action_rejected());
    case pb::ServerMessage::kMatchEnded: return on_match_ended(message.match_ended());
    case pb::ServerMessage::kError: return on_error(message.error());
    case pb::ServerMessage::KIND_NOT_SET: break;
  }
  log(LogLevel::warn, "ignoring an empty message from the server");
  return {};
}

// ---- one handler per message kind ------------------------------------------------------------

std::vector<pb::BotMessage> Session::on_welcome(const pb::Welcome& welcome) {
  welcomed_ = true;
  registered_name_ = welcome.bot_name();
  connection_id_ = welcome.connection_id();
  log(LogLevel::info, cat("welcomed as \"", welcome.bot_name(), "\" by server ",
                          welcome.server_version().empty() ? "?" : welcome.server_version(),
                          " (connection ", welcome.connection_id(), ")"));
  return {};
}

std::vector<pb::BotMessage> Session::on_match_started(const pb::MatchStarted& started) {
  std::string bots;
  for (const pb::SeatInfo& seat : started.seats()) {
    bots += (bots.empty() ? "" : ", ") + seat.bot_name();
  }
  log(LogLevel::info, cat("match ", started.match_id(), started.resumed() ? " resumed: " : " started: ",
                          pb::Game_Name(started.game()), ", seat ", started.seat(), ", bots ", bots));
  remember_commitment(started);
  keep(started_, {started.match_id(), started.seat()}, true, 0, "a start");
  call_hook("on_match_start", hooks_.on_match_start, started);
  return {};
}

std::vector<pb::BotMessage> Session::on_events(const pb::EventBatch& batch) {
  deliver(batch.match_id(), batch.seat(), batch.events());
  return {};
}

void Session::deliver(const std::string& match_id, std::uint32_t seat,
                      const google::protobuf::RepeatedPtrField<pb::GameEvent>& events) {
  const SeatKey key{match_id, seat};
  if (Commitment* commitment = commitments_.find(key); commitment != nullptr) {
    bool changed = false;
    for (const pb::GameEvent& event : events) {
      const std::optional<std::size_t> took = show(*commitment, event);
      if (!took) continue;
      changed = true;
      commitments_.recost(key, 0, *took);
    }
    if (changed) {
      commitments_.touch(key);
      trim(commitments_, "a deal commitment");
    }
  } else if (!events.empty() && !started_.contains(key)) {
    before_start(key);
  }
  if (!hooks_.on_event) return;
  for (const pb::GameEvent& event : events) {
    call_hook("on_event", hooks_.on_event, match_id, seat, event);
  }
}

std::optional<std::size_t> Session::show(Commitment& commitment, const pb::GameEvent& event) {
  std::optional<std::size_t> took;
  const std::uint32_t index = event.index();
  // The copy kept: unknown fields discarded (a field the SDK does not know cannot have fooled
  // the bot, and a newer, honest server may add one), or only the size of one far bigger than
  // any event of a start (so not the one the seed deals).
  const auto copy = [](const pb::GameEvent& sent, std::size_t bytes) {
    std::optional<pb::GameEvent> kept;
    if (bytes <= kMostKeptEventBytes) {
      kept.emplace(sent);
      kept->DiscardUnknownFields();
    }
    return kept;
  };
  const std::size_t bytes = event.SpaceUsedLong();
  if (commitment.game == pb::GAME_BESTIA && event.has_bestia()) {
    // The first hand lasts until a HandStarted of another index than the first one's (an
    // identical copy of it is a replay); its first HandLooked is kept, whatever its index.
    if (event.bestia().has_hand_started()) {
      if (!commitment.first_hand) {
        commitment.first_hand = index;
      } else if (*commitment.first_hand != index) {
        commitment.later_hand = true;
      }
    }
    if (event.bestia().has_hand_looked() && !commitment.later_hand && !commitment.looked &&
        commitment.looked_too_big == 0) {
      commitment.looked = copy(event, bytes);
      if (commitment.looked) {
        took = commitment.looked->SpaceUsedLong();
      } else {
        commitment.looked_too_big = bytes;
        took = 0;
      }
    }
  }
  if (index >= kKeptEvents) return took;
  std::size_t more = took.value_or(0);
  std::optional<pb::GameEvent> kept = copy(event, bytes);
  const auto first = commitment.shown.find(index);
  const auto big = commitment.too_big.find(index);
  if (first == commitment.shown.end() && big == commitment.too_big.end()) {
    // The first copy of the index: the one kept (the bot saw it first).
    if (kept) {
      more += commitment.shown.emplace(index, std::move(*kept)).first->second.SpaceUsedLong();
    } else {
      commitment.too_big.emplace(index, bytes);
    }
    return more;
  }
  // Another copy: the same content (a replay) changes nothing; other content fails the check.
  // (Only the size of a copy too big to keep is known: it is never the same content.)
  const bool same = kept && first != commitment.shown.end() &&
                    google::protobuf::util::MessageDifferencer::Equals(first->second, *kept);
  if (!same && !commitment.resent) commitment.resent = index;
  return more;
}

void Session::before_start(const SeatKey& key) {
  if (early_.contains(key)) {
    early_.touch(key);
  } else {
    keep(early_, key, true, 0, "a request or events before their start");
  }
}

std::vector<pb::BotMessage> Session::on_action_request(const pb::ActionRequest& message) {
  deliver(message.match_id(), message.seat(), message.events());
  const SeatKey key{message.match_id(), message.seat()};
  if (Commitment* commitment = commitments_.find(key); commitment != nullptr) {
    if (!commitment->asked && commitment->game == pb::GAME_BELOTE) {
      // The seat's first request comes in deal 0, before it played any card: its hand and
      // turned card are what the seed deals (deal_start.h).  Kept without the rest (or its
      // unknown fields).
      pb::GameObservation view;
      if (message.observation().has_belote()) {
        const pb::belote::Observation& seen = message.observation().belote();
        pb::belote::Observation* kept = view.mutable_belote();
        *kept->mutable_hand() = seen.hand();
        if (seen.has_turned_card()) *kept->mutable_turned_card() = seen.turned_card();
        if (seen.has_taker()) kept->set_taker(seen.taker());  // (whose is the turned card)
        view.DiscardUnknownFields();
      }
      const std::size_t bytes = view.SpaceUsedLong();
      if (bytes <= kMostKeptEventBytes) {
        commitment->first_view = std::move(view);
        commitments_.recost(key, 0, bytes);
      } else {
        commitment->first_view_too_big = bytes;
      }
    } else if (commitment->game == pb::GAME_BESTIA && message.observation().has_bestia() &&
               message.observation().bestia().looked() && !commitment->first_view &&
               commitment->first_view_too_big == 0) {
      // The seat's first request after it looked at its cards: in the first hand, before it
      // exchanged or played, its hand is its look (deal_start.h).  Kept with what says whether
      // it is compared (its hand's number, the exchanges, the tricks' plays), without unknown
      // fields; only the size of one too big to be an honest one (under a kilobyte).
      const pb::bestia::Observation& seen = message.observation().bestia();
      const std::size_t sent = seen.ByteSizeLong();
      if (sent <= kMostKeptEventBytes) {
        pb::GameObservation view;
        pb::bestia::Observation* kept = view.mutable_bestia();
        kept->set_hand_number(seen.hand_number());
        *kept->mutable_hand() = seen.hand();
        for (const pb::bestia::Exchanged& exchange : seen.exchanges()) {
          kept->add_exchanges()->set_seat(exchange.seat());
        }
        for (const pb::bestia::Trick& trick : seen.tricks()) {
          pb::bestia::Trick* plays = kept->add_tricks();
          for (const pb::bestia::CardPlayed& play : trick.plays()) {
            plays->add_plays()->set_seat(play.seat());
          }
        }
        view.DiscardUnknownFields();
        const std::size_t bytes = view.SpaceUsedLong();
        commitment->first_view = std::move(view);
        commitments_.recost(key, 0, bytes);
      } else {
        commitment->first_view_too_big = sent;
      }
    }
    commitment->asked = true;
    commitments_.touch(key);
    trim(commitments_, "a deal commitment");
  } else if (!started_.contains(key)) {
    before_start(key);
  }
  OpenRequest* previous = open_.find(key);
  const bool same = previous != nullptr && previous->request.request_id() == message.request_id();
  if (same && message.attempt() <= previous->request.attempt) {
    // The server's copy of a request the session already answered after a rejection.
    log(LogLevel::debug, cat("request ", message.request_id(), " attempt ", message.attempt(),
                             " already answered"));
    return {};
  }
  const pb::Game game = game_of(message.observation());
  if (game == pb::GAME_UNSPECIFIED) {
    log(LogLevel::error, cat("cannot read request ", message.request_id(), " of match ",
                             message.match_id(), ": no observation of a known game"));
    return {};
  }
  if (message.legal_actions().empty()) {
    // The server's fault, not the bot's: a bot handed no action to pick would fail (index an
    // empty list) and be blamed for it.  Nothing is answered either: any action would be an
    // illegal one, and the referee's clock decides what happens to a seat that does not answer.
    log(LogLevel::error, cat("request ", message.request_id(), " of match ", message.match_id(),
                             " (seat ", message.seat(), ") from the server has no legal actions; "
                             "the bot is not asked and nothing is answered"));
    return {};
  }
  const pb::GameObservation& observation = message.observation();
  const std::uint32_t seen =
      observation.has_belote() ? observation.belote().seat() : observation.bestia().seat();
  if (seen != message.seat()) {
    // The server's fault again: a bot handed seat 3's request with seat 1's view of the table
    // would answer for one seat what it sees as another, or fail on state it keeps per seat.
    // Not asked, not answered: the referee's clock decides.
    log(LogLevel::error, cat("request ", message.request_id(), " of match ", message.match_id(),
                             " from the server is for seat ", message.seat(),
                             " but its observation is seat ", seen,
                             "'s; the bot is not asked and nothing is answered"));
    return {};
  }
  if (started_.contains(key)) {
    started_.touch(key);
  } else if (!strangers_.contains(key)) {
    // Answered all the same, after one warning per (match, seat): only a broken or hostile
    // server sends this, and the answer goes only to the server that asked; not answering would
    // cost the seat its clock, a whole match when the start was merely forgotten here (past
    // kMaxMatches).  A bot that keeps state per match from on_match_start must expect it.
    keep(strangers_, key, true, 0, "a request without a start");
    log(LogLevel::warn,
        cat("request ", message.request_id(), " of match ", message.match_id(), " for seat ",
            message.seat(), ", though this connection had no start of that match for that "
            "seat; answering it all the same (said once per match and seat)"));
  }
  Request request;
  request.message = message;
  request.game = game;
  request.attempt = std::max<std::uint32_t>(message.attempt(), 1);
  OpenRequest fresh;
  fresh.request = std::move(request);
  if (same) {
    // The same request again (after a rejection or a reconnect): what was refused stays
    // refused, and a spent request stays spent.
    fresh.request.rejected = std::move(previous->request.rejected);
    fresh.rejected_keys = std::move(previous->rejected_keys);
    fresh.rejections = previous->rejections;
    fresh.given_up = previous->given_up;
    fresh.ignoring = previous->ignoring;
  }
  fresh.index_legal();
  const std::size_t cost = fresh.footprint();
  OpenRequest& entry = keep(open_, key, std::move(fresh), cost, "an open request");
  if (entry.given_up) {
    log(LogLevel::debug, cat("request ", message.request_id(), " is spent: not answered again"));
    return {};
  }
  return answer(entry);
}

std::vector<pb::BotMessage> Session::on_action_rejected(const pb::ActionRejected& message) {
  OpenRequest* entry = open_.find({message.match_id(), message.seat()});
  if (entry != nullptr && entry->request.request_id() != message.request_id()) entry = nullptr;
  if (entry != nullptr && entry->spent()) {
    // Nothing is left to try: answering again (or even looking at the legal list) would only
    // turn each tiny rejection into work.
    log(entry->ignoring ? LogLevel::debug : LogLevel::warn,
        cat("request ", message.request_id(), " of match ", message.match_id(),
            ": rejected again with nothing left to try (every legal action or attempt was "
            "rejected); ignoring its further rejections"));
    entry->ignoring = true;
    return {};
  }
  const pb::GameAction* sent = entry != nullptr && entry->sent ? &*entry->sent : nullptr;
  const std::optional<std::uint64_t> left_out =
      entry != nullptr ? std::optional<std::uint64_t>(0) : unknown_rejections_.allow();
  log(left_out ? LogLevel::warn : LogLevel::debug,
      cat("request ", message.request_id(), " of match ", message.match_id(), ": ",
          sent != nullptr ? brief(*sent) : "(an unknown answer)", " rejected (",
          pb::RejectCode_Name(message.code()), "): ", message.message(), "; ",
          message.attempts_left(), " attempt(s) left",
          left_out && *left_out != 0 ? cat(" (", *left_out, " such warning(s) left out)") : ""));
  call_hook("on_rejected", hooks_.on_rejected, message, sent);
  if (entry == nullptr) return {};
  entry->rejections += 1;
  if (entry->sent) {
    // (A second rejection with no answer between refuses nothing new.)
    if (entry->rejected_keys.insert(entry->sent->SerializeAsString()).second) {
      entry->request.rejected.push_back(*entry->sent);
    }
    entry->sent.reset();
  }
  if (message.attempts_left() == 0) {
    entry->given_up = true;  // (no request follows: the referee's timeout policy applies)
    return {};
  }
  if (entry->spent()) {
    log(LogLevel::error,
        cat("request ", message.request_id(), ": ",
            entry->rejections <= entry->distinct_keys.size()
                ? std::string("every legal action was rejected")
                : cat(entry->rejections, " rejections for ", entry->distinct_keys.size(),
                      " distinct legal action(s)"),
            "; leaving it to the referee"));
    return {};
  }
  entry->request.attempt += 1;
  return answer(*entry);
}

std::vector<pb::BotMessage> Session::on_match_ended(const pb::MatchEnded& ended) {
  deliver(ended.match_id(), ended.seat(), ended.events());
  open_.erase_match(ended.match_id());
  started_.erase({ended.match_id(), ended.seat()});
  strangers_.erase({ended.match_id(), ended.seat()});
  early_.erase({ended.match_id(), ended.seat()});
  const pb::SeatResult* mine = result_of(ended);
  log(LogLevel::info,
      cat("match ", ended.match_id(), " ", pb::MatchStatus_Name(ended.status()),
          ended.reason().empty() ? "" : " (" + ended.reason() + ")",
          // The protocol's rank counted from 1 (the hook's MatchEnded keeps it from 0): "rank
          // 3" is a losing Belote team's seat; Bisca's own screens say its place by sides.
          mine == nullptr ? ""
                          : cat(": seat ", mine->seat(), " scored ", mine->score(), ", rank ",
                                mine->rank() + 1)));
  const DealCheck deal = check_and_log_deal(ended);
  call_hook("on_match_end", hooks_.on_match_end, ended, deal);
  return {};
}

std::vector<pb::BotMessage> Session::on_error(const pb::Error& error) {
  const std::string code = pb::ErrorCode_Name(error.code());
  if (error.fatal()) {
    log(LogLevel::error, cat("fatal error from the server: ", code, ": ", error.message()));
    throw BotRejected(code, error.message());
  }
  std::string where;
  if (!error.match_id().empty()) where += " (match " + error.match_id() + ")";
  if (!error.request_id().empty()) where += " (request " + error.request_id() + ")";
  log(LogLevel::warn, cat("error from the server", where, ": ", code, ": ", error.message()));
  return {};
}

// ---- answering -------------------------------------------------------------------------------

std::vector<pb::BotMessage> Session::answer(OpenRequest& entry) {
  const Request& request = entry.request;
  std::optional<pb::GameAction> action = choose(entry);
  if (!action) {
    log(LogLevel::error, cat("request ", request.request_id(),
                             ": every legal action was rejected; leaving it to the referee"));
    entry.sent.reset();
    entry.given_up = true;
    return {};
  }
  log(LogLevel::debug,
      cat("request ", request.request_id(), " attempt ", request.attempt, ": ", brief(*action)));
  pb::BotMessage reply;
  reply.mutable_action()->set_request_id(request.request_id());
  *reply.mutable_action()->mutable_action() = *action;
  entry.sent = std::move(action);
  return {std::move(reply)};
}

std::optional<pb::GameAction> Session::choose(const OpenRequest& entry) {
  const Request& request = entry.request;
  const std::string where = cat(" on request ", request.request_id(), " (match ",
                                request.match_id(), ", seat ", request.seat(), ")");
  pb::GameAction action;
  try {
    action = bot_(request);
  } catch (...) {
    crashed("the bot", where, "sending a legal action instead");
    return entry.fallback();
  }
  if (game_of(action) != request.game) {
    // An empty GameAction (a path of the bot that returns `{}`), the other game's, or one
    // whose action is unset: a bug as an exception is, under the same keep_going rule.
    const std::string answered = brief(action);
    const std::string line =
        cat("request ", request.request_id(), " (match ", request.match_id(), ", seat ",
            request.seat(), "): the bot answered ", answered, ", ", kNotAnAction, " (",
            action.game_case() == pb::GameAction::GAME_NOT_SET
                ? "an empty GameAction: does every path of the bot return one of "
                  "request.legal_actions()?"
                : cat("the request is ", pb::Game_Name(request.game), "'s"),
            ")");
    if (!keep_going_) {
      log(LogLevel::error,
          cat(line, "; ending the bot (with Options::keep_going it would go on)"));
      throw BotCrashed(cat("the bot answered ", answered, printable(where), ", ", kNotAnAction));
    }
    log(LogLevel::error, cat(line, "; keep_going: sending a legal action instead"));
    return entry.fallback();
  }
  if (entry.was_rejected(action)) {
    std::optional<pb::GameAction> instead = entry.fallback();
    log(LogLevel::warn, cat("request ", request.request_id(), ": the bot repeated the rejected ",
                            brief(action), "; sending ", instead ? brief(*instead) : "nothing",
                            " instead"));
    return instead;
  }
  return action;
}

// ---- the deal -------------------------------------------------------------------------------

void Session::remember_commitment(const pb::MatchStarted& started) {
  // A start without a commitment leaves nothing to check, and changes nothing kept.
  if (started.deal_commitment().empty()) return;
  const SeatKey key{started.match_id(), started.seat()};
  Commitment* known = commitments_.find(key);
  if (known == nullptr) {
    Commitment commitment;
    commitment.digest = started.deal_commitment();
    commitment.game = started.game();
    commitment.settings = started.settings();
    // A resumed start first: the seat was shown what this session does not know (a bot that
    // restarted, or a commitment forgotten past the bounds).  Requests or events before the
    // start: the bot was shown what no commitment covered.
    commitment.resumed = started.resumed();
    commitment.early = early_.contains(key);
    early_.erase(key);
    const std::size_t cost = commitment.digest.size() + commitment.settings.SpaceUsedLong();
    keep(commitments_, key, std::move(commitment), cost, "a deal commitment");
    return;
  }
  // The first commitment stays the one checked: a server that changes its deal mid-match must
  // not get to choose, after the fact, the seed it is judged by.
  if (known->digest != started.deal_commitment()) {
    log(LogLevel::error, cat("match ", started.match_id(), ": the resumed start commits to "
                             "another deal (", hex(started.deal_commitment()), ") than the first "
                             "start did (", hex(known->digest), "); the deal cannot be trusted"));
    known->changed = true;
  }
  commitments_.touch(key);
}

DealCheck Session::check_and_log_deal(const pb::MatchEnded& ended) {
  const SeatKey key{ended.match_id(), ended.seat()};
  Commitment* found = commitments_.find(key);
  if (found == nullptr) {
    log(LogLevel::info, cat("match ", ended.match_id(), ": no deal commitment to check"));
    return DealCheck::not_committed;
  }
  const Commitment commitment = std::move(*found);
  commitments_.erase(key);
  const std::string& digest = commitment.digest;
  switch (check_deal(digest, ended)) {
    case DealCheck::sealed:
      log(LogLevel::info, cat("match ", ended.match_id(),
                              ": the deal stays sealed while a match dealt from the same seed is "
                              "played; check it later from the match's log"));
      return DealCheck::sealed;
    case DealCheck::mismatch:
      log(LogLevel::error,
          cat("match ", ended.match_id(), ": DEAL CHECK FAILED: MatchStarted committed to ",
              hex(digest), " but the revealed salt ",
              ended.deal_salt().empty() ? "(none)" : hex(ended.deal_salt()), " and seed ",
              ended.seed(), " hash to ",
              hex(deal_commitment(ended.deal_salt(), ended.seed(), ended.match_id())),
              ": the cards dealt were not the ones committed to"));
      return DealCheck::mismatch;
    case DealCheck::verified:
    case DealCheck::rigged:          // (the hash alone never says these two: a commitment was
    case DealCheck::not_committed:   // kept, and check_deal knows nothing of the start)
      break;
  }
  if (commitment.changed) {
    log(LogLevel::error, cat("match ", ended.match_id(), ": DEAL CHECK FAILED: a resumed start "
                             "committed to another deal than the first start did (", hex(digest),
                             ")"));
    return DealCheck::mismatch;
  }
  return check_start(ended, commitment);
}

DealCheck Session::check_start(const pb::MatchEnded& ended, const Commitment& commitment) {
  const std::string& match = ended.match_id();
  const std::uint64_t seed = ended.seed();
  const std::uint32_t seat = ended.seat();
  const auto rigged = [&](const std::string& why) {
    log(LogLevel::error, cat("match ", match, ": DEAL NOT VERIFIED: the cards were not dealt from "
                             "the seed the server committed to (", seed, "): ", why));
    return DealCheck::rigged;
  };
  if (commitment.early) {
    log(LogLevel::error, cat("match ", match, ": DEAL NOT VERIFIED: the server sent seat ", seat,
                             "'s requests or events before its start: the deal cannot be "
                             "trusted"));
    return DealCheck::rigged;
  }
  std::optional<std::string> why;
  try {
    // The seat next: one the table does not have was shown no card of the start (nothing would
    // be compared), whatever else the server did.  (Settings that make no match: said below,
    // when there is something to compare.)
    why = seat_outside(commitment.game, commitment.settings, seat);
  } catch (const std::invalid_argument&) {
  }
  if (why) {
    log(LogLevel::error, cat("match ", match, ": DEAL NOT VERIFIED: the deal cannot be checked: ",
                             *why));
    return DealCheck::rigged;
  }
  if (commitment.resumed) {
    log(LogLevel::info, cat("match ", match, ": its start was not seen from the beginning (a "
                            "resumed start came first): the deal cannot be checked"));
    return DealCheck::not_committed;
  }
  const std::string committed = cat("match ", match, ": deal verified: SHA-256(salt, seed ", seed,
                                    ", match id) is the commitment ", hex(commitment.digest));
  const bool looked = commitment.looked || commitment.looked_too_big != 0;
  if (commitment.shown.empty() && commitment.too_big.empty() && !looked && !commitment.asked) {
    log(LogLevel::info, committed + ", and the seat was shown nothing of the deal");
    return DealCheck::verified;
  }
  try {
    seat_outside(commitment.game, commitment.settings, seat);  // (the settings make a match)
    if (commitment.resent) {
      return rigged(cat("event ", *commitment.resent, " was sent twice, with different content"));
    }
    why = start_dealt_from(commitment.game, commitment.settings, seed, seat, commitment.shown,
                           commitment.too_big);
    if (!why && commitment.looked_too_big != 0) {
      why = cat("the cards seat ", seat, " looked at are not what seed ", seed,
                " deals: an event of ", commitment.looked_too_big, " bytes was sent");
    } else if (!why && commitment.looked) {
      why = looked_dealt_from(commitment.settings, seed, seat, *commitment.looked);
    }
    if (!why && commitment.first_view_too_big != 0) {
      why = cat("the hand in seat ", seat, "'s first request is not what seed ", seed,
                " deals: an observation of ", commitment.first_view_too_big, " bytes was sent");
    } else if (!why && commitment.first_view && commitment.first_view->has_bestia()) {
      why = looked_hand_dealt_from(commitment.settings, seed, seat,
                                   commitment.first_view->bestia());
    } else if (!why && commitment.first_view) {
      why = first_hand_dealt_from(commitment.settings, seed, seat, *commitment.first_view);
    }
  } catch (const std::invalid_argument& error) {
    log(LogLevel::error, cat("match ", match, ": DEAL NOT VERIFIED: its start cannot be dealt "
                             "again: ", error.what()));
    return DealCheck::rigged;
  }
  if (why) return rigged(*why);
  log(LogLevel::info, cat(committed, ", and seed ", seed, " deals the start seat ", seat,
                          " was shown"));
  return DealCheck::verified;
}

}  // namespace bisca::client
