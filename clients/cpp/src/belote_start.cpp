// Belote's start, as engine/bisca/engine/belote/_state.py deals it (BeloteState.__init__, then
// _start_deal(0)): the public DealStarted, each seat's first five cards (private, in the order
// of dealing), the public turned card; then the seat after the dealer bids.
#include <algorithm>
#include <array>
#include <cstddef>
#include <numeric>
#include <stdexcept>

#include "bisca/client/deal_rng.h"
#include "deal_starts.h"

namespace bisca::client::detail {
namespace {

constexpr std::uint32_t kSeats = 4;
constexpr std::uint32_t kEveryone = (1u << kSeats) - 1;
constexpr int kDeckSize = 32;
constexpr int kRanks = 8;
/// Dealt before the turned card: two rounds of packets (3 then 2 cards a seat).
constexpr std::array<std::size_t, 2> kPackets = {3, 2};

/// The engine's card of deck index `index` (suit * 8 + rank; the proto's enums are the
/// engine's members, in the same order, one above: 0 is UNSPECIFIED there).
pb::belote::Card card_at(int index) {
  pb::belote::Card card;
  card.set_suit(static_cast<pb::belote::Suit>(index / kRanks + 1));
  card.set_rank(static_cast<pb::belote::Rank>(index % kRanks + 1));
  return card;
}

/// The first dealer, once the settings are checked as BeloteSettings.__post_init__ does (a
/// match the engine refuses was not dealt at all).
std::uint32_t first_dealer(const pb::belote::Settings& settings) {
  const std::uint32_t dealer = settings.has_first_dealer() ? settings.first_dealer() : 0;
  if (dealer >= kSeats) {
    throw std::invalid_argument("first_dealer must be a seat 0..3, got " + std::to_string(dealer));
  }
  const bool duplicate = settings.has_duplicate() && settings.duplicate();
  // deals counts without a target score, max_deals with one; duplicate mode plays in pairs.
  const bool target = settings.has_target_score();
  if (target) check_setting("target_score", settings.target_score(), 1, 100'000);
  const char* name = target ? "max_deals" : "deals";
  const std::uint32_t deals = target ? (settings.has_max_deals() ? settings.max_deals() : 24)
                                     : (settings.has_deals() ? settings.deals() : 4);
  check_setting(name, deals, 1, 1000);
  if (duplicate && deals % 2 != 0) {
    throw std::invalid_argument(std::string("duplicate mode plays deals in pairs: ") + name +
                                " must be even, got " + std::to_string(deals));
  }
  return dealer;
}

}  // namespace

namespace {

/// The shuffled deck of deal 0 (stream 0, or 0 / 2 in duplicate mode: 0 either way; only the
/// second deal of a pair replays a shuffle, and says so in replay_of).
std::vector<int> first_deck(std::uint64_t seed) {
  std::vector<int> deck(kDeckSize);
  std::iota(deck.begin(), deck.end(), 0);
  DealRng::for_deal(seed, 0).shuffle(deck);
  return deck;
}

}  // namespace

std::vector<RecordedEvent> belote_start(const pb::belote::Settings& settings, std::uint64_t seed) {
  const std::uint32_t dealer = first_dealer(settings);
  const std::vector<int> deck = first_deck(seed);

  std::vector<RecordedEvent> events;
  pb::belote::Event started;
  started.mutable_deal_started()->set_dealer(dealer);  // deal 0, replay_of absent
  record(events, kEveryone, std::move(started));

  // Packets go round from the seat after the dealer, so a hand is not a run of the deck.
  const std::uint32_t first = (dealer + 1) % kSeats;
  std::array<pb::belote::Event, kSeats> dealt;
  std::size_t position = 0;
  for (const std::size_t packet : kPackets) {
    for (std::uint32_t offset = 0; offset < kSeats; ++offset) {
      const std::uint32_t seat = (first + offset) % kSeats;
      pb::belote::CardsDealt* cards = dealt[seat].mutable_cards_dealt();
      cards->set_seat(seat);
      for (std::size_t taken = 0; taken < packet; ++taken) {
        *cards->add_cards() = card_at(deck[position++]);
      }
    }
  }
  for (std::uint32_t offset = 0; offset < kSeats; ++offset) {
    const std::uint32_t seat = (first + offset) % kSeats;
    record(events, 1u << seat, std::move(dealt[seat]));
  }

  pb::belote::Event turned;
  *turned.mutable_card_turned()->mutable_card() = card_at(deck[position]);
  record(events, kEveryone, std::move(turned));
  return events;
}

std::vector<pb::belote::Card> belote_first_hand(const pb::belote::Settings& settings,
                                                std::uint64_t seed, std::uint32_t seat,
                                                std::optional<std::uint32_t> taker) {
  const std::uint32_t dealer = first_dealer(settings);
  const std::vector<int> deck = first_deck(seed);
  std::vector<int> hand;
  // The first five: packets of 3 then 2 from the seat after the dealer.
  const std::uint32_t after = (seat + kSeats - dealer - 1) % kSeats;  // seats dealt before it
  std::size_t round_start = 0;
  for (const std::size_t packet : kPackets) {
    const std::size_t from = round_start + after * packet;
    for (std::size_t taken = 0; taken < packet; ++taken) hand.push_back(deck[from + taken]);
    round_start += kSeats * packet;
  }
  const std::size_t turned = round_start;  // the card turned, under the packets
  if (taker) {
    // _complete_hands: from the seat after the dealer, the taker gets the turned card and 2
    // more, every other seat 3.
    std::size_t position = turned + 1;
    for (std::uint32_t offset = 1; offset <= kSeats; ++offset) {
      const std::uint32_t other = (dealer + offset) % kSeats;
      const std::size_t count = other == *taker ? 2 : 3;
      if (other == seat) {
        if (other == *taker) hand.push_back(deck[turned]);
        for (std::size_t taken = 0; taken < count; ++taken) hand.push_back(deck[position + taken]);
      }
      position += count;
    }
  }
  std::sort(hand.begin(), hand.end());  // as the engine's observation sorts it (card index)
  std::vector<pb::belote::Card> cards;
  for (const int index : hand) cards.push_back(card_at(index));
  return cards;
}

}  // namespace bisca::client::detail
