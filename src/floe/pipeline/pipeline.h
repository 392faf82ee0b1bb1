// Pipeline: fetch → decode → table writer → committer, for every enabled topic
// (ARCHITECTURE.md §1). One thread runs the loop; Kafka, the registry, storage and the catalog
// are reached only through their module interfaces.
#pragma once

#include <atomic>
#include <memory>

#include "floe/common/status.h"
#include "floe/config/config.h"

namespace floe::catalog {
class Catalog;
}
namespace floe::storage {
class FileIO;
}

namespace floe::pipeline {

class Pipeline {
 public:
  // Commits go through `catalog` (shared with the REST server); files are written through
  // `io`. Both must outlive the pipeline.
  static Result<std::unique_ptr<Pipeline>> Make(const config::Config& config,
                                                catalog::Catalog* catalog,
                                                storage::FileIO* io);
  virtual ~Pipeline() = default;
  // Runs until `stop` becomes true, then flushes and commits every table and returns OK.
  // Returns an error only for failures that need an operator (e.g. an invalid config found
  // at run time); record-level problems suspend or skip per topic.
  virtual Status Run(std::atomic<bool>& stop) = 0;
};

}  // namespace floe::pipeline
