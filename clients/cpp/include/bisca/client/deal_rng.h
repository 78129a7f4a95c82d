// The engine's random generator (engine/bisca/engine/_rng.py), ported bit for bit: the server
// deals every card from it, so a bot that holds the same generator can deal a match's start
// again from the seed MatchEnded reveals (deal_start.h) and catch a server that committed to
// one seed and dealt from another.
//
// SplitMix64 (Steele, Lea and Flood, OOPSLA 2014); the stream of one deal is derived from
// (match seed, deal number, stream) through the same finaliser; below(n) is Lemire's
// multiply-and-reject on 64-bit words; shuffle is Fisher-Yates from the last position down.
// tests/client/test_cpp_deal_start.py pins its outputs to the engine's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace bisca::client {

class DealRng {
 public:
  /// A generator in the raw state `state` (the engine seeds it only through for_deal).
  explicit DealRng(std::uint64_t state) : state_(state) {}

  /// The stream of deal `deal_number` of the match seeded with `seed`; `stream` separates
  /// independent uses inside one deal (0 is the deal's own).
  static DealRng for_deal(std::uint64_t seed, std::uint64_t deal_number, std::uint64_t stream = 0);

  /// The next 64-bit output.
  std::uint64_t next64();

  /// An unbiased integer in [0, n) for 1 <= n < 2^32 (std::invalid_argument otherwise).
  std::uint64_t below(std::uint64_t n);

  /// Fisher-Yates in place.
  template <typename T>
  void shuffle(std::vector<T>& items) {
    shuffle_top(items, items.empty() ? 0 : items.size() - 1);
  }

  /// The first `steps` steps of shuffle(): they fix the last `steps` positions as the whole
  /// shuffle would (Bestia draws its deck lazily, from the top, and never further).
  template <typename T>
  void shuffle_top(std::vector<T>& items, std::size_t steps) {
    const std::size_t last = items.empty() ? 0 : items.size() - 1;
    if (steps > last) {
      throw std::invalid_argument("a shuffle of " + std::to_string(items.size()) +
                                  " items has 0.." + std::to_string(last) + " steps");
    }
    for (std::size_t i = last; i > last - steps; --i) {
      std::swap(items[i], items[below(i + 1)]);
    }
  }

  std::uint64_t state() const { return state_; }

 private:
  std::uint64_t state_;
};

}  // namespace bisca::client
