// Small helpers for the SDK's log lines (private to the library).
#pragma once

#include <sstream>
#include <string>

#include <google/protobuf/message.h>

namespace bisca::client::detail {

/// Every argument streamed into one string: cat("request ", id, " attempt ", 2).
template <typename... Parts>
std::string cat(const Parts&... parts) {
  std::ostringstream text;
  (text << ... << parts);
  return text.str();
}

/// A message on one line, in protobuf's text format ("belote { pass { } }"), for logs.
inline std::string brief(const google::protobuf::Message& message) {
  std::string text = message.ShortDebugString();
  return text.empty() ? "{}" : text;
}

}  // namespace bisca::client::detail
