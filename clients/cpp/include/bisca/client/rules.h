// The rules a bot keeps needing, on the server's own messages (the C++ twin of the engine's
// current_trick, winning_play, trick_strength, team_of and card points that the Python SDK's
// bots use, and of the Node SDK's rules): which trick is on the table, who is winning it, how
// strongly a card competes in it, what a card is worth, who the partner is.
//
//   namespace rules = bisca::client::belote;
//   const auto& observation = request.observation().belote();
//   const auto& plays = rules::current_trick(observation);
//   if (!plays.empty() &&
//       rules::winning_play(plays, observation.trump()).seat() == rules::partner_of(request.seat()))
//     ...  // the partner is winning this trick
//
// Each game's trick_strength gives the engine's numbers (docs/rules): every trump above every
// card of the led suit (100 + its order in the trump suit), a card of the led suit its order in
// that suit, any other card -1 (it cannot win).  tests/client checks every helper against the
// engine on positions of seeded random matches.
#pragma once

#include <cstdint>

#include "bisca/v1/belote.pb.h"
#include "bisca/v1/bestia.pb.h"

namespace bisca::client {

namespace belote {

namespace pb = ::bisca::v1::belote;
using Plays = google::protobuf::RepeatedPtrField<pb::CardPlayed>;

/// How strongly `card` competes in a trick led in `led_suit` with `trump` as trump: the card
/// of highest strength wins the trick; -1 for a card that cannot win it.  Trumps in the order
/// J 9 A 10 K Q 8 7, a plain suit in the order A 10 K Q J 9 8 7.
int trick_strength(const pb::Card& card, pb::Suit led_suit, pb::Suit trump);

/// The play winning the trick `plays` (the cards in the order played): for a complete trick
/// its winner, for a trick still being played the seat winning it so far.  Throws
/// std::invalid_argument for a trick without a card.
const pb::CardPlayed& winning_play(const Plays& plays, pb::Suit trump);

/// The plays on the table in the trick being played, in the order played: empty when no trick
/// is under way (before card play, when the seat to act leads, once the deal is over).
const Plays& current_trick(const pb::Observation& observation);

/// The card points of `card` with `trump` as trump (they add up to 152 in a deal): trump J 20,
/// 9 14, A 11, 10 10, K 4, Q 3; plain A 11, 10 10, K 4, Q 3, J 2; the others 0.
int card_points(const pb::Card& card, pb::Suit trump);

/// The team of a seat: 0 for seats 0 and 2, 1 for seats 1 and 3.
constexpr std::uint32_t team_of(std::uint32_t seat) { return seat & 1U; }

/// The seat opposite, on the same team.
constexpr std::uint32_t partner_of(std::uint32_t seat) { return (seat + 2) % 4; }

}  // namespace belote

namespace bestia {

namespace pb = ::bisca::v1::bestia;
using Plays = google::protobuf::RepeatedPtrField<pb::CardPlayed>;

/// As belote::trick_strength, with every suit in the order A K Q J 7 6 5 4 3 2.
int trick_strength(const pb::Card& card, pb::Suit led_suit, pb::Suit trump);

/// As belote::winning_play.
const pb::CardPlayed& winning_play(const Plays& plays, pb::Suit trump);

/// As belote::current_trick.  (Bestia has no teams and no card points: a trick is worth its
/// share of the pot.)
const Plays& current_trick(const pb::Observation& observation);

}  // namespace bestia

}  // namespace bisca::client
