// JSON for the parsers of this module: Iceberg's documents are ::nlohmann::json, read
// through the checked accessors of floe/common/json.h (json::GetString, ...: a wrong or
// missing member is an InvalidInput status naming the key, never an exception).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "floe/common/json.h"

namespace floe::iceberg::internal {

using Json = ::nlohmann::json;

inline Result<Json> ParseJson(std::string_view text, const char* what) {
  return ::floe::json::Parse<Json>(text, what);
}
inline Json ParseOrDiscard(std::string_view text) {
  return ::floe::json::ParseOrDiscard<Json>(text);
}
inline std::string Dump(const Json& j) { return ::floe::json::Dump(j); }

}  // namespace floe::iceberg::internal
