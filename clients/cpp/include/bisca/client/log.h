// The SDK's logging: lines on stderr (never stdout, which a bot may use for its own output),
// from the level set here or $BISCA_LOG_LEVEL (debug, info, warn, error; default info), in the
// Node SDK's format: "2024-05-01T12:00:00.000Z INFO bisca.client: text".
#pragma once

#include <string>

namespace bisca::client {

enum class LogLevel { debug = 10, info = 20, warn = 30, error = 40, silent = 100 };

/// The level in force: set_log_level's, else $BISCA_LOG_LEVEL's (read once), else info.
LogLevel log_level();
void set_log_level(LogLevel level);
/// The level of a name (debug, info, warn, error, silent; std::invalid_argument otherwise).
LogLevel log_level_named(const std::string& name);

/// One line on stderr, when `level` is at or above the level in force (thread-safe).
void log(LogLevel level, const std::string& text);

}  // namespace bisca::client
