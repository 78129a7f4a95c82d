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

}  // namespace

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
  const std::string line = timestamp() + " " + label(level) + " bisca.client: " + text + "\n";
  const std::lock_guard<std::mutex> hold(stderr_lock);
  std::cerr << line << std::flush;
}

}  // namespace bisca::client
