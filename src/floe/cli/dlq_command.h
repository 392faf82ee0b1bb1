// `floe dlq replay --config FILE TABLE`: decodes the dead letters of TABLE's topic again
// with the registry's current schemas and appends those that decode to TABLE
// (pipeline/replay.h); prints what it did. Exit status 0 when it ran (rows that still
// fail are counted, not an error), 1 on an outage or a missing table, 2 on a config that
// does not write TABLE.
#pragma once

#include "floe/catalog/catalog.h"
#include "floe/config/config.h"

namespace floe::cli {

int DlqReplayCommand(const config::Config& config, const catalog::TableIdent& table);

}  // namespace floe::cli
