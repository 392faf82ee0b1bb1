// The checks behind GET /health and GET /ready for `floe run` (docs/operations.md), on a
// thread of their own so a probe request never waits on Kafka or a store:
//
// - alive: the pipeline's loop published its status within `health.stall.ms`;
// - ready: alive, started, and, checked every `health.probe.interval.ms` with a 2 s
//   bound each: a Kafka broker answers a metadata request (on a client of the probes'
//   own, the pipeline's is used by its thread only), the catalog lists its namespaces,
//   the warehouse's storage answers a lookup; and no topic is suspended (unless
//   `health.ready.when.suspended`).
//
// Threading: NotAlive/NotReady are called from the server's threads and read the last
// results under a lock.
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "floe/common/status.h"
#include "floe/config/config.h"

namespace floe::catalog {
class Catalog;
}
namespace floe::kafka {
class Consumer;
}
namespace floe::pipeline {
class AdminBridge;
}
namespace floe::storage {
class FileIO;
}

namespace floe::cli {

class Probes {
 public:
  // Borrows `bridge`, which must outlive this.
  Probes(const config::Config& config, const pipeline::AdminBridge* bridge);
  ~Probes();  // Stop()
  Probes(const Probes&) = delete;
  Probes& operator=(const Probes&) = delete;

  // Starts checking; `catalog` and `io` must outlive this. Until then NotReady says
  // "starting".
  Status Start(catalog::Catalog* catalog, storage::FileIO* io);

  // Ends the checks (before what Start borrowed goes). Idempotent.
  void Stop();
  // Ends the checks, waiting at most `wait_ms` for a check that is running: true when the
  // checks' thread ended. False when a check still hangs (a catalog or a store that does
  // not answer): the thread still borrows what Start was given, so the caller must not
  // free it, and leaves the process at once (`floe run` does, once it has committed).
  bool StopWithin(int64_t wait_ms);

  std::vector<std::string> NotAlive() const;
  std::vector<std::string> NotReady() const;

 private:
  void Loop();
  std::vector<std::string> CheckDependencies();
  void Running(std::string check);

  const config::Config& config_;
  const pipeline::AdminBridge* bridge_;
  catalog::Catalog* catalog_ = nullptr;
  storage::FileIO* io_ = nullptr;
  std::string warehouse_uri_;
  std::unique_ptr<kafka::Consumer> kafka_;

  mutable std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false;
  bool loop_done_ = false;                 // the checks' thread has left its loop
  bool checked_ = false;                   // a first round of checks has finished
  std::vector<std::string> dependencies_;  // what the last round found unreachable
  // The check running now ("" between rounds) and since when (MonotonicMs): a client
  // that retries inside one call (S3 through an outage) is reported once it takes
  // longer than the bound, without waiting for it to give up.
  std::string running_;
  int64_t running_since_ms_ = 0;
  std::thread thread_;
};

}  // namespace floe::cli
