// Action <-> parsed JSON object, for the checkpoint reader (which turns Parquet rows into
// the same objects the JSON log holds). Private to floe/delta.
#pragma once

#include <optional>

#include "floe/delta/actions.h"
#include "floe/delta/json_internal.h"

namespace floe::delta::internal {

// `wrapper` is {"add": {...}} etc.; nullopt for action kinds this library does not model.
Result<std::optional<Action>> ActionFromObject(const Json& wrapper);

}  // namespace floe::delta::internal
