// JSON helpers private to floe/delta: nlohmann's ordered_json (Delta readers do not care
// about key order, people reading logs do), checked accessors that turn a wrong or
// missing member into a kInvalidRecord status naming the key (never an exception), and a
// tiny writer for JSON text that must hold exact numbers (decimal statistics).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "floe/common/status.h"

namespace floe::delta::internal {

using Json = ::nlohmann::ordered_json;

// Malformed log content (a JSON line, a checkpoint row, a schema string): the kind a
// decoder reports for "this document cannot be decoded".
inline Status Malformed(std::string message) {
  return MakeError(ErrorKind::kInvalidRecord, std::move(message));
}

// Parses without letting an exception escape; `what` names the document in errors.
Result<Json> Parse(std::string_view text, const std::string& what);
// Compact one-line text; invalid UTF-8 is replaced rather than thrown on.
std::string Dump(const Json& j);

// nullptr when absent or null (checkpoints spell "absent" as null).
const Json* Find(const Json& obj, const char* key);
Result<std::string> GetString(const Json& obj, const char* key, const char* what);
Result<std::optional<std::string>> GetOptString(const Json& obj, const char* key,
                                                const char* what);
Result<int64_t> GetInt64(const Json& obj, const char* key, const char* what);
Result<std::optional<int64_t>> GetOptInt64(const Json& obj, const char* key,
                                           const char* what);
Result<bool> GetBool(const Json& obj, const char* key, const char* what, bool dflt);

// Appends `s` as a JSON string literal (quoted, escaped; UTF-8 kept as is).
void AppendQuoted(std::string_view s, std::string* out);

}  // namespace floe::delta::internal
