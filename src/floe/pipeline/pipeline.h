// Pipeline: fetch → decode → table writer → committer, for every enabled topic
// (ARCHITECTURE.md §1). One thread runs the loop; Kafka, the registry, storage and the catalog
// are reached only through their module interfaces.
#pragma once

#include <atomic>
#include <memory>

#include "floe/common/status.h"
#include "floe/config/config.h"

namespace floe::pipeline {

class Pipeline {
 public:
  static Result<std::unique_ptr<Pipeline>> Make(const config::Config& config);
  virtual ~Pipeline() = default;
  // Runs until `stop` becomes true, then flushes and commits every table and returns OK.
  // Returns an error only for failures that need an operator (e.g. an invalid config found
  // at run time); record-level problems suspend or skip per topic.
  virtual Status Run(std::atomic<bool>& stop) = 0;
};

}  // namespace floe::pipeline
