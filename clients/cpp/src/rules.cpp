#include "bisca/client/rules.h"

#include <array>
#include <stdexcept>
#include <string>

namespace bisca::client {
namespace {

constexpr int kWinTrump = 100;  // added to a trump's order: above every card of the led suit

/// A rank's entry in a table indexed by the proto's Rank value (RANK_UNSPECIFIED is 0).
template <typename Rank, std::size_t N>
int lookup(const std::array<int, N>& table, Rank rank) {
  const auto index = static_cast<std::size_t>(rank);
  if (index == 0 || index >= N) {
    throw std::invalid_argument("not a card's rank: " + std::to_string(index));
  }
  return table[index];
}

/// The strongest play of a trick, by the game's trick_strength.
template <typename Plays, typename Suit, typename Strength>
const auto& strongest(const Plays& plays, Suit trump, Strength strength) {
  if (plays.empty()) throw std::invalid_argument("a trick needs at least one card to have a winner");
  const Suit led = plays.Get(0).card().suit();
  const auto* best = &plays.Get(0);
  int best_strength = strength(best->card(), led, trump);
  for (const auto& play : plays) {
    const int value = strength(play.card(), led, trump);
    if (value > best_strength) {
      best = &play;
      best_strength = value;
    }
  }
  return *best;
}

/// The last trick's plays while it has no winner, else none.
template <typename Observation, typename Plays>
const Plays& on_the_table(const Observation& observation) {
  static const Plays kNone;
  const int count = observation.tricks_size();
  if (count > 0 && !observation.tricks(count - 1).has_winner()) {
    return observation.tricks(count - 1).plays();
  }
  return kNone;
}

}  // namespace

namespace belote {
namespace {

// Indexed by the proto's Rank: -, 7, 8, 9, 10, J, Q, K, A.
constexpr std::array<int, 9> kTrumpOrder = {0, 0, 1, 6, 4, 7, 2, 3, 5};  // J 9 A 10 K Q 8 7
constexpr std::array<int, 9> kPlainOrder = {0, 0, 1, 2, 6, 3, 4, 5, 7};  // A 10 K Q J 9 8 7
constexpr std::array<int, 9> kTrumpPoints = {0, 0, 0, 14, 10, 20, 3, 4, 11};
constexpr std::array<int, 9> kPlainPoints = {0, 0, 0, 0, 10, 2, 3, 4, 11};

}  // namespace

int trick_strength(const pb::Card& card, pb::Suit led_suit, pb::Suit trump) {
  if (card.suit() == trump) return kWinTrump + lookup(kTrumpOrder, card.rank());
  if (card.suit() == led_suit) return lookup(kPlainOrder, card.rank());
  return -1;
}

const pb::CardPlayed& winning_play(const Plays& plays, pb::Suit trump) {
  return strongest(plays, trump, trick_strength);
}

const Plays& current_trick(const pb::Observation& observation) {
  return on_the_table<pb::Observation, Plays>(observation);
}

int card_points(const pb::Card& card, pb::Suit trump) {
  return lookup(card.suit() == trump ? kTrumpPoints : kPlainPoints, card.rank());
}

}  // namespace belote

namespace bestia {
namespace {

// Indexed by the proto's Rank, which numbers the ranks by strength: -, 2 3 4 5 6 7 J Q K A.
constexpr std::array<int, 11> kOrder = {0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9};

}  // namespace

int trick_strength(const pb::Card& card, pb::Suit led_suit, pb::Suit trump) {
  if (card.suit() == trump) return kWinTrump + lookup(kOrder, card.rank());
  if (card.suit() == led_suit) return lookup(kOrder, card.rank());
  return -1;
}

const pb::CardPlayed& winning_play(const Plays& plays, pb::Suit trump) {
  return strongest(plays, trump, trick_strength);
}

const Plays& current_trick(const pb::Observation& observation) {
  return on_the_table<pb::Observation, Plays>(observation);
}

}  // namespace bestia

}  // namespace bisca::client
