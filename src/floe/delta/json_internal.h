// JSON helpers private to floe/delta: nlohmann's ordered_json (Delta readers do not care
// about key order, people reading logs do) read through the checked accessors of
// floe/common/json.h (a wrong or missing member is a kInvalidInput status naming the key,
// never an exception), and a tiny writer for JSON text that must hold exact numbers
// (decimal statistics).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "floe/common/json.h"

namespace floe::delta::internal {

using Json = ::nlohmann::ordered_json;

// Parses without letting an exception escape; `what` names the document in errors.
inline Result<Json> Parse(std::string_view text, std::string_view what) {
  return ::floe::json::Parse<Json>(text, what);
}
// Compact one-line text; invalid UTF-8 is replaced rather than thrown on.
inline std::string Dump(const Json& j) { return ::floe::json::Dump(j); }

// Appends `s` as a JSON string literal (quoted, escaped; UTF-8 kept as is).
void AppendQuoted(std::string_view s, std::string* out);

}  // namespace floe::delta::internal
