#include "bisca/client/deal_start.h"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include <google/protobuf/util/message_differencer.h>

#include "deal_starts.h"
#include "text.h"

namespace bisca::client {
namespace {

using detail::cat;

/// The kind of an event (deal_started, cards_dealt...): the member of its game's oneof that
/// is set, as the Python SDK names it.
std::string kind_of(const pb::GameEvent& event) {
  const google::protobuf::Message& inner =
      event.has_belote() ? static_cast<const google::protobuf::Message&>(event.belote())
                         : event.bestia();
  const google::protobuf::FieldDescriptor* field = inner.GetReflection()->GetOneofFieldDescriptor(
      inner, inner.GetDescriptor()->FindOneofByName("event"));
  return field != nullptr ? field->name() : "?";
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

std::optional<std::string> seat_outside(pb::Game game, const pb::GameSettings& settings,
                                        std::uint32_t seat) {
  // (The seed changes no seat: any one deals the table.  A start's first event, DealStarted or
  // HandStarted, is public: its audience is the whole table.)
  const std::uint32_t everyone = start_events(game, settings, 0).front().audience;
  if (seat < 32 && (everyone >> seat & 1) != 0) return std::nullopt;
  std::uint32_t seats = 0;
  for (std::uint32_t bits = everyone; bits != 0; bits >>= 1) seats += bits & 1;
  return cat("seat ", seat, " is not a seat of a ", seats, "-seat ",
             game == pb::GAME_BELOTE ? "belote" : "bestia", " match");
}

std::optional<std::string> start_dealt_from(pb::Game game, const pb::GameSettings& settings,
                                            std::uint64_t seed, std::uint32_t seat,
                                            const std::map<std::uint32_t, pb::GameEvent>& received,
                                            const std::map<std::uint32_t, std::size_t>& too_big) {
  // A seat the table does not have was dealt nothing: what the server showed it cannot be
  // checked, so it is not passed as checked.
  if (std::optional<std::string> outside = seat_outside(game, settings, seat)) return outside;
  for (const RecordedEvent& recorded : start_events(game, settings, seed)) {
    const std::uint32_t index = recorded.event.index();
    const auto sent = received.find(index);
    const auto big = too_big.find(index);
    if ((recorded.audience >> seat & 1) == 0) {
      // Another seat's cards (or the omniscient record's) at an index of the start: whatever
      // it holds, the bot was shown an event the engine does not show it.
      if (sent != received.end() || big != too_big.end()) {
        return cat("event ", index, " was sent, but seat ", seat, " is not shown it");
      }
      continue;
    }
    if (big != too_big.end()) {
      return cat("event ", index, " is not what seed ", seed, " deals: an event of ", big->second,
                 " bytes was sent (a start's take at most about 1.3 KB)");
    }
    if (sent == received.end()) {
      return cat("event ", index, " of the start (", kind_of(recorded.event), ") was never sent");
    }
    if (!google::protobuf::util::MessageDifferencer::Equals(sent->second, recorded.event)) {
      return cat("event ", index, " is not what seed ", seed, " deals: ", shortened(sent->second),
                 " was sent");
    }
  }
  return std::nullopt;
}

namespace {

/// Bestia: the hands the seat may be shown when it looks at its cards in the first hand (its
/// four of the hidden HandDealt; for the dealer also those and the turned trump, as a dealer
/// who stole it), each sorted as the engine sorts one; and that hand's number.
struct AllowedLooks {
  std::uint32_t hand_number = 0;
  std::vector<std::vector<pb::bestia::Card>> hands;
};

AllowedLooks allowed_looks(const pb::GameSettings& settings, std::uint64_t seed,
                           std::uint32_t seat) {
  const std::vector<RecordedEvent> start = start_events(pb::GAME_BESTIA, settings, seed);
  const pb::bestia::HandStarted& hand = start.front().event.bestia().hand_started();
  AllowedLooks allowed;
  allowed.hand_number = hand.hand_number();
  std::vector<pb::bestia::Card> cards;
  const pb::bestia::Card* trump = nullptr;
  for (const RecordedEvent& recorded : start) {
    const pb::bestia::Event& event = recorded.event.bestia();
    if (event.has_hand_dealt()) {
      // Every hand, by seat, each sorted: the seat's are its slice.
      const auto& dealt = event.hand_dealt().cards();
      cards.assign(dealt.begin() + 4 * seat, dealt.begin() + 4 * seat + 4);
    }
    if (event.has_trump_turned()) trump = &event.trump_turned().card();
  }
  allowed.hands.push_back(cards);
  if (seat == hand.dealer() && trump != nullptr) {
    // A dealer who stole the trump looks at it too, sorted into its hand (by the engine's card
    // index: suit, then rank).
    cards.push_back(*trump);
    std::sort(cards.begin(), cards.end(), [](const pb::bestia::Card& a, const pb::bestia::Card& b) {
      return std::make_pair(a.suit(), a.rank()) < std::make_pair(b.suit(), b.rank());
    });
    allowed.hands.push_back(std::move(cards));
  }
  return allowed;
}

/// Whether `cards` are, in order, `hand`.
bool same_cards(const google::protobuf::RepeatedPtrField<pb::bestia::Card>& cards,
                const std::vector<pb::bestia::Card>& hand) {
  if (cards.size() != static_cast<int>(hand.size())) return false;
  for (int index = 0; index < cards.size(); ++index) {
    if (!google::protobuf::util::MessageDifferencer::Equals(
            cards.Get(index), hand[static_cast<std::size_t>(index)])) {
      return false;
    }
  }
  return true;
}

}  // namespace

std::optional<std::string> looked_dealt_from(const pb::GameSettings& settings, std::uint64_t seed,
                                             std::uint32_t seat, const pb::GameEvent& looked) {
  if (std::optional<std::string> outside = seat_outside(pb::GAME_BESTIA, settings, seat)) {
    return outside;
  }
  for (const std::vector<pb::bestia::Card>& cards : allowed_looks(settings, seed, seat).hands) {
    pb::GameEvent expected;
    expected.set_index(looked.index());
    pb::bestia::HandLooked* shown = expected.mutable_bestia()->mutable_hand_looked();
    shown->set_seat(seat);
    for (const pb::bestia::Card& card : cards) *shown->add_cards() = card;
    if (google::protobuf::util::MessageDifferencer::Equals(looked, expected)) return std::nullopt;
  }
  return cat("the cards seat ", seat, " looked at are not what seed ", seed, " deals: ",
             shortened(looked), " was sent");
}

std::optional<std::string> looked_hand_dealt_from(const pb::GameSettings& settings,
                                                  std::uint64_t seed, std::uint32_t seat,
                                                  const pb::bestia::Observation& observation) {
  if (std::optional<std::string> outside = seat_outside(pb::GAME_BESTIA, settings, seat)) {
    return outside;
  }
  const AllowedLooks allowed = allowed_looks(settings, seed, seat);
  // Asked in a later hand, or after the seat exchanged or played a card (its hand may differ
  // from its look then): nothing compared.
  if (observation.hand_number() != allowed.hand_number) return std::nullopt;
  for (const pb::bestia::Exchanged& exchange : observation.exchanges()) {
    if (exchange.seat() == seat) return std::nullopt;
  }
  for (const pb::bestia::Trick& trick : observation.tricks()) {
    for (const pb::bestia::CardPlayed& play : trick.plays()) {
      if (play.seat() == seat) return std::nullopt;
    }
  }
  for (const std::vector<pb::bestia::Card>& cards : allowed.hands) {
    if (same_cards(observation.hand(), cards)) return std::nullopt;
  }
  std::string cards;
  for (const pb::bestia::Card& card : observation.hand()) {
    cards += (cards.empty() ? "" : " ") + detail::brief(card);
  }
  return cat("the hand in seat ", seat, "'s first request after it looked is not what seed ",
             seed, " deals: ", cards);
}

std::optional<std::string> first_hand_dealt_from(const pb::GameSettings& settings,
                                                 std::uint64_t seed, std::uint32_t seat,
                                                 const pb::GameObservation& observation) {
  if (std::optional<std::string> outside = seat_outside(pb::GAME_BELOTE, settings, seat)) {
    return outside;
  }
  if (settings.has_bestia()) {
    throw std::invalid_argument("bestia settings were given for a belote match");
  }
  pb::belote::Card turned;
  for (const RecordedEvent& recorded : start_events(pb::GAME_BELOTE, settings, seed)) {
    const pb::belote::Event& event = recorded.event.belote();
    if (event.has_card_turned()) turned = event.card_turned().card();
  }
  // The seat has played no card before its first request: during deal 0's bidding its hand
  // is its first five cards; when a seat before it took at once, in the first round, its first
  // request is its first card, and its hand the whole deal it was given (the observation's
  // taker says whose the turned card is).  Either way the turned card is shown.
  const pb::belote::Observation& seen = observation.belote();
  std::optional<std::uint32_t> taker;
  if (seen.has_taker()) taker = seen.taker();
  using google::protobuf::util::MessageDifferencer;
  bool same = observation.has_belote() && seen.has_turned_card() &&
              MessageDifferencer::Equals(seen.turned_card(), turned) && (!taker || *taker < 4);
  if (same) {
    const std::vector<pb::belote::Card> hand =
        detail::belote_first_hand(settings.belote(), seed, seat, taker);
    same = seen.hand_size() == static_cast<int>(hand.size());
    for (int index = 0; same && index < seen.hand_size(); ++index) {
      same = MessageDifferencer::Equals(seen.hand(index), hand[static_cast<std::size_t>(index)]);
    }
  }
  if (same) return std::nullopt;
  std::string cards;
  for (const pb::belote::Card& card : seen.hand()) {
    cards += (cards.empty() ? "" : " ") + detail::brief(card);
  }
  return cat("the hand in seat ", seat, "'s first request is not what seed ", seed, " deals: ",
             cards);
}

}  // namespace bisca::client
