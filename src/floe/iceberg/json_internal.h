// Checked accessors over nlohmann::json for the parsers of this module: every wrong or
// missing member becomes an InvalidInput status naming the key, never an exception.
#pragma once

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "floe/iceberg/error.h"

namespace floe::iceberg::internal {

using Json = ::nlohmann::json;

inline Status Missing(const char* key, const char* what) {
  return InvalidInput(std::string(what) + ": missing required field '" + key + "'");
}
inline Status WrongType(const char* key, const char* what, const char* expected) {
  return InvalidInput(std::string(what) + ": field '" + key + "' must be " + expected);
}

inline Status CheckObject(const Json& j, const char* what) {
  if (!j.is_object()) return InvalidInput(std::string(what) + " must be a JSON object");
  return Status::OK();
}

// nullptr when absent (or null when `null_is_absent`).
inline const Json* Find(const Json& obj, const char* key, bool null_is_absent = true) {
  auto it = obj.find(key);
  if (it == obj.end()) return nullptr;
  if (null_is_absent && it->is_null()) return nullptr;
  return &*it;
}

inline Result<int64_t> AsInt64(const Json& v, const char* key, const char* what) {
  if (v.is_number_unsigned()) {
    auto u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return WrongType(key, what, "a 64-bit integer");
    }
    return static_cast<int64_t>(u);
  }
  if (v.is_number_integer()) return v.get<int64_t>();
  return WrongType(key, what, "an integer");
}

inline Result<int> AsInt(const Json& v, const char* key, const char* what) {
  FLOE_ASSIGN_OR_RAISE(int64_t x, AsInt64(v, key, what));
  if (x < std::numeric_limits<int>::min() || x > std::numeric_limits<int>::max()) {
    return WrongType(key, what, "a 32-bit integer");
  }
  return static_cast<int>(x);
}

inline Result<int64_t> GetInt64(const Json& obj, const char* key, const char* what) {
  const Json* v = Find(obj, key);
  if (!v) return Missing(key, what);
  return AsInt64(*v, key, what);
}

inline Result<int> GetInt(const Json& obj, const char* key, const char* what) {
  const Json* v = Find(obj, key);
  if (!v) return Missing(key, what);
  return AsInt(*v, key, what);
}

inline Result<std::optional<int64_t>> GetOptInt64(const Json& obj, const char* key,
                                                  const char* what) {
  const Json* v = Find(obj, key);
  if (!v) return std::optional<int64_t>();
  FLOE_ASSIGN_OR_RAISE(int64_t x, AsInt64(*v, key, what));
  return std::optional<int64_t>(x);
}

inline Result<std::optional<int>> GetOptInt(const Json& obj, const char* key,
                                            const char* what) {
  const Json* v = Find(obj, key);
  if (!v) return std::optional<int>();
  FLOE_ASSIGN_OR_RAISE(int x, AsInt(*v, key, what));
  return std::optional<int>(x);
}

inline Result<std::string> GetString(const Json& obj, const char* key, const char* what) {
  const Json* v = Find(obj, key);
  if (!v) return Missing(key, what);
  if (!v->is_string()) return WrongType(key, what, "a string");
  return v->get<std::string>();
}

inline Result<std::optional<std::string>> GetOptString(const Json& obj, const char* key,
                                                       const char* what) {
  const Json* v = Find(obj, key);
  if (!v) return std::optional<std::string>();
  if (!v->is_string()) return WrongType(key, what, "a string");
  return std::optional<std::string>(v->get<std::string>());
}

inline Result<bool> GetBool(const Json& obj, const char* key, const char* what) {
  const Json* v = Find(obj, key);
  if (!v) return Missing(key, what);
  if (!v->is_boolean()) return WrongType(key, what, "a boolean");
  return v->get<bool>();
}

// Text <-> JSON. Defined out of line in json_internal.cc so that nlohmann's parser and
// serializer are instantiated in one translation unit only (each costs ~10 s to compile).
// Parses text into JSON without exceptions escaping.
Result<Json> ParseJson(std::string_view text, const char* what);
// Parsed value, or a discarded value when `text` is not JSON.
Json ParseOrDiscard(std::string_view text);

}  // namespace floe::iceberg::internal

namespace floe::iceberg::internal {

// Compact text; invalid UTF-8 (possible in strings that came from files) is replaced
// rather than throwing.
std::string Dump(const Json& j);

}  // namespace floe::iceberg::internal
