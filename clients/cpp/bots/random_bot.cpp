// random_bot: the random bot of every game, in C++: a uniformly random legal action, for
// Belote and Bestia alike (it never looks inside an action, only picks one of the list).
//
//   build/cpp/random_bot [--seed N] [--name NAME] [--game belote --game bestia] [--live-events]
//
// BISCA_ADDRESS and BISCA_TOKEN say where to connect and who it is (`bisca match` sets them);
// for a TLS server, a grpcs:// address, and BISCA_CA (the CA of the server's certificate),
// BISCA_CLIENT_CERT and BISCA_CLIENT_KEY (mutual TLS) as needed.
// Each match and seat has its own generator, seeded with N, or without --seed with a hash of
// the match id: a seat's choices do not depend on what else the connection plays, and a rerun
// with the same seed (or of the same match) makes the same ones.
//
// A starter: copy this file, replace RandomBot::choose with your strategy (the observation is
// request.observation().belote() or .bestia(), per request.game) and add it to CMakeLists.txt.

#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <map>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "bisca/client.h"

namespace {

namespace client = bisca::client;
namespace pb = bisca::v1;

/// FNV-1a, 64 bits: a hash that is the same on every machine and every build (std::hash is not
/// promised to be), so a match id gives the same seed everywhere.
std::uint64_t fnv1a(const std::string& text) {
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  for (const char byte : text) {
    hash ^= static_cast<unsigned char>(byte);
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

class RandomBot {
 public:
  explicit RandomBot(std::optional<std::uint64_t> seed) : seed_(seed) {}

  pb::GameAction choose(const client::Request& request) {
    // After a rejection, pick again among the actions the referee has not refused.
    const std::vector<pb::GameAction> choices = request.remaining_actions();
    // Every one refused: the SDK sends none again and leaves the request to the referee.
    if (choices.empty()) return request.legal_actions()[0];
    std::uniform_int_distribution<std::size_t> pick(0, choices.size() - 1);
    return choices[pick(generator(request.match_id(), request.seat()))];
  }

  /// A finished match's generators are not needed any more (a server connection plays on).
  void forget(const std::string& match_id) {
    for (auto entry = generators_.begin(); entry != generators_.end();) {
      entry = entry->first.first == match_id ? generators_.erase(entry) : std::next(entry);
    }
  }

 private:
  std::mt19937_64& generator(const std::string& match_id, std::uint32_t seat) {
    const auto key = std::make_pair(match_id, seat);
    auto found = generators_.find(key);
    if (found == generators_.end()) {
      const std::uint64_t base = seed_ ? *seed_ : fnv1a(match_id);
      std::seed_seq sequence{static_cast<std::uint32_t>(base), static_cast<std::uint32_t>(base >> 32),
                             seat};
      found = generators_.emplace(key, std::mt19937_64(sequence)).first;
    }
    return found->second;
  }

  std::optional<std::uint64_t> seed_;
  std::map<std::pair<std::string, std::uint32_t>, std::mt19937_64> generators_;
};

struct Arguments {
  std::optional<std::uint64_t> seed;
  std::string name = "cpp-random";
  std::vector<pb::Game> games;
  bool live_events = false;
};

const char* const kUsage =
    "usage: random_bot [--seed N] [--name NAME] [--game belote|bestia]... [--live-events]\n"
    "  connects to $BISCA_ADDRESS with $BISCA_TOKEN and plays uniformly random legal actions\n"
    "  (TLS: a grpcs:// address, $BISCA_CA, $BISCA_CLIENT_CERT and $BISCA_CLIENT_KEY);\n"
    "  --live-events asks for every event as it happens (else inside the next request)\n";

Arguments parse(int argc, char** argv) {
  Arguments arguments;
  for (int index = 1; index < argc; ++index) {
    const std::string option = argv[index];
    if (option == "--help" || option == "-h") {
      std::cout << kUsage;
      std::exit(0);
    }
    if (option == "--live-events") {
      arguments.live_events = true;
      continue;
    }
    if (index + 1 >= argc) throw std::invalid_argument(option + " needs a value");
    const std::string value = argv[++index];
    if (option == "--seed") {
      std::size_t used = 0;
      const unsigned long long seed = std::stoull(value, &used);
      if (used != value.size() || value.front() == '-') throw std::invalid_argument("bad --seed");
      arguments.seed = seed;
    } else if (option == "--name") {
      arguments.name = value;
    } else if (option == "--game") {
      arguments.games.push_back(client::game_named(value));
    } else {
      throw std::invalid_argument("unknown option " + option);
    }
  }
  if (arguments.games.empty()) arguments.games = {pb::GAME_BELOTE, pb::GAME_BESTIA};
  return arguments;
}

}  // namespace

int main(int argc, char** argv) {
  Arguments arguments;
  try {
    arguments = parse(argc, argv);
  } catch (const std::exception& error) {  // std::stoull throws its own kinds on a bad number
    std::cerr << "random_bot: " << error.what() << "\n" << kUsage;
    return 2;
  }
  RandomBot bot(arguments.seed);
  client::Options options;
  options.name = arguments.name;
  options.version = "1";
  options.games = arguments.games;
  options.live_events = arguments.live_events;
  // The events each match showed the bot, counted and said at its end (what a strategy that
  // tracks the table would read, however the server sent them).
  std::map<std::string, std::size_t> events_seen;
  options.hooks.on_event = [&events_seen](const std::string& match_id, std::uint32_t,
                                          const pb::GameEvent&) { ++events_seen[match_id]; };
  options.hooks.on_match_end = [&bot, &events_seen](const pb::MatchEnded& ended,
                                                    client::DealCheck) {
    client::log(client::LogLevel::info, "match " + ended.match_id() + ": " +
                                            std::to_string(events_seen[ended.match_id()]) +
                                            " events seen");
    events_seen.erase(ended.match_id());
    bot.forget(ended.match_id());
  };
  try {
    client::run([&bot](const client::Request& request) { return bot.choose(request); }, options);
  } catch (const client::Failure& error) {
    std::cerr << "random_bot: " << error.what() << "\n";
    return 1;
  } catch (const std::invalid_argument& error) {  // no address or token, a TLS file unusable
    std::cerr << "random_bot: " << error.what() << "\n";
    return 2;
  }
  return 0;
}
