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

/// One line on stderr, when `level` is at or above the level in force (thread-safe).  The
/// text goes through printable() first.
void log(LogLevel level, const std::string& text);

/// `text` (UTF-8) without control characters and the escape sequences they start, so that
/// showing it cannot drive the terminal that shows it (retitle it, write the clipboard, clear
/// the screen, move the cursor to overprint a line): the rule of the Python and Node SDKs and
/// of the server.  ESC sequences go with their parameters: CSI `ESC [ ... final`, the string
/// commands OSC/DCS/SOS/PM/APC `ESC ] ... (BEL | ESC \)`, their 8-bit C1 forms (U+009B,
/// U+0090, U+0098, U+009D-U+009F, ended by BEL, `ESC \` or U+009C) and any other `ESC x`;
/// then every remaining C0 control but newline and tab, DEL and C1 control (U+0080-U+009F,
/// the two bytes 0xC2 0x80-0x9F in UTF-8) goes.  Every server-supplied string (ids, names,
/// messages, reasons, gRPC status details) passes through it before it enters a log line or
/// an exception's what(); the messages given to the bot and its hooks, and BotRejected's
/// code() and detail(), keep the raw values.
std::string printable(const std::string& text);

}  // namespace bisca::client
