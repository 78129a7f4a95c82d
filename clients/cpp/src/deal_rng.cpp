#include "bisca/client/deal_rng.h"

namespace bisca::client {
namespace {

constexpr std::uint64_t kGoldenGamma = 0x9E3779B97F4A7C15ULL;
constexpr std::uint64_t kStreamGamma = 0xD1B54A32D192ED03ULL;

// Unsigned arithmetic wraps modulo 2^64: the `& _MASK64` after every product in _rng.py.
std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

/// The high 64 bits of the 128-bit product z * n, for n < 2^32, in portable 64-bit math: with
/// z = hi * 2^32 + lo, z * n = (hi * n + (lo * n >> 32)) * 2^32 + (lo * n mod 2^32), and that
/// sum cannot overflow ((2^32 - 1)^2 + 2^32 < 2^64).
std::uint64_t high_word(std::uint64_t z, std::uint64_t n) {
  const std::uint64_t low = (z & 0xFFFFFFFFULL) * n;
  return ((z >> 32) * n + (low >> 32)) >> 32;
}

}  // namespace

DealRng DealRng::for_deal(std::uint64_t seed, std::uint64_t deal_number, std::uint64_t stream) {
  std::uint64_t state = mix64(seed ^ kGoldenGamma);
  state = mix64(state ^ ((deal_number + 1) * kGoldenGamma));
  state = mix64(state ^ ((stream + 1) * kStreamGamma));
  return DealRng(state);
}

std::uint64_t DealRng::next64() {
  state_ += kGoldenGamma;
  return mix64(state_);
}

std::uint64_t DealRng::below(std::uint64_t n) {
  if (n < 1 || n >= (std::uint64_t{1} << 32)) {
    throw std::invalid_argument("below() takes 1 <= n < 2**32, got " + std::to_string(n));
  }
  // 2^64 mod n: the low words below it are the ones a multiply-and-reject must draw again, or
  // the small results would come up more often than the large ones.
  const std::uint64_t threshold = (0 - n) % n;
  while (true) {
    const std::uint64_t z = next64();
    if (z * n >= threshold) return high_word(z, n);
  }
}

}  // namespace bisca::client
