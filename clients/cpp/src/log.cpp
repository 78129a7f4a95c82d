#include "bisca/client/log.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <mutex>
#include <stdexcept>

namespace bisca::client {
namespace {

constexpr int kUnset = -1;
std::atomic<int> chosen_level{kUnset};
std::mutex stderr_lock;  // one whole line at a time, whatever thread logs

LogLevel level_from_environment() {
  const char* name = std::getenv("BISCA_LOG_LEVEL");
  if (name == nullptr || *name == '\0') return LogLevel::info;
  try {
    return log_level_named(name);
  } catch (const std::invalid_argument& error) {
    // A typo in a variable should not stop the bot: say so once and keep the default.
    std::cerr << "bisca.client: " << error.what() << "; logging at info\n";
    return LogLevel::info;
  }
}

const char* label(LogLevel level) {
  switch (level) {
    case LogLevel::debug: return "DEBUG";
    case LogLevel::info: return "INFO";
    case LogLevel::warn: return "WARN";
    case LogLevel::error: return "ERROR";
    case LogLevel::silent: break;
  }
  return "?";
}

/// The current UTC time as ISO 8601 with milliseconds, like JavaScript's toISOString().
std::string timestamp() {
  using std::chrono::system_clock;
  const auto now = system_clock::now();
  const std::time_t seconds = system_clock::to_time_t(now);
  const auto millis =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S", &utc);
  char text[40];
  std::snprintf(text, sizeof text, "%s.%03dZ", date, static_cast<int>(millis));
  return text;
}

constexpr unsigned char kEsc = 0x1b;
constexpr unsigned char kBel = 0x07;

/// The C1 control at `at` (U+0080-U+009F: 0xC2 then 0x80-0x9F), as 0x80-0x9F, else 0.  0xC2 is
/// never a continuation byte, so a byte-wise look finds only whole characters.
unsigned char c1_at(const std::string& text, std::size_t at) {
  if (at + 1 >= text.size() || static_cast<unsigned char>(text[at]) != 0xc2) return 0;
  const auto next = static_cast<unsigned char>(text[at + 1]);
  return next >= 0x80 && next <= 0x9f ? next : 0;
}

bool in(unsigned char byte, unsigned char low, unsigned char high) {
  return byte >= low && byte <= high;
}

/// Where a CSI's parameters, intermediates and final byte (if any) end, from `at`.
std::size_t after_csi(const std::string& text, std::size_t at) {
  while (at < text.size() && in(static_cast<unsigned char>(text[at]), 0x30, 0x3f)) ++at;
  while (at < text.size() && in(static_cast<unsigned char>(text[at]), 0x20, 0x2f)) ++at;
  if (at < text.size() && in(static_cast<unsigned char>(text[at]), 0x40, 0x7e)) ++at;
  return at;
}

/// Where a string command's body and its terminator (BEL, ESC \ or ST, if any) end, from `at`.
std::size_t after_string_command(const std::string& text, std::size_t at) {
  while (at < text.size()) {
    const auto byte = static_cast<unsigned char>(text[at]);
    if (byte == kBel) return at + 1;
    if (byte == kEsc) return at + 1 < text.size() && text[at + 1] == '\\' ? at + 2 : at;
    if (c1_at(text, at) == 0x9c) return at + 2;
    ++at;
  }
  return at;
}

}  // namespace

std::string printable(const std::string& text) {
  std::string kept;
  kept.reserve(text.size());
  std::size_t at = 0;
  while (at < text.size()) {
    const auto byte = static_cast<unsigned char>(text[at]);
    const unsigned char c1 = c1_at(text, at);
    const auto next = at + 1 < text.size() ? static_cast<unsigned char>(text[at + 1]) : 0;
    if (byte == kEsc && next == '[') {
      at = after_csi(text, at + 2);
    } else if (c1 == 0x9b) {
      at = after_csi(text, at + 2);
    } else if (byte == kEsc && (next == ']' || next == 'P' || next == 'X' || next == '^' ||
                                next == '_')) {
      at = after_string_command(text, at + 2);
    } else if (c1 == 0x90 || c1 == 0x98 || c1 == 0x9d || c1 == 0x9e || c1 == 0x9f) {
      at = after_string_command(text, at + 2);
    } else if (byte == kEsc) {  // any other ESC x: intermediates, then one final byte
      ++at;
      while (at < text.size() && in(static_cast<unsigned char>(text[at]), 0x20, 0x2f)) ++at;
      if (at < text.size() && in(static_cast<unsigned char>(text[at]), 0x30, 0x7e)) ++at;
    } else if (c1 != 0) {
      at += 2;
    } else if ((byte < 0x20 && byte != '\n' && byte != '\t') || byte == 0x7f) {
      ++at;
    } else {
      kept.push_back(text[at]);
      ++at;
    }
  }
  return kept;
}

LogLevel log_level_named(const std::string& name) {
  if (name == "debug") return LogLevel::debug;
  if (name == "info") return LogLevel::info;
  if (name == "warn" || name == "warning") return LogLevel::warn;
  if (name == "error") return LogLevel::error;
  if (name == "silent") return LogLevel::silent;
  throw std::invalid_argument("unknown log level \"" + name +
                              "\"; known: debug, info, warn, error, silent");
}

LogLevel log_level() {
  int level = chosen_level.load();
  if (level == kUnset) {
    level = static_cast<int>(level_from_environment());
    int expected = kUnset;
    chosen_level.compare_exchange_strong(expected, level);
    level = chosen_level.load();
  }
  return static_cast<LogLevel>(level);
}

void set_log_level(LogLevel level) { chosen_level.store(static_cast<int>(level)); }

void log(LogLevel level, const std::string& text) {
  if (level == LogLevel::silent || static_cast<int>(level) < static_cast<int>(log_level())) return;
  // printable() again: the callers clean what the server sent, and a line that would still
  // carry an escape sequence is cleaned here before it reaches a terminal.
  const std::string line =
      timestamp() + " " + label(level) + " bisca.client: " + printable(text) + "\n";
  const std::lock_guard<std::mutex> hold(stderr_lock);
  std::cerr << line << std::flush;
}

}  // namespace bisca::client
