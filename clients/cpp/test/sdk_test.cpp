// sdk_test: the C++ SDK's test program, driven by tests/client (test_cpp_bot.py).
//
//   build/cpp/sdk_test rules POSITIONS
//       POSITIONS holds one JSON object a line, {"game": ..., "observation": hex of a
//       GameObservation} (tests/client/rules_positions.py); prints the rule helpers' answers,
//       one JSON object a line (the keys are described there), with the choices of the bot
//       guide's C++ example (`play`, compiled in from docs/bot-guide.md).
//   build/cpp/sdk_test throwing-bot [--in bot|on_match_start|answer] [--keep-going]
//       a bot (on $BISCA_ADDRESS with $BISCA_TOKEN) whose callback throws on every call: the
//       bot itself (the default) or its on_match_start hook; or, with --in answer, whose bot
//       answers an empty GameAction (no action of the game) on every call.
//   build/cpp/sdk_test printable
//       stdin through bisca::client::printable to stdout.
//   build/cpp/sdk_test first-bot [--welcome-timeout-ms N] [--stable-ms N] [--budget-ms N]
//       [--live-events] [--think-ms N] [--ca FILE] [--client-cert FILE --client-key FILE]
//       a bot (on $BISCA_ADDRESS with $BISCA_TOKEN) that answers the first legal action, with
//       the reconnect timings given (so the tests need not wait the defaults' 10 s and 30 s)
//       and the TLS files given as Options (where random_bot reads them from the environment);
//       it prints "MATCH_ID DEAL_CHECK" on stdout at each match's end (e.g. "m1 rigged").
//       With --think-ms it takes N ms over its first answer (the session's only thread is
//       then busy, as with a bot that thinks for real), the later ones at once.
//   build/cpp/sdk_test rng CASES
//       the engine's generator (deal_rng.h): CASES holds one case a line, a generator ("raw
//       STATE" or "deal SEED DEAL STREAM", for_deal's) then what it does ("next64 COUNT",
//       "below N COUNT" or "shuffle SIZE STEPS": shuffle_top of 0..SIZE-1); prints one line per
//       case, the outputs (the shuffled items) then the generator's state after them.
//   build/cpp/sdk_test deal-starts CASES
//       CASES holds one JSON object a line, {"game": ..., "settings": hex of a GameSettings,
//       "seed": ..., "seat": ..., "shown": ["INDEX:hex of a GameEvent", ...]}
//       (tests/client/test_cpp_deal_start.py); prints two lines per case: "events" and every
//       event of start_events() as AUDIENCE:hex, then "verdict" and start_dealt_from()'s
//       answer for the seat shown those events ("ok" or why not), or "error" and why the
//       start cannot be dealt again.
//   build/cpp/sdk_test session MESSAGES
//       MESSAGES holds one ServerMessage a line (hex), handled in order by one Session (no
//       network; hello() first, and again at each line "hello": a reconnection) whose bot
//       answers the first legal action; prints "MATCH_ID DEAL_CHECK" at each match's end, as
//       first-bot does, and the session's log on stderr.

#include <chrono>
#include <cstdint>
#include <fstream>
#include <functional>
#include <iostream>
#include <iterator>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "bisca/client.h"

/// The bot guide's example of the rule helpers (the build takes it from docs/bot-guide.md).
bisca::v1::GameAction play(const bisca::client::Request& request);

namespace {

namespace client = bisca::client;
namespace pb = bisca::v1;

std::string from_hex(const std::string& hex) {
  if (hex.size() % 2 != 0) throw std::invalid_argument("odd hex length");
  std::string bytes;
  bytes.reserve(hex.size() / 2);
  for (std::size_t at = 0; at < hex.size(); at += 2) {
    bytes.push_back(static_cast<char>(std::stoi(hex.substr(at, 2), nullptr, 16)));
  }
  return bytes;
}

/// The string value of `key` in a one-line JSON object (a string, or a list of strings).
std::vector<std::string> strings(const std::string& line, const std::string& key) {
  const std::string opening = "\"" + key + "\": ";
  const std::size_t start = line.find(opening);
  if (start == std::string::npos) throw std::invalid_argument("no \"" + key + "\" in " + line);
  std::size_t at = start + opening.size();
  const bool many = line[at] == '[';
  const std::size_t end = many ? line.find(']', at) : line.find('"', at + 1) + 1;
  std::vector<std::string> found;
  while ((at = line.find('"', at)) < end) {
    const std::size_t close = line.find('"', at + 1);
    found.push_back(line.substr(at + 1, close - at - 1));
    at = close + 1;
  }
  return found;
}

std::string field(const std::string& line, const std::string& key) {
  const std::vector<std::string> found = strings(line, key);
  if (found.size() != 1) throw std::invalid_argument("\"" + key + "\" is not a string");
  return found[0];
}

/// The index in the legal actions of the guide example's choice.
std::string example_choice(const pb::GameObservation& observation,
                           const std::vector<std::string>& legal) {
  client::Request request;
  *request.message.mutable_observation() = observation;
  request.message.set_seat(observation.belote().seat());
  request.game = pb::GAME_BELOTE;
  for (const std::string& hex : legal) {
    if (!request.message.add_legal_actions()->ParseFromString(from_hex(hex))) {
      throw std::invalid_argument("not a GameAction: " + hex);
    }
  }
  const std::string chosen = play(request).SerializeAsString();
  for (int index = 0; index < request.legal_actions().size(); ++index) {
    if (request.legal_actions()[index].SerializeAsString() == chosen) return std::to_string(index);
  }
  return "-1";
}

std::string list(const std::vector<std::string>& items) {
  std::string text = "[";
  for (std::size_t index = 0; index < items.size(); ++index) {
    text += (index ? ", " : "") + items[index];
  }
  return text + "]";
}

/// One game's answers: the helpers of namespace `Rules` on its observation type.
template <typename Observation, typename Suit, typename Strength, typename Winning,
          typename Current>
std::vector<std::pair<std::string, std::string>> trick_answers(const Observation& observation,
                                                               Strength trick_strength,
                                                               Winning winning_play,
                                                               Current current_trick) {
  const Suit trump = observation.trump();
  const auto& trick = current_trick(observation);
  std::vector<std::string> seats;
  for (const auto& play : trick) seats.push_back(std::to_string(play.seat()));
  std::vector<std::string> winners;
  for (const auto& done : observation.tricks()) {
    if (done.has_winner()) winners.push_back(std::to_string(winning_play(done.plays(), trump).seat()));
  }
  std::vector<std::string> strengths;
  for (const auto& card : observation.hand()) {
    std::vector<std::string> per_led;
    for (int led = 1; led <= 4; ++led) {
      per_led.push_back(std::to_string(trick_strength(card, static_cast<Suit>(led), trump)));
    }
    strengths.push_back(list(per_led));
  }
  return {
      {"trick", list(seats)},
      {"winning", trick.empty() ? "null" : std::to_string(winning_play(trick, trump).seat())},
      {"winners", list(winners)},
      {"strengths", list(strengths)},
  };
}

std::string answer(const pb::GameObservation& message, const std::vector<std::string>& legal) {
  std::vector<std::pair<std::string, std::string>> fields;
  if (message.has_belote()) {
    namespace rules = client::belote;
    const auto& observation = message.belote();
    fields = trick_answers<pb::belote::Observation, pb::belote::Suit>(
        observation, rules::trick_strength, rules::winning_play, rules::current_trick);
    std::vector<std::string> points;
    for (const auto& card : observation.hand()) {
      points.push_back(std::to_string(rules::card_points(card, observation.trump())));
    }
    fields.emplace_back("points", list(points));
    fields.emplace_back("team", std::to_string(rules::team_of(observation.seat())));
    fields.emplace_back("partner", std::to_string(rules::partner_of(observation.seat())));
    if (observation.phase() == pb::belote::PHASE_PLAYING) {
      fields.emplace_back("example", example_choice(message, legal));
    }
  } else {
    namespace rules = client::bestia;
    fields = trick_answers<pb::bestia::Observation, pb::bestia::Suit>(
        message.bestia(), rules::trick_strength, rules::winning_play, rules::current_trick);
  }
  std::string text = "{";
  for (std::size_t index = 0; index < fields.size(); ++index) {
    text += (index ? ", \"" : "\"") + fields[index].first + "\": " + fields[index].second;
  }
  return text + "}";
}

// Each non-empty line of the file at `path`, in order, given to `each` with the output it
// writes to; the whole output printed at the end.
template <typename Each>
int answer_each_line(const std::string& path, Each each) {
  std::ifstream cases(path);
  if (!cases) throw std::invalid_argument("cannot read " + path);
  std::ostringstream out;
  std::string line;
  while (std::getline(cases, line)) {
    if (!line.empty()) each(line, out);
  }
  std::cout << out.str();
  return 0;
}

int rules_answers(const std::string& path) {
  return answer_each_line(path, [](const std::string& line, std::ostringstream& out) {
    pb::GameObservation message;
    if (!message.ParseFromString(from_hex(field(line, "observation")))) {
      throw std::invalid_argument("not a GameObservation: " + line.substr(0, 80));
    }
    if (client::game_of(message) != client::game_named(field(line, "game"))) {
      throw std::invalid_argument("the observation is not of its line's game");
    }
    out << answer(message, strings(line, "legal")) << "\n";
  });
}

int throwing_bot(const std::vector<std::string>& arguments) {
  client::Options options;
  options.name = "cpp-throwing";
  options.games = {pb::GAME_BELOTE, pb::GAME_BESTIA};
  std::string where = "bot";
  for (std::size_t index = 0; index < arguments.size(); ++index) {
    if (arguments[index] == "--keep-going") {
      options.keep_going = true;
    } else if (arguments[index] == "--in" && index + 1 < arguments.size()) {
      where = arguments[++index];
    } else {
      throw std::invalid_argument("unknown option " + arguments[index]);
    }
  }
  if (where == "on_match_start") {
    options.hooks.on_match_start = [](const pb::MatchStarted&) {
      throw std::logic_error("deliberate bug in on_match_start");
    };
  } else if (where != "bot" && where != "answer") {
    throw std::invalid_argument("--in bot, --in on_match_start or --in answer");
  }
  client::run(
      [where](const client::Request& request) -> pb::GameAction {
        if (where == "bot") throw std::out_of_range("deliberate bug in the bot");
        if (where == "answer") return {};  // a path of a bot that forgot its action
        return request.legal_actions()[0];
      },
      options);
  return 0;
}

const char* deal_check_name(client::DealCheck check) {
  switch (check) {
    case client::DealCheck::verified: return "verified";
    case client::DealCheck::mismatch: return "mismatch";
    case client::DealCheck::rigged: return "rigged";
    case client::DealCheck::not_committed: return "not_committed";
    case client::DealCheck::sealed: return "sealed";
  }
  return "?";
}

int first_bot(const std::vector<std::string>& arguments) {
  client::Options options;
  std::chrono::milliseconds think{0};
  options.name = "cpp-first";
  options.games = {pb::GAME_BELOTE, pb::GAME_BESTIA};
  for (std::size_t index = 0; index < arguments.size(); ++index) {
    if (arguments[index] == "--live-events") {
      options.live_events = true;
      continue;
    }
    if (index + 1 == arguments.size()) {
      throw std::invalid_argument(arguments[index] + " needs a value");
    }
    const std::string& option = arguments[index];
    const std::map<std::string, std::string*> files = {{"--ca", &options.ca},
                                                       {"--client-cert", &options.client_cert},
                                                       {"--client-key", &options.client_key}};
    if (const auto file = files.find(option); file != files.end()) {
      *file->second = arguments[++index];
      continue;
    }
    const std::chrono::milliseconds value{std::stoll(arguments[++index])};
    if (arguments[index - 1] == "--welcome-timeout-ms") {
      options.welcome_timeout = value;
    } else if (arguments[index - 1] == "--stable-ms") {
      options.backoff.stable = value;
    } else if (arguments[index - 1] == "--budget-ms") {
      options.backoff.budget = value;
    } else if (arguments[index - 1] == "--think-ms") {
      think = value;
    } else {
      throw std::invalid_argument("unknown option " + arguments[index - 1]);
    }
  }
  options.hooks.on_match_end = [](const pb::MatchEnded& ended, client::DealCheck check) {
    std::cout << ended.match_id() << " " << deal_check_name(check) << std::endl;
  };
  client::run(
      [think, first = true](const client::Request& request) mutable {
        if (first) std::this_thread::sleep_for(think);
        first = false;
        return request.legal_actions()[0];
      },
      options);
  return 0;
}

// ---- the engine's generator and each game's start, dealt again --------------------------------

int rng_outputs(const std::string& path) {
  return answer_each_line(path, [](const std::string& line, std::ostringstream& out) {
    std::istringstream words(line);
    std::string source, operation;
    std::uint64_t first = 0, deal = 0, stream = 0, a = 0, b = 0;
    words >> source >> first;
    if (source == "deal") words >> deal >> stream;
    client::DealRng rng = source == "raw" ? client::DealRng(first)
                                          : client::DealRng::for_deal(first, deal, stream);
    if (!(words >> operation >> a)) throw std::invalid_argument("not a case: " + line);
    if (operation == "next64") {
      for (std::uint64_t count = 0; count < a; ++count) out << rng.next64() << " ";
    } else if (operation == "below" && (words >> b)) {
      for (std::uint64_t count = 0; count < b; ++count) out << rng.below(a) << " ";
    } else if (operation == "shuffle" && (words >> b)) {
      std::vector<std::uint64_t> items(a);
      for (std::uint64_t item = 0; item < a; ++item) items[item] = item;
      rng.shuffle_top(items, b);
      for (const std::uint64_t item : items) out << item << " ";
    } else {
      throw std::invalid_argument("not a case: " + line);
    }
    out << rng.state() << "\n";
  });
}

int deal_starts(const std::string& path) {
  return answer_each_line(path, [](const std::string& line, std::ostringstream& out) {
    const pb::Game game = client::game_named(field(line, "game"));
    pb::GameSettings settings;
    if (!settings.ParseFromString(from_hex(field(line, "settings")))) {
      throw std::invalid_argument("not a GameSettings: " + line.substr(0, 80));
    }
    const std::uint64_t seed = std::stoull(field(line, "seed"));
    const auto seat = static_cast<std::uint32_t>(std::stoul(field(line, "seat")));
    std::map<std::uint32_t, pb::GameEvent> shown;
    for (const std::string& item : strings(line, "shown")) {
      const std::size_t colon = item.find(':');
      const auto index = static_cast<std::uint32_t>(std::stoul(item.substr(0, colon)));
      if (!shown[index].ParseFromString(from_hex(item.substr(colon + 1)))) {
        throw std::invalid_argument("not a GameEvent: " + item);
      }
    }
    try {
      std::string events = "events";
      for (const client::RecordedEvent& recorded : client::start_events(game, settings, seed)) {
        events += " " + std::to_string(recorded.audience) + ":" +
                  client::hex(recorded.event.SerializeAsString());
      }
      const std::optional<std::string> why =
          client::start_dealt_from(game, settings, seed, seat, shown);
      out << events << "\nverdict " << (why ? *why : "ok") << "\n";
    } catch (const std::invalid_argument& error) {
      out << "error " << error.what() << "\nerror " << error.what() << "\n";
    }
  });
}

int session_run(const std::string& path) {
  std::ifstream lines(path);
  if (!lines) throw std::invalid_argument("cannot read " + path);
  client::Options options;
  options.name = "cpp-session";
  options.games = {pb::GAME_BELOTE, pb::GAME_BESTIA};
  options.hooks.on_match_end = [](const pb::MatchEnded& ended, client::DealCheck check) {
    std::cout << ended.match_id() << " " << deal_check_name(check) << std::endl;
  };
  client::Session session(
      [](const client::Request& request) { return request.legal_actions()[0]; }, options);
  session.hello();
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty()) continue;
    if (line == "hello") {
      session.hello();
      continue;
    }
    pb::ServerMessage message;
    if (!message.ParseFromString(from_hex(line))) {
      throw std::invalid_argument("not a ServerMessage: " + line.substr(0, 80));
    }
    session.handle(message);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> arguments(argv + 1, argv + argc);
  try {
    if (arguments.size() == 2 && arguments[0] == "rules") return rules_answers(arguments[1]);
    if (arguments.size() == 1 && arguments[0] == "printable") {
      const std::string text{std::istreambuf_iterator<char>(std::cin), {}};
      std::cout << client::printable(text);
      return 0;
    }
    if (arguments.size() == 2 && arguments[0] == "rng") return rng_outputs(arguments[1]);
    if (arguments.size() == 2 && arguments[0] == "deal-starts") return deal_starts(arguments[1]);
    if (arguments.size() == 2 && arguments[0] == "session") return session_run(arguments[1]);
    if (!arguments.empty() && arguments[0] == "first-bot") {
      return first_bot({arguments.begin() + 1, arguments.end()});
    }
    if (!arguments.empty() && arguments[0] == "throwing-bot") {
      return throwing_bot({arguments.begin() + 1, arguments.end()});
    }
    std::cerr << "usage: sdk_test rules POSITIONS | sdk_test throwing-bot [--in bot|"
                 "on_match_start|answer] [--keep-going] | sdk_test printable | sdk_test first-bot "
                 "[--welcome-timeout-ms N] [--stable-ms N] [--budget-ms N] [--live-events] "
                 "[--think-ms N] [--ca FILE] [--client-cert FILE --client-key FILE] | sdk_test "
                 "rng CASES | sdk_test deal-starts CASES | sdk_test session MESSAGES\n";
    return 2;
  } catch (const client::Failure& error) {
    std::cerr << "sdk_test: " << error.what() << "\n";
    return 1;
  } catch (const std::exception& error) {
    std::cerr << "sdk_test: " << error.what() << "\n";
    return 2;
  }
}
