// ${env:NAME} interpolation of config values (docs/configuration.md, "Values from the
// environment"). Stateless; thread-safe as long as the lookup is.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "floe/common/status.h"

namespace floe::config {

// Returns the variable's value, or nullopt when it is unset.
using EnvLookup = std::function<std::optional<std::string>(const std::string& name)>;

// The process environment (getenv).
std::optional<std::string> ProcessEnv(const std::string& name);

// Replaces every ${env:NAME} in `text` by the variable's value, once (values are not
// interpolated again); "$${" is a literal "${". Errors (InvalidConfig) say what is wrong
// without naming the key: the caller prefixes it.
Result<std::string> InterpolateEnv(std::string_view text,
                                   const EnvLookup& lookup = ProcessEnv);

}  // namespace floe::config
