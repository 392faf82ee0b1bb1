// Table maintenance inside `floe run` (docs/maintenance.md): every
// `maintenance.interval.ms`, one pass (maintenance::MaintainTable: compaction, then
// orphan cleanup) over every table Floe writes, on a thread of its own at the lowest CPU
// priority, sleeping after each table so that it uses at most `maintenance.cpu.percent`
// of one core: ingestion keeps its CPU. The same code as `floe maintain`.
//
// Threading: Start/Stop from the main thread; the loop runs on its own thread and shares
// the catalog and FileIO (thread-safe) with the pipeline. Stop interrupts a rewrite
// between batches (its files are deleted; nothing was committed).
#pragma once

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "floe/catalog/catalog.h"
#include "floe/config/config.h"

namespace floe::storage {
class FileIO;
}

namespace floe::cli {

class MaintenanceLoop {
 public:
  explicit MaintenanceLoop(const config::Config& config) : config_(config) {}
  ~MaintenanceLoop() { Stop(); }
  MaintenanceLoop(const MaintenanceLoop&) = delete;
  MaintenanceLoop& operator=(const MaintenanceLoop&) = delete;

  // Nothing runs when maintenance.interval.ms is 0. `catalog` and `io` must outlive Stop.
  void Start(catalog::Catalog* catalog, storage::FileIO* io);
  void Stop();

 private:
  void Loop();
  // One pass; false when stopped during it.
  bool Pass();
  // Sleeps `ms` or until stopped; false when stopped.
  bool Sleep(int64_t ms);

  const config::Config config_;
  catalog::Catalog* catalog_ = nullptr;
  storage::FileIO* io_ = nullptr;
  std::mutex mu_;
  std::condition_variable wake_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace floe::cli
