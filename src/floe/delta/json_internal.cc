#include "floe/delta/json_internal.h"

#include <limits>

namespace floe::delta::internal {

Result<Json> Parse(std::string_view text, const std::string& what) {
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Malformed(what + " is not valid JSON");
  return j;
}

std::string Dump(const Json& j) {
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

const Json* Find(const Json& obj, const char* key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return nullptr;
  return &*it;
}

namespace {

Status Missing(const char* key, const char* what) {
  return Malformed(std::string(what) + ": missing required field '" + key + "'");
}

Status WrongType(const char* key, const char* what, const char* expected) {
  return Malformed(std::string(what) + ": field '" + key + "' must be " + expected);
}

Result<int64_t> AsInt64(const Json& v, const char* key, const char* what) {
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

}  // namespace

Result<std::string> GetString(const Json& obj, const char* key, const char* what) {
  const Json* v = Find(obj, key);
  if (!v) return Missing(key, what);
  if (!v->is_string()) return WrongType(key, what, "a string");
  return v->get<std::string>();
}

Result<std::optional<std::string>> GetOptString(const Json& obj, const char* key,
                                                const char* what) {
  const Json* v = Find(obj, key);
  if (!v) return std::optional<std::string>();
  if (!v->is_string()) return WrongType(key, what, "a string");
  return std::optional<std::string>(v->get<std::string>());
}

Result<int64_t> GetInt64(const Json& obj, const char* key, const char* what) {
  const Json* v = Find(obj, key);
  if (!v) return Missing(key, what);
  return AsInt64(*v, key, what);
}

Result<std::optional<int64_t>> GetOptInt64(const Json& obj, const char* key,
                                           const char* what) {
  const Json* v = Find(obj, key);
  if (!v) return std::optional<int64_t>();
  FLOE_ASSIGN_OR_RAISE(int64_t x, AsInt64(*v, key, what));
  return std::optional<int64_t>(x);
}

Result<bool> GetBool(const Json& obj, const char* key, const char* what, bool dflt) {
  const Json* v = Find(obj, key);
  if (!v) return dflt;
  if (!v->is_boolean()) return WrongType(key, what, "a boolean");
  return v->get<bool>();
}

void AppendQuoted(std::string_view s, std::string* out) {
  static constexpr char kHex[] = "0123456789abcdef";
  out->push_back('"');
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    switch (c) {
      case '"':
        out->append("\\\"");
        break;
      case '\\':
        out->append("\\\\");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\r':
        out->append("\\r");
        break;
      case '\t':
        out->append("\\t");
        break;
      default:
        if (u < 0x20) {
          out->append("\\u00");
          out->push_back(kHex[u >> 4]);
          out->push_back(kHex[u & 0xF]);
        } else {
          out->push_back(c);
        }
    }
  }
  out->push_back('"');
}

}  // namespace floe::delta::internal
