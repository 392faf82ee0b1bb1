// Dead-letter replay (`floe dlq replay TABLE`, docs/operations.md "Replaying dead
// letters"): the rows of a topic's dead-letter table are decoded again with the schemas
// the registry has now, and those that decode are appended to the topic's table with
// their original `_kafka` metadata, in its formats. Rows that still fail stay where they
// are and are counted.
//
// Exactly once: the table records which dead letters were replayed into it, per topic
// and partition as offset ranges, in the property floe.dlq.replayed.<topic>, set by the
// same commit that appends them. A row already in that set is never appended again, so a
// second run, or a run after one killed midway (its commit either landed, set included,
// or did not), adds nothing twice. The dead-letter table itself is left as it is.
//
// Threading: one thread (the command's).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "floe/catalog/catalog.h"
#include "floe/common/status.h"
#include "floe/config/config.h"

namespace floe::registry {
class SchemaSource;
}
namespace floe::storage {
class FileIO;
}

namespace floe::pipeline {

inline constexpr char kReplayedKeyPrefix[] = "floe.dlq.replayed.";

struct ReplayResult {
  std::string topic;
  int64_t rows = 0;           // dead letters read
  int64_t replayed = 0;       // appended to the table by this run
  int64_t already = 0;        // appended by an earlier run
  int64_t still_failing = 0;  // stay in the dead-letter table
  std::string example_error;  // one of the still failing rows' errors
};

// `table`: the topic's table (not its `__dlq` table). Errors: kNotFound (no dead-letter
// table), kInvalidConfig (its topic is not configured to write `table`), catalog,
// storage and registry outages as they come (nothing is committed then).
Result<ReplayResult> ReplayDeadLetters(const config::Config& config,
                                       const catalog::TableIdent& table,
                                       registry::SchemaSource* schemas,
                                       catalog::Catalog* catalog, storage::FileIO* io);

}  // namespace floe::pipeline
