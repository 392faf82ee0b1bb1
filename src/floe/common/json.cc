#include "floe/common/json.h"

namespace floe::json {
namespace {

// False when arrays/objects nest deeper than `max_depth` (string contents skipped).
bool NestingWithin(std::string_view text, int max_depth) {
  int depth = 0;
  bool in_string = false;
  bool escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) return false;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return true;
}

}  // namespace

template <typename J>
Result<J> Parse(std::string_view text, std::string_view what, int max_depth) {
  if (text.find('\0') != std::string_view::npos) {
    return InvalidInput(std::string(what) + " is not valid JSON: it contains a NUL byte");
  }
  if (max_depth > 0 && !NestingWithin(text, max_depth)) {
    return InvalidInput(std::string(what) + " nests deeper than " +
                        std::to_string(max_depth) + " levels");
  }
  // The throwing parser, caught here, because only its exception says where the text
  // goes wrong.
  try {
    return J::parse(text.begin(), text.end());
  } catch (const typename J::exception& e) {
    return InvalidInput(std::string(what) + " is not valid JSON: " + e.what());
  }
}

template <typename J>
J ParseOrDiscard(std::string_view text) {
  return J::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
}

template <typename J>
std::string Dump(const J& j) {
  return j.dump(-1, ' ', false, J::error_handler_t::replace);
}

template Result<::nlohmann::json> Parse(std::string_view, std::string_view, int);
template Result<::nlohmann::ordered_json> Parse(std::string_view, std::string_view, int);
template ::nlohmann::json ParseOrDiscard(std::string_view);
template ::nlohmann::ordered_json ParseOrDiscard(std::string_view);
template std::string Dump(const ::nlohmann::json&);
template std::string Dump(const ::nlohmann::ordered_json&);

Status Missing(const char* key, const char* what) {
  return InvalidInput(std::string(what) + ": missing required field '" + key + "'");
}

Status WrongType(const char* key, const char* what, const char* expected) {
  return InvalidInput(std::string(what) + ": field '" + key + "' must be " + expected);
}

}  // namespace floe::json
