#include "bisca/client/deal_check.h"

#include <openssl/evp.h>

#include <stdexcept>

namespace bisca::client {

std::string deal_commitment(std::string_view salt, std::uint64_t seed, std::string_view match_id) {
  std::string preimage(salt);
  for (int shift = 56; shift >= 0; shift -= 8) {  // the seed as 8 bytes, big-endian
    preimage.push_back(static_cast<char>((seed >> shift) & 0xff));
  }
  preimage.append(match_id);
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_Digest(preimage.data(), preimage.size(), digest, &length, EVP_sha256(), nullptr) != 1) {
    throw std::runtime_error("OpenSSL could not compute a SHA-256");
  }
  return std::string(reinterpret_cast<const char*>(digest), length);
}

DealCheck check_deal(const std::string& commitment, const pb::MatchEnded& ended) {
  if (commitment.empty()) return DealCheck::not_committed;
  if (ended.deal_sealed()) return DealCheck::sealed;
  // No salt revealed is a mismatch too: the server committed to a deal and did not open it.
  return deal_commitment(ended.deal_salt(), ended.seed(), ended.match_id()) == commitment
             ? DealCheck::verified
             : DealCheck::mismatch;
}

std::string hex(std::string_view bytes) {
  static const char digits[] = "0123456789abcdef";
  std::string text;
  text.reserve(bytes.size() * 2);
  for (const char byte : bytes) {
    const auto value = static_cast<unsigned char>(byte);
    text.push_back(digits[value >> 4]);
    text.push_back(digits[value & 0x0f]);
  }
  return text;
}

}  // namespace bisca::client
