// Bestia's start, as engine/bisca/engine/bestia/_state.py deals it (BestiaState._setup, then
// _start_hand(repeat=False)): the public HandStarted and antes, the hidden HandDealt (every
// hand, for the omniscient record only), the public turned trump; then the blind round (or
// the dealer's rubata).  A seat sees its own cards only after that round (HandLooked), which
// depends on the moves, so its start shows no card of its own.
#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string>

#include "bisca/client/deal_rng.h"
#include "deal_starts.h"

namespace bisca::client::detail {
namespace {

constexpr int kDeckSize = 40;
constexpr int kRanks = 10;
constexpr std::uint32_t kHandSize = 4;

/// The engine's card of deck index `index` (suit * 10 + rank; the proto's enums are the
/// engine's members, in the same order, one above: 0 is UNSPECIFIED there).
pb::bestia::Card card_at(int index) {
  pb::bestia::Card card;
  card.set_suit(static_cast<pb::bestia::Suit>(index / kRanks + 1));
  card.set_rank(static_cast<pb::bestia::Rank>(index % kRanks + 1));
  return card;
}

/// What the start depends on, once the settings are checked as BestiaSettings.__post_init__
/// does (a match the engine refuses was not dealt at all).
struct Table {
  std::uint32_t seats = 5;
  std::uint32_t stake = 10;
  bool dealer_antes = false;  // ante_mode "dealer"; "all" otherwise
  std::uint32_t rounds = 2;
  std::uint32_t first_dealer = 0;
};

Table table_of(const pb::bestia::Settings& settings) {
  Table table;
  if (settings.has_seats()) table.seats = settings.seats();
  if (settings.has_stake()) table.stake = settings.stake();
  if (settings.has_rounds()) table.rounds = settings.rounds();
  if (settings.has_first_dealer()) table.first_dealer = settings.first_dealer();
  const std::uint32_t giro_max_hands =
      settings.has_giro_max_hands() ? settings.giro_max_hands() : 10;
  check_setting("seats", table.seats, 4, 7);
  check_setting("stake", table.stake, 1, 1'000'000);
  if (settings.has_ante_mode() && settings.ante_mode() != "all") {
    if (settings.ante_mode() != "dealer") {
      throw std::invalid_argument("ante_mode must be 'all' or 'dealer', got '" +
                                  settings.ante_mode() + "'");
    }
    table.dealer_antes = true;
  }
  check_setting("rounds", table.rounds, 1, 100);
  check_setting("giro_max_hands", giro_max_hands, 1, 1000);
  check_setting("first_dealer", table.first_dealer, 0, table.seats - 1);
  return table;
}

}  // namespace

std::vector<RecordedEvent> bestia_start(const pb::bestia::Settings& settings, std::uint64_t seed) {
  const Table table = table_of(settings);
  const std::uint32_t n = table.seats;
  const std::uint32_t everyone = (1u << n) - 1;
  const std::uint32_t dealer = table.first_dealer;
  std::vector<RecordedEvent> events;

  pb::bestia::Event started;
  pb::bestia::HandStarted* hand = started.mutable_hand_started();
  hand->set_dealer(dealer);  // hand 0
  hand->set_giro(table.rounds == 1);  // the last round of deals is the giro
  hand->set_dealer_hand(1);
  record(events, everyone, std::move(started));

  // Into the empty pot of the first hand: every seat antes ("all"), or the dealer alone.
  for (std::uint32_t seat = 0; seat < n; ++seat) {
    if (table.dealer_antes && seat != dealer) continue;
    pb::bestia::Event ante;
    ante.mutable_ante_paid()->set_seat(seat);
    ante.mutable_ante_paid()->set_amount(table.stake);
    record(events, everyone, std::move(ante));
  }

  // The deck is a pile whose top is its last card; the engine shuffles only as far down as it
  // deals (4 cards a seat and the trump), which leaves those cards where a whole shuffle would.
  std::vector<int> deck(kDeckSize);
  std::iota(deck.begin(), deck.end(), 0);
  DealRng::for_deal(seed, 0).shuffle_top(deck, kHandSize * n + 1);
  // Two cards to each seat from the one after the dealer, the trump turned, two more each.
  const int top = kDeckSize - 1;
  const int second = top - 2 * static_cast<int>(n) - 1;
  std::vector<std::vector<int>> hands(n);
  for (std::uint32_t i = 0; i < n; ++i) {
    const int offset = 2 * static_cast<int>(i);
    std::vector<int> cards = {deck[top - offset], deck[top - offset - 1], deck[second - offset],
                              deck[second - offset - 1]};
    std::sort(cards.begin(), cards.end());  // a hand is kept in deck order
    hands[(dealer + 1 + i) % n] = std::move(cards);
  }
  pb::bestia::Event dealt;
  for (const std::vector<int>& cards : hands) {
    for (const int index : cards) *dealt.mutable_hand_dealt()->add_cards() = card_at(index);
  }
  record(events, 0, std::move(dealt));

  pb::bestia::Event turned;
  *turned.mutable_trump_turned()->mutable_card() = card_at(deck[top - 2 * static_cast<int>(n)]);
  turned.mutable_trump_turned()->set_number(1);
  record(events, everyone, std::move(turned));
  return events;
}

}  // namespace bisca::client::detail
