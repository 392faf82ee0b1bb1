// `floe maintain --config FILE [--table NS.TABLE] [--dry-run]`: one maintenance pass
// (maintenance/maintain.h) over every table Floe writes, or one; prints a line per table
// and, in a dry run, every file it would delete. Exit status 0 when every table was
// maintained, 1 when one failed (the others still ran), 2 on a bad config or table.
#pragma once

#include <optional>

#include "floe/catalog/catalog.h"
#include "floe/config/config.h"

namespace floe::cli {

int MaintainCommand(const config::Config& config,
                    const std::optional<catalog::TableIdent>& table, bool dry_run);

}  // namespace floe::cli
