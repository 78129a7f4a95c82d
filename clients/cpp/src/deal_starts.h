// Each game's start, dealt again from a seed (deal_start.h says why); private to the library.
// One file per game, each a port of its engine's _state.py up to the first action.
#pragma once

#include <cstdint>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "bisca/client/deal_start.h"

namespace bisca::client::detail {

/// engine/bisca/engine/belote/_state.py: BeloteState.__init__ and _start_deal(0).
std::vector<RecordedEvent> belote_start(const pb::belote::Settings& settings, std::uint64_t seed);

/// The hand the engine's observation shows `seat` of a Belote match at its first request,
/// sorted by card index: its first five cards while deal 0's bidding lasts; with the rest of
/// its deal (engine: _complete_hands) once `taker` took.  std::invalid_argument as
/// belote_start.
std::vector<pb::belote::Card> belote_first_hand(const pb::belote::Settings& settings,
                                                std::uint64_t seed, std::uint32_t seat,
                                                std::optional<std::uint32_t> taker);

/// engine/bisca/engine/bestia/_state.py: BestiaState._setup and _start_hand(repeat=False).
std::vector<RecordedEvent> bestia_start(const pb::bestia::Settings& settings, std::uint64_t seed);

/// std::invalid_argument unless low <= value <= high: a setting the engine refuses (its
/// settings' __post_init__) makes no match, so the start cannot be dealt again.
void check_setting(const char* name, std::uint64_t value, std::uint64_t low, std::uint64_t high);

/// Appends `event` (a pb::belote::Event or a pb::bestia::Event) to the record, seen by
/// `audience`, at the next index.
template <typename Event>
void record(std::vector<RecordedEvent>& events, std::uint32_t audience, Event event) {
  RecordedEvent& recorded = events.emplace_back();
  recorded.audience = audience;
  recorded.event.set_index(static_cast<std::uint32_t>(events.size() - 1));
  if constexpr (std::is_same_v<Event, pb::belote::Event>) {
    *recorded.event.mutable_belote() = std::move(event);
  } else {
    *recorded.event.mutable_bestia() = std::move(event);
  }
}

}  // namespace bisca::client::detail
