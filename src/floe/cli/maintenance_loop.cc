#include "floe/cli/maintenance_loop.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>

#include "floe/common/log.h"
#include "floe/common/util.h"
#include "floe/maintenance/maintain.h"

namespace floe::cli {

void MaintenanceLoop::Start(catalog::Catalog* catalog, storage::FileIO* io) {
  if (config_.maintenance.interval_ms <= 0) return;
  catalog_ = catalog;
  io_ = io;
  thread_ = std::thread([this] { Loop(); });
}

void MaintenanceLoop::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

bool MaintenanceLoop::Sleep(int64_t ms) {
  std::unique_lock lock(mu_);
  return !wake_.wait_for(lock, std::chrono::milliseconds(ms),
                         [this] { return stop_.load(); });
}

void MaintenanceLoop::Loop() {
  // The lowest priority for this thread only (Linux: a thread's nice value is its own).
  setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), 19);
  FLOE_LOG_INFO("maintenance: every {} s, at most {}% of a core",
                config_.maintenance.interval_ms / 1000, config_.maintenance.cpu_percent);
  while (Sleep(config_.maintenance.interval_ms) && Pass()) {
  }
}

bool MaintenanceLoop::Pass() {
  auto tables = maintenance::AllTables(*catalog_);
  if (!tables.ok()) {
    FLOE_LOG_WARN("maintenance: listing the catalog's tables: {}",
                  tables.status().message());
    return true;
  }
  const int64_t percent = config_.maintenance.cpu_percent;
  for (const auto& ident : *tables) {
    if (stop_) return false;
    const int64_t cpu_before = ThreadCpuMs();
    auto r =
        maintenance::MaintainTable(*catalog_, *io_, ident, config_.maintenance, NowMs(),
                                   /*dry_run=*/false, &stop_);
    if (!r.ok()) {
      if (!stop_) {
        FLOE_LOG_WARN("maintenance of table {}: {}", ident.ToString(),
                      r.status().message());
      }
    } else if (r->floe_table) {
      const auto& rr = r->row_retention;
      if (!r->row_retention_error.empty()) {
        FLOE_LOG_WARN("maintenance: table {}: row retention failed: {}", ident.ToString(),
                      r->row_retention_error);
      }
      if (rr.snapshot_id != 0) {
        FLOE_LOG_INFO(
            "maintenance: table {}: row retention removed {} files and rewrote {} ({} "
            "rows past {} ms){}",
            ident.ToString(), rr.dropped_files, rr.rewritten_files, rr.rows_dropped,
            rr.retention_ms,
            rr.delta_error.empty() ? "" : "; Delta not updated yet: " + rr.delta_error);
      }
      const auto& c = r->compaction;
      if (!r->compaction_error.empty()) {
        FLOE_LOG_WARN("maintenance: table {}: compaction failed: {}", ident.ToString(),
                      r->compaction_error);
      }
      if (c.snapshot_id != 0) {
        FLOE_LOG_INFO(
            "maintenance: table {}: compacted {} files ({} bytes, {} copied by row "
            "group) "
            "into {} ({} bytes) in {} CPU-ms{}",
            ident.ToString(), c.candidates, c.bytes_in, c.copied, c.written, c.bytes_out,
            c.cpu_ms,
            c.delta_error.empty() ? "" : "; Delta not updated yet: " + c.delta_error);
      }
      if (r->expiry.expired > 0 || r->expiry.metadata_files > 0) {
        FLOE_LOG_INFO(
            "maintenance: table {}: expired {} snapshots, deleted {} files only they "
            "reached and {} old metadata files",
            ident.ToString(), r->expiry.expired, r->expiry.deleted,
            r->expiry.metadata_files);
      }
      if (!r->manifests_error.empty()) {
        FLOE_LOG_WARN("maintenance: table {}: manifest rewrite failed: {}",
                      ident.ToString(), r->manifests_error);
      }
      if (r->manifests.snapshot_id != 0) {
        FLOE_LOG_INFO(
            "maintenance: table {}: manifests: {} without live files dropped, {} small "
            "ones merged into {}, {} kept",
            ident.ToString(), r->manifests.dropped, r->manifests.replaced,
            r->manifests.created, r->manifests.kept);
      }
      if (r->orphans.deleted > 0) {
        FLOE_LOG_INFO("maintenance: table {}: deleted {} unreferenced files ({} bytes)",
                      ident.ToString(), r->orphans.deleted, r->orphans.deleted_bytes);
      }
    }
    // Duty cycle: work t, rest t × (100 / percent − 1).
    const int64_t used = ThreadCpuMs() - cpu_before;
    if (percent < 100 && used > 0 && !Sleep(used * (100 - percent) / percent))
      return false;
  }
  return true;
}

}  // namespace floe::cli
