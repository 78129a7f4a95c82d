// Verifiable dealing (arena.proto, MatchStarted.deal_commitment): before the first card the
// server commits to SHA-256(deal_salt || seed as 8 bytes big-endian || match id in UTF-8);
// MatchEnded reveals the salt and the seed, so the bot can check that the seed was fixed before
// play (not yet that the cards came from it: deal_start.h deals the start again from the seed,
// and the session does both).  SHA-256 is OpenSSL's (libcrypto), which gRPC links anyway.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "bisca/client/types.h"

namespace bisca::client {

/// The 32 raw bytes of SHA-256(salt || seed as 8 bytes big-endian || match_id).
std::string deal_commitment(std::string_view salt, std::uint64_t seed, std::string_view match_id);

/// Compares what MatchEnded reveals with the commitment MatchStarted made (empty: none): the
/// hash alone, so verified, mismatch, not_committed or sealed, never rigged.
DealCheck check_deal(const std::string& commitment, const pb::MatchEnded& ended);

/// Lower-case hexadecimal, for logs.
std::string hex(std::string_view bytes);

}  // namespace bisca::client
