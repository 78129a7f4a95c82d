// The protocol logic of one bot connection, with no network in it (the C++ twin of the Python
// SDK's Session and of clients/node/lib/session.js).
//
// hello() is the first message of a connection; handle(server_message) returns the bot
// messages to send back, calling the bot and its hooks on the way.  It never blocks and never
// touches a socket, so run() (run.h) stays a thin loop that only moves messages.
//
// Rejected answers: when the referee rejects an answer with attempts left, the session asks
// the bot again at once (same request, attempt + 1, the refused actions in Request::rejected).
// An action already rejected for the request is never sent again: the first legal action not
// yet rejected goes instead, so a deterministic bot cannot burn every attempt on one mistake.
// The server also re-sends the request with the higher attempt; that copy is recognised and
// not answered twice.  Each rejection makes the bot think again, so a server could turn a
// stream of tiny rejections into as much work as it likes: the legal actions are deduplicated
// once per request, the rejected ones kept as a set, and once every distinct legal action was
// rejected (or more rejections came than there are distinct legal actions, or the last attempt
// was rejected) the request is spent: its further rejections are ignored (said once, then at
// debug level), the bot and on_rejected are not called for them, nor for a re-sent copy of it.
// Rejections of a request that is not open are warned about at most 10 times a minute.
//
// A callback that throws (the bot or a hook) has a bug: its what() is logged and handle()
// throws BotCrashed, which ends run() and so the bot (a bug hidden behind a legal move would
// pass every check and lose quietly).  With Options::keep_going it is logged on every use, with
// a line saying the session goes on, and the first legal action not yet rejected is sent (a
// hook's exception is only logged).  An answer that is not an action of the request's game (an
// empty GameAction, the other game's) is the same kind of bug under the same rule, logged with
// "which is not an action of the game", the phrase `bisca check-bot` looks for (the Python and
// Node SDKs print it too).  A well-formed action of the game that is not in the legal list is
// sent as it is: the referee decides, and a rejection follows.
//
// A request with no legal actions (the server's fault) is logged as an error and not answered;
// the bot is not asked.
//
// Requests the session did not expect: the server sends a seat's MatchStarted before its first
// request on every connection (a resumed one after a reconnect), so a request for a (match,
// seat) this connection has no start for is the server's slip: it is logged, once per (match,
// seat), and still answered.  A request whose observation is another seat's than the one it
// names cannot be answered sensibly: it is logged as an error and the bot is not asked.
//
// Events: those an ActionRequest or a MatchEnded carries (protocol version 2's default) go to
// on_event before the bot is asked or on_match_end called, as an EventBatch's do.
//
// The deal check: MatchStarted's commitment is kept per (match, seat), across reconnects (a
// resumed start must carry the same one), with what the seat was shown of the first deal: the
// first copy of each of its first kKeptEvents events, whichever message carried them (unknown
// fields discarded; a later copy with other content is remembered as such), Bestia's first
// HandLooked and Belote's first request's hand and turned card.  At MatchEnded the commitment is
// checked against the salt and seed it reveals, and the match's start is dealt again from that
// seed and compared with what the seat was shown (deal_start.h); a failure of either is logged
// as an error and given to on_match_end (DealCheck::mismatch, DealCheck::rigged).  A seat the
// table does not have fails, shown nothing or not; so do requests or events for the seat that
// came before its start on the connection (the commitment covers none of what the bot saw).  A
// commitment first seen on a resumed start is not checked (DealCheck::not_committed): what the
// seat was shown before is unknown here.
//
// Matches that never end: what the session keeps per (match, seat) (the open request, the deal
// commitment with at most kKeptEvents events, the keys sent messages before their start) goes
// when the match ends.  A server that starts matches and never ends them would grow it without
// limit, and so would one that sends big requests (or big events at a match's start) for many
// matches: a message of a few MB on the wire can be ten or twenty times that once parsed, as
// each small nested message becomes an object.  So each such table keeps at most kMaxMatches
// entries and kMaxKeptBytes bytes: past either, the entry that saw no message for the longest
// time is forgotten (the most recent one always stays), and the first time that happens a
// warning says so (the next ones only at debug level).  An event bigger than
// kMostKeptEventBytes is not kept for the deal check, only its size.
//
// Floods: run() reads one message, handles it (calling the bot) and writes the replies before
// it reads the next, so nothing queues in the bot: while it is busy, gRPC takes in at most a
// flow-control window of the stream and HTTP/2 holds the server back.  What a flood can make
// the bot hold is that window, the message in hand and what the tables above keep.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "bisca/client/types.h"

namespace bisca::client {

/// The most (match, seat) entries the session keeps in each of its per-match tables.  A bot
/// plays far fewer seats at once on one connection, so 1,024 is generous; it bounds what a
/// server that never ends its matches can make the bot hold.  Past it the least recently
/// active entry goes (its deal is not checked at the end; a rejection of its request is no
/// longer answered at once, the re-sent request is).
inline constexpr std::size_t kMaxMatches = 1024;

/// The most bytes each of the session's per-match tables keeps (in memory, as protobuf's
/// SpaceUsedLong() counts a message, with the keys and the tables' own nodes).  A real match's
/// entry takes a few KB, so kMaxMatches of them fit; a server that sends big requests or events
/// for many matches makes the least recently active go sooner.  The most recent entry always
/// stays, so one table may hold one message's worth more.
inline constexpr std::size_t kMaxKeptBytes = std::size_t{16} << 20;

/// The most bytes (as kMaxKeptBytes counts them) an event may take to be kept for the deal
/// check: those of a real start take at most about 1.3 KB (Bestia's, seven seats).  A bigger
/// one is not kept, only its size, and it fails the check (DealCheck::rigged) if it has the
/// index of an event the seat is shown at the start: it cannot be the one the seed deals.
inline constexpr std::size_t kMostKeptEventBytes = std::size_t{16} << 10;

class Session {
 public:
  /// Uses the options' token, name, version, games and hooks; std::invalid_argument when the
  /// bot is empty, the name is missing or no game is given.
  Session(Bot bot, const Options& options);

  /// The first message of a (re)connection; forgets the previous connection's open requests
  /// (a reconnected seat gets its open request again).
  pb::BotMessage hello();

  /// The replies to one server message; throws BotRejected on a fatal Error, BotCrashed when a
  /// callback throws (unless Options::keep_going).
  std::vector<pb::BotMessage> handle(const pb::ServerMessage& message);

  /// Set by the server's Welcome on this connection.
  bool welcomed() const { return welcomed_; }
  const std::string& registered_name() const { return registered_name_; }
  const std::string& connection_id() const { return connection_id_; }

 private:
  struct OpenRequest {
    Request request;
    std::optional<pb::GameAction> sent;  // the answer to the current attempt, if any since
                                         // the last rejection
    // The legal actions without repeats (their index and serialized form), in order: what the
    // fallback looks at, and how many rejections can make sense.
    std::vector<int> distinct;
    std::vector<std::string> distinct_keys;
    std::unordered_set<std::string> rejected_keys;  // the refused actions, serialized
    std::uint32_t rejections = 0;  // how many rejections of this request came (answered or not)
    bool given_up = false;         // nothing is left to try (once true, it stays true)
    bool ignoring = false;         // that further rejections are ignored was said (once)

    /// Fills distinct and distinct_keys from request's legal actions.
    void index_legal();
    /// The bytes it holds, with room for the rejected actions to come (at most the distinct
    /// legal actions again), so that rejections need not count again.
    std::size_t footprint() const;
    /// Nothing is left to try: every distinct legal action was rejected, or more rejections
    /// came than there are distinct legal actions (or the last attempt was).
    bool spent();
    bool was_rejected(const pb::GameAction& action) const;
    /// The first distinct legal action not rejected yet, if any.
    std::optional<pb::GameAction> fallback() const;
  };
  /// At most `burst` warnings a minute; allow() says whether this one is a warning (and how
  /// many were left out since the last one) or goes to the debug level.
  struct Throttle {
    static constexpr int burst = 10;
    std::chrono::steady_clock::time_point since{};
    bool begun = false;
    int said = 0;
    std::uint64_t left_out = 0;
    std::optional<std::uint64_t> allow();
  };
  /// A seat's deal commitment as first received, and what dealing again from the revealed
  /// seed must reproduce: the first copy of each event the seat was shown (a later copy that
  /// differs fails the check; an identical one, as a replay after a reconnect, does not), with
  /// unknown fields discarded (a field the SDK does not know cannot have fooled the bot).
  struct Commitment {
    std::string digest;
    pb::Game game = pb::GAME_UNSPECIFIED;  // and its settings, as the start named them
    pb::GameSettings settings;
    std::map<std::uint32_t, pb::GameEvent> shown;  // the first events shown, by index
    // Those of them too big to keep (kMostKeptEventBytes): their size, by index.
    std::map<std::uint32_t, std::size_t> too_big;
    // The first index sent again with other content (or too big once and not the other time).
    std::optional<std::uint32_t> resent;
    // Bestia: the first HandLooked the seat was shown in the first hand (any index), or its
    // size when too big to keep; and the index of the first HandStarted shown (another one
    // ends the first hand).
    std::optional<pb::GameEvent> looked;
    std::size_t looked_too_big = 0;
    std::optional<std::uint32_t> first_hand;
    bool later_hand = false;
    // Belote: the hand and turned card of the first request's observation; Bestia: the hand
    // (its number, exchanges and tricks' plays) of the first request after the seat looked at
    // its cards; or its size when too big to keep.
    std::optional<pb::GameObservation> first_view;
    std::size_t first_view_too_big = 0;
    bool asked = false;    // the seat was asked to act (shown nothing and never asked, as in a
                           // match that failed before its first card, it saw nothing to check)
    bool changed = false;  // a resumed start committed to another deal
    bool resumed = false;  // first seen on a resumed start: what came before is unknown
    bool early = false;    // requests or events of it came before its start (this connection)
  };
  using SeatKey = std::pair<std::string, std::uint32_t>;  // match id, seat

  /// (match, seat) -> V, in the order of each key's last use (put() or touch()), and the bytes
  /// they hold.
  template <typename V>
  class Recent {
   public:
    V* find(const SeatKey& key) {
      const auto found = entries_.find(key);
      return found == entries_.end() ? nullptr : &found->second.value;
    }
    bool contains(const SeatKey& key) const { return entries_.count(key) != 0; }
    /// Makes `key` the most recent entry, if it is there.
    void touch(const SeatKey& key) {
      const auto found = entries_.find(key);
      if (found == entries_.end()) return;
      order_.erase(found->second.clock);
      found->second.clock = ++clock_;
      order_.emplace(clock_, key);
    }
    /// table[key] = value, as the most recent entry; `cost`: the bytes the value holds beyond
    /// its own size (the key's and the nodes' are added here).
    V& put(const SeatKey& key, V value, std::size_t cost) {
      erase(key);
      order_.emplace(++clock_, key);
      Entry entry{clock_, cost + overhead(key), std::move(value)};
      bytes_ += entry.cost;
      return entries_.emplace(key, std::move(entry)).first->second.value;
    }
    /// `key`'s value let go of `less` bytes and took `more` (if it is there).
    void recost(const SeatKey& key, std::size_t less, std::size_t more) {
      const auto found = entries_.find(key);
      if (found == entries_.end()) return;
      std::size_t& cost = found->second.cost;
      less = std::min(less, cost);  // (never below nothing, whatever the caller counted)
      bytes_ = bytes_ - less + more;
      cost = cost - less + more;
    }
    void erase(const SeatKey& key) {
      const auto found = entries_.find(key);
      if (found == entries_.end()) return;
      forget(found);
    }
    /// Erases every entry of a match.
    void erase_match(const std::string& match_id) {
      for (auto entry = entries_.lower_bound({match_id, 0});
           entry != entries_.end() && entry->first.first == match_id;) {
        entry = forget(entry);
      }
    }
    /// The least recent key, removed (the table must not be empty).
    SeatKey pop_oldest() {
      SeatKey key = order_.begin()->second;
      forget(entries_.find(key));
      return key;
    }
    std::size_t size() const { return entries_.size(); }
    std::size_t bytes() const { return bytes_; }
    void clear() {
      entries_.clear();
      order_.clear();
      bytes_ = 0;
    }

   private:
    struct Entry {
      std::uint64_t clock;  // its key in order_
      std::size_t cost;     // the bytes it holds, with its key and nodes
      V value;
    };
    using Entries = std::map<SeatKey, Entry>;
    /// The key (held in both maps, its match id is the server's, of any length) and the nodes.
    static std::size_t overhead(const SeatKey& key) {
      return 2 * (key.first.size() + sizeof(SeatKey) + 4 * sizeof(void*)) + sizeof(Entry);
    }
    typename Entries::iterator forget(typename Entries::iterator found) {
      order_.erase(found->second.clock);
      bytes_ -= found->second.cost;
      return entries_.erase(found);
    }

    Entries entries_;
    std::map<std::uint64_t, SeatKey> order_;
    std::uint64_t clock_ = 0;
    std::size_t bytes_ = 0;
  };

  /// table.put(key, value, cost), then trim(table, what).
  template <typename V>
  V& keep(Recent<V>& table, const SeatKey& key, V value, std::size_t cost, const char* what);
  /// Past kMaxMatches entries or kMaxKeptBytes bytes, the least recent entries are forgotten,
  /// never the most recent one (said once per session for each limit, then at debug level).
  template <typename V>
  void trim(Recent<V>& table, const char* what);

  std::vector<pb::BotMessage> on_welcome(const pb::Welcome& welcome);
  std::vector<pb::BotMessage> on_match_started(const pb::MatchStarted& started);
  std::vector<pb::BotMessage> on_events(const pb::EventBatch& batch);
  std::vector<pb::BotMessage> on_action_request(const pb::ActionRequest& message);
  std::vector<pb::BotMessage> on_action_rejected(const pb::ActionRejected& message);
  std::vector<pb::BotMessage> on_match_ended(const pb::MatchEnded& ended);
  std::vector<pb::BotMessage> on_error(const pb::Error& error);
  void deliver(const std::string& match_id, std::uint32_t seat,
               const google::protobuf::RepeatedPtrField<pb::GameEvent>& events);
  /// Keeps what the deal check needs of `event` (one the seat was shown): the bytes that took,
  /// std::nullopt when the check has no use for it (a later event, past kKeptEvents).
  static std::optional<std::size_t> show(Commitment& commitment, const pb::GameEvent& event);
  /// The key has no start on this connection: remembered, for a commitment that comes later.
  void before_start(const SeatKey& key);

  std::vector<pb::BotMessage> answer(OpenRequest& entry);
  std::optional<pb::GameAction> choose(const OpenRequest& entry);
  void remember_commitment(const pb::MatchStarted& started);
  DealCheck check_and_log_deal(const pb::MatchEnded& ended);
  /// The check of the deal given a commitment whose hash holds, logged when it fails.
  DealCheck check_start(const pb::MatchEnded& ended, const Commitment& commitment);
  template <typename Hook, typename... Args>
  void call_hook(const char* name, const Hook& hook, const Args&... args);
  /// Logs what a callback threw (the exception being handled) and throws BotCrashed, or with
  /// keep_going says that the session goes on.
  void crashed(const std::string& callback, const std::string& where, const std::string& instead);

  Bot bot_;
  std::string token_;
  std::string name_;
  std::string version_;
  std::vector<pb::Game> games_;
  Hooks hooks_;
  bool live_events_ = false;
  bool keep_going_ = false;
  Recent<OpenRequest> open_;
  Recent<Commitment> commitments_;  // kept across reconnects
  // The (match, seat) pairs this connection has a MatchStarted for, and those whose requests
  // without one were warned about: both per connection, both bounded.
  Recent<bool> started_;
  Recent<bool> strangers_;
  // The (match, seat) pairs this connection was sent requests or events for before their
  // start (per connection, bounded): a commitment that comes after them cannot be trusted.
  Recent<bool> early_;
  Throttle unknown_rejections_;      // warnings about rejections of requests not open
  std::uint64_t forgotten_ = 0;      // entries dropped by kMaxMatches (the first one said so)
  std::uint64_t outgrown_ = 0;       // ... and by kMaxKeptBytes
  bool welcomed_ = false;
  std::string registered_name_;
  std::string connection_id_;
};

}  // namespace bisca::client
