// Checked access to JSON documents for every parser in Floe (Iceberg metadata, Delta log
// lines, REST request bodies): text is parsed without an exception escaping, and a wrong
// or missing member becomes a kInvalidInput status naming the document and the key.
//
// Templated on the nlohmann type because the users differ on purpose: Iceberg and the
// REST server use ::nlohmann::json, Delta ::nlohmann::ordered_json (Delta readers ignore
// key order, people reading logs do not). Parse and Dump are instantiated for both types
// in json.cc only: nlohmann's parser and serializer cost ~10 s of compile time per
// translation unit. All functions are pure and thread-safe.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "floe/common/status.h"

namespace floe::json {

// Parses `text`; `what` names the document in errors ("<what> is not valid JSON: ...").
// A NUL byte is refused (nlohmann stops at one as if the text ended there, and a raw NUL
// is never valid JSON), and so is nesting deeper than `max_depth` when it is positive
// (for untrusted input: a request body).
template <typename J>
Result<J> Parse(std::string_view text, std::string_view what, int max_depth = 0);
// The parsed value, or a discarded one (is_discarded()) when `text` is not JSON; for
// callers that fall back rather than fail.
template <typename J>
J ParseOrDiscard(std::string_view text);
// Compact one-line text; invalid UTF-8 (strings read from files or requests) is replaced
// rather than thrown on.
template <typename J>
std::string Dump(const J& j);

extern template Result<::nlohmann::json> Parse(std::string_view, std::string_view, int);
extern template Result<::nlohmann::ordered_json> Parse(std::string_view, std::string_view,
                                                       int);
extern template ::nlohmann::json ParseOrDiscard(std::string_view);
extern template ::nlohmann::ordered_json ParseOrDiscard(std::string_view);
extern template std::string Dump(const ::nlohmann::json&);
extern template std::string Dump(const ::nlohmann::ordered_json&);

// "<what>: missing required field '<key>'".
Status Missing(const char* key, const char* what);
// "<what>: field '<key>' must be <expected>".
Status WrongType(const char* key, const char* what, const char* expected);

template <typename J>
Status CheckObject(const J& j, const char* what) {
  if (!j.is_object()) return InvalidInput(std::string(what) + " must be a JSON object");
  return Status::OK();
}

// The member `key` of `obj`; nullptr when absent, when `obj` is not an object, or when
// the member is null and `null_is_absent` (writers, checkpoints among them, spell
// "absent" as null).
template <typename J>
const J* Find(const J& obj, const char* key, bool null_is_absent = true) {
  auto it = obj.find(key);  // end() when `obj` is not an object
  if (it == obj.end()) return nullptr;
  if (null_is_absent && it->is_null()) return nullptr;
  return &*it;
}

// ---- values ---------------------------------------------------------------------------
// `key` and `what` only name the value in errors.

template <typename J>
Result<int64_t> AsInt64(const J& v, const char* key, const char* what) {
  if (v.is_number_unsigned()) {
    auto u = v.template get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return WrongType(key, what, "a 64-bit integer");
    }
    return static_cast<int64_t>(u);
  }
  if (v.is_number_integer()) return v.template get<int64_t>();
  return WrongType(key, what, "an integer");
}

template <typename J>
Result<int> AsInt(const J& v, const char* key, const char* what) {
  FLOE_ASSIGN_OR_RAISE(int64_t x, AsInt64(v, key, what));
  if (x < std::numeric_limits<int>::min() || x > std::numeric_limits<int>::max()) {
    return WrongType(key, what, "a 32-bit integer");
  }
  return static_cast<int>(x);
}

template <typename J>
Result<std::vector<std::string>> AsStringList(const J& v, const char* key,
                                              const char* what) {
  if (!v.is_array()) return WrongType(key, what, "a list of strings");
  std::vector<std::string> out;
  out.reserve(v.size());
  for (const auto& e : v) {
    if (!e.is_string()) return WrongType(key, what, "a list of strings");
    out.push_back(e.template get<std::string>());
  }
  return out;
}

template <typename J>
Result<std::map<std::string, std::string>> AsStringMap(const J& v, const char* key,
                                                       const char* what) {
  if (!v.is_object()) return WrongType(key, what, "an object of string values");
  std::map<std::string, std::string> out;
  for (const auto& [k, val] : v.items()) {
    if (!val.is_string()) {
      return InvalidInput(std::string(what) + ": " + key + " '" + k +
                          "' must be a string");
    }
    out.emplace(k, val.template get<std::string>());
  }
  return out;
}

// ---- members: Get* require the member, GetOpt* return an empty value when absent ------

template <typename J>
Result<int64_t> GetInt64(const J& obj, const char* key, const char* what) {
  const J* v = Find(obj, key);
  if (!v) return Missing(key, what);
  return AsInt64(*v, key, what);
}

template <typename J>
Result<int> GetInt(const J& obj, const char* key, const char* what) {
  const J* v = Find(obj, key);
  if (!v) return Missing(key, what);
  return AsInt(*v, key, what);
}

template <typename J>
Result<std::optional<int64_t>> GetOptInt64(const J& obj, const char* key,
                                           const char* what) {
  const J* v = Find(obj, key);
  if (!v) return std::optional<int64_t>();
  FLOE_ASSIGN_OR_RAISE(int64_t x, AsInt64(*v, key, what));
  return std::optional<int64_t>(x);
}

template <typename J>
Result<std::optional<int>> GetOptInt(const J& obj, const char* key, const char* what) {
  const J* v = Find(obj, key);
  if (!v) return std::optional<int>();
  FLOE_ASSIGN_OR_RAISE(int x, AsInt(*v, key, what));
  return std::optional<int>(x);
}

template <typename J>
Result<std::string> GetString(const J& obj, const char* key, const char* what) {
  const J* v = Find(obj, key);
  if (!v) return Missing(key, what);
  if (!v->is_string()) return WrongType(key, what, "a string");
  return v->template get<std::string>();
}

template <typename J>
Result<std::optional<std::string>> GetOptString(const J& obj, const char* key,
                                                const char* what) {
  const J* v = Find(obj, key);
  if (!v) return std::optional<std::string>();
  if (!v->is_string()) return WrongType(key, what, "a string");
  return std::optional<std::string>(v->template get<std::string>());
}

template <typename J>
Result<bool> GetBool(const J& obj, const char* key, const char* what) {
  const J* v = Find(obj, key);
  if (!v) return Missing(key, what);
  if (!v->is_boolean()) return WrongType(key, what, "a boolean");
  return v->template get<bool>();
}

// `dflt` when absent.
template <typename J>
Result<bool> GetBool(const J& obj, const char* key, const char* what, bool dflt) {
  const J* v = Find(obj, key);
  if (!v) return dflt;
  if (!v->is_boolean()) return WrongType(key, what, "a boolean");
  return v->template get<bool>();
}

template <typename J>
Result<std::vector<std::string>> GetStringList(const J& obj, const char* key,
                                               const char* what) {
  const J* v = Find(obj, key);
  if (!v) return Missing(key, what);
  return AsStringList(*v, key, what);
}

template <typename J>
Result<std::vector<std::string>> GetOptStringList(const J& obj, const char* key,
                                                  const char* what) {
  const J* v = Find(obj, key);
  if (!v) return std::vector<std::string>{};
  return AsStringList(*v, key, what);
}

template <typename J>
Result<std::map<std::string, std::string>> GetOptStringMap(const J& obj, const char* key,
                                                           const char* what) {
  const J* v = Find(obj, key);
  if (!v) return std::map<std::string, std::string>{};
  return AsStringMap(*v, key, what);
}

}  // namespace floe::json
