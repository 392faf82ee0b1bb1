// Naming rules shared by the config parser (config.cc) and topic resolution (topics.cc).
#pragma once

#include <cstddef>

namespace floe::config::internal {

inline constexpr size_t kMaxTableNameLength = 128;

// A character of a table identifier: [a-z0-9_].
inline bool IsTableChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

}  // namespace floe::config::internal
