// Dealing a match's start again from its seed (the C++ twin of the Python SDK's _deal.py).
//
// The deal commitment (deal_check.h) proves only that the seed MatchEnded reveals was fixed
// before the first card: a server could commit to one seed and deal from another.  The engine
// deals from the seed alone (its own generator, deal_rng.h, the same in every version), so the
// bot deals the match's start again from the revealed seed and compares it with what it was
// shown before anyone acted: the events the engine gives its seat at the start (Belote: its
// first five cards and the turned card; Bestia: the antes and the turned trump), and no event
// of the start that the engine does not give it; then the cards the bot plays from, which the
// seed fixes too: in Belote the hand and turned card of the seat's first request (every seat
// bids in deal 0 before any card is played), in Bestia the cards the seat looks at in the first
// hand (HandLooked, after the blind round: the moves decide whether and when it looks, not what
// it sees: its share of the hidden HandDealt, with the turned trump for a dealer who stole it).
// Later deals depend on the moves and on hidden cards, so a bot cannot deal them again on its
// own; the match's log can (`bisca replay verify`), for whoever holds it.  Bestia's
// observations are not compared.
#pragma once

#include <cstddef>
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

/// Why `seat` is no seat of a match of `game` with `settings` (std::nullopt: it is one): a seat
/// outside the table is shown no card of the start, so nothing would be compared.
/// std::invalid_argument as start_events.
std::optional<std::string> seat_outside(pb::Game game, const pb::GameSettings& settings,
                                        std::uint32_t seat);

/// std::nullopt when every event the engine gives `seat` before the first action of a match
/// dealt from `seed` is the one the server sent with that index (`received`, by index), and
/// no event of the start the engine does not give the seat was sent to it; else what differs,
/// naming the first such event (in the order of the start).  `too_big`: the sizes of events
/// sent but too big to keep (Session's kMostKeptEventBytes), by index: at an index of the
/// start, not what the seed deals.  Compared field by field, unknown fields included (the
/// session discards them from what it keeps: a field the SDK does not know cannot have fooled
/// the bot).  std::invalid_argument as start_events.
std::optional<std::string> start_dealt_from(
    pb::Game game, const pb::GameSettings& settings, std::uint64_t seed, std::uint32_t seat,
    const std::map<std::uint32_t, pb::GameEvent>& received,
    const std::map<std::uint32_t, std::size_t>& too_big = {});

/// Bestia: std::nullopt when `looked` (the first HandLooked the seat was shown in the first
/// hand) is what `seed` deals it: its four cards of the hidden HandDealt, or for the dealer
/// those and the turned trump (it stole it), each hand sorted as the engine sorts one; else
/// why not.  std::invalid_argument as start_events.
std::optional<std::string> looked_dealt_from(const pb::GameSettings& settings, std::uint64_t seed,
                                             std::uint32_t seat, const pb::GameEvent& looked);

/// Bestia: std::nullopt when the hand of `observation` (that of the seat's first request after
/// it looked at its cards) is, in order, one of the looks looked_dealt_from allows, or when it
/// is not compared: the request is of another hand than the first, or the seat has exchanged
/// or played a card since it looked (`exchanges`, `tricks`); else why not.
/// std::invalid_argument as start_events.
std::optional<std::string> looked_hand_dealt_from(const pb::GameSettings& settings,
                                                  std::uint64_t seed, std::uint32_t seat,
                                                  const pb::bestia::Observation& observation);

/// Belote: std::nullopt when the observation of the seat's first request shows the hand and
/// turned card `seed` deals (its first five cards, sorted as the engine's observation sorts
/// them); else why not.  std::invalid_argument as start_events.
std::optional<std::string> first_hand_dealt_from(const pb::GameSettings& settings,
                                                 std::uint64_t seed, std::uint32_t seat,
                                                 const pb::GameObservation& observation);

}  // namespace bisca::client
