#include "bisca/client/deal_start.h"

#include <stdexcept>

#include <google/protobuf/util/message_differencer.h>

#include "deal_starts.h"
#include "text.h"

namespace bisca::client {
namespace {

using detail::cat;

/// The engine's name of an event's type (CardsDealt, TrumpTurned...): its message's name.
std::string type_name(const pb::GameEvent& event) {
  const google::protobuf::Message& inner =
      event.has_belote() ? static_cast<const google::protobuf::Message&>(event.belote())
                         : event.bestia();
  const google::protobuf::FieldDescriptor* field = inner.GetReflection()->GetOneofFieldDescriptor(
      inner, inner.GetDescriptor()->FindOneofByName("event"));
  return field != nullptr ? field->message_type()->name() : "?";
}

/// An event the server sent, on one line and at most 200 characters, for the log.
std::string shortened(const pb::GameEvent& event) {
  constexpr std::size_t kMost = 200;
  const std::string text = detail::brief(event);
  return text.size() <= kMost ? text : text.substr(0, kMost) + "...";
}

}  // namespace

namespace detail {

void check_setting(const char* name, std::uint64_t value, std::uint64_t low, std::uint64_t high) {
  if (value < low || value > high) {
    throw std::invalid_argument(cat(name, " must be ", low, "..", high, ", got ", value));
  }
}

}  // namespace detail

std::vector<RecordedEvent> start_events(pb::Game game, const pb::GameSettings& settings,
                                        std::uint64_t seed) {
  // No settings (GAME_NOT_SET) are the engine's defaults: belote() and bestia() are then empty
  // messages, every field absent.
  switch (game) {
    case pb::GAME_BELOTE:
      if (settings.has_bestia()) {
        throw std::invalid_argument("bestia settings were given for a belote match");
      }
      return detail::belote_start(settings.belote(), seed);
    case pb::GAME_BESTIA:
      if (settings.has_belote()) {
        throw std::invalid_argument("belote settings were given for a bestia match");
      }
      return detail::bestia_start(settings.bestia(), seed);
    default: break;
  }
  throw std::invalid_argument(cat("unknown game number ", static_cast<int>(game)));
}

std::optional<std::string> start_dealt_from(
    pb::Game game, const pb::GameSettings& settings, std::uint64_t seed, std::uint32_t seat,
    const std::map<std::uint32_t, pb::GameEvent>& received) {
  const std::vector<RecordedEvent> events = start_events(game, settings, seed);
  // A seat the table does not have was dealt nothing: what the server showed it cannot be
  // checked, so it is not passed as checked.  (A start's first event, DealStarted or
  // HandStarted, is public: its audience is the whole table.)
  const std::uint32_t everyone = events.front().audience;
  if (seat >= 32 || (everyone >> seat & 1) == 0) {
    return cat("seat ", seat, " is not a seat of the match");
  }
  for (const RecordedEvent& recorded : events) {
    if ((recorded.audience >> seat & 1) == 0) continue;
    const std::uint32_t index = recorded.event.index();
    const auto sent = received.find(index);
    if (sent == received.end()) {
      return cat("event ", index, " of the start (", type_name(recorded.event), ") was never sent");
    }
    if (!google::protobuf::util::MessageDifferencer::Equals(sent->second, recorded.event)) {
      return cat("event ", index, " is not what seed ", seed, " deals: ", shortened(sent->second),
                 " was sent");
    }
  }
  return std::nullopt;
}

}  // namespace bisca::client
