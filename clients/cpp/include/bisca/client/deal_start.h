// Dealing a match's start again from its seed (the C++ twin of the Python SDK's _deal.py).
//
// The deal commitment (deal_check.h) proves only that the seed MatchEnded reveals was fixed
// before the first card: a server could commit to one seed and deal from another.  The engine
// deals from the seed alone (its own generator, deal_rng.h, the same in every version), so the
// bot deals the match's start again from the revealed seed and compares it with what it was
// shown before anyone acted: the events the engine gives its seat at the start (Belote: its
// first five cards and the turned card; Bestia: the antes and the turned trump, since a seat
// looks at its cards only after the blind round, which depends on the players' moves).  Later
// deals depend on the moves and on hidden cards, so a bot cannot deal them again on its own;
// the match's log can (`bisca replay verify`), for whoever holds it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "bisca/client/types.h"

namespace bisca::client {

/// The events of a match the session keeps for the check, by index: those before the first
/// action are among the first few (6 in Belote, at most 10 in Bestia), the rest are not kept.
inline constexpr std::uint32_t kKeptEvents = 32;

/// One event of the match's record and who sees it: bit s of `audience` set when seat s does
/// (0: no seat, only the omniscient record, as Bestia's HandDealt).
struct RecordedEvent {
  std::uint32_t audience = 0;
  pb::GameEvent event;  // its index is its position in the record
};

/// Every event the engine records at the start of a match of `game` with `settings` (an
/// unset GameSettings: the engine's defaults) dealt from `seed`, up to its first action, as
/// the server encodes them.  std::invalid_argument when the game is unknown or the settings
/// are not ones the engine accepts (another game's, or a value out of range).
std::vector<RecordedEvent> start_events(pb::Game game, const pb::GameSettings& settings,
                                        std::uint64_t seed);

/// std::nullopt when every event the engine gives `seat` before the first action of a match
/// dealt from `seed` is the one the server sent with that index (`received`, by index); else
/// what differs, naming the first such event.  std::invalid_argument as start_events.
std::optional<std::string> start_dealt_from(pb::Game game, const pb::GameSettings& settings,
                                            std::uint64_t seed, std::uint32_t seat,
                                            const std::map<std::uint32_t, pb::GameEvent>& received);

}  // namespace bisca::client
