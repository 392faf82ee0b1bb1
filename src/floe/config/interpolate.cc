#include "floe/config/interpolate.h"

#include <fmt/format.h>

#include <cstdlib>

namespace floe::config {
namespace {

bool IsValidVariableName(std::string_view name) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    bool ok = c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
              (i > 0 && c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

}  // namespace

std::optional<std::string> ProcessEnv(const std::string& name) {
  // getenv is safe here: config is loaded once at start-up, before any thread sets the
  // environment.
  const char* value = std::getenv(name.c_str());  // NOLINT(concurrency-mt-unsafe)
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

Result<std::string> InterpolateEnv(std::string_view text, const EnvLookup& lookup) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    if (text.substr(i, 3) == "$${") {
      out += "${";
      i += 3;
      continue;
    }
    if (text.substr(i, 2) != "${") {
      out += text[i++];
      continue;
    }
    size_t close = text.find('}', i + 2);
    if (close == std::string_view::npos) {
      return InvalidConfig(
          "unterminated '${' (no closing '}'); write ${env:NAME}, or $${ for a literal "
          "'${'");
    }
    std::string_view inner = text.substr(i + 2, close - i - 2);
    if (!inner.starts_with("env:")) {
      return InvalidConfig(fmt::format(
          "'${{{}}}' is not supported; write ${{env:NAME}} to read an environment "
          "variable, or $${{ for a literal '${{'",
          inner));
    }
    std::string name(inner.substr(4));
    if (!IsValidVariableName(name)) {
      return InvalidConfig(
          fmt::format("'${{{}}}': '{}' is not a valid environment variable name "
                      "([A-Za-z_][A-Za-z0-9_]*)",
                      inner, name));
    }
    std::optional<std::string> value = lookup(name);
    if (!value) {
      return InvalidConfig(
          fmt::format("environment variable {} is not set (referenced as '${{env:{}}}'); "
                      "export it or "
                      "change the value",
                      name, name));
    }
    out += *value;
    i = close + 1;
  }
  return out;
}

}  // namespace floe::config
