// Helpers shared by the key registry (keys.cc, topic_keys.cc) and the docs generated
// from it (keys_docs.cc).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "floe/config/keys.h"

namespace floe::config::internal {

// "milliseconds" for a key ending in .ms, "bytes" for .bytes, else "".
std::string_view UnitOf(std::string_view name);
// 134217728 -> "128 MiB"; "" when the value is not a whole KiB, MiB or GiB.
std::string HumanBytes(int64_t v);
// The `defaults` and `topics[]` keys, appended in documentation order (topic_keys.cc).
void AppendTopicKeys(std::vector<KeyInfo>* keys);

}  // namespace floe::config::internal
