#include "floe/cli/probes.h"

#include <chrono>
#include <utility>

#include "floe/catalog/catalog.h"
#include "floe/common/log.h"
#include "floe/common/util.h"
#include "floe/kafka/consumer.h"
#include "floe/pipeline/admin_bridge.h"
#include "floe/storage/file_io.h"

namespace floe::cli {
namespace {

constexpr int kCheckTimeoutMs = 2000;

}  // namespace

Probes::Probes(const config::Config& config, const pipeline::AdminBridge* bridge)
    : config_(config), bridge_(bridge) {}

Probes::~Probes() { Stop(); }

void Probes::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

bool Probes::StopWithin(int64_t wait_ms) {
  std::unique_lock<std::mutex> lock(mu_);
  stop_ = true;
  wake_.notify_all();
  if (!thread_.joinable()) return true;
  if (!wake_.wait_for(lock, std::chrono::milliseconds(wait_ms),
                      [this] { return loop_done_; })) {
    if (running_.empty()) {
      FLOE_LOG_WARN(
          "the readiness checks did not stop within {} ms; not waiting for them",
          wait_ms);
    } else {
      FLOE_LOG_WARN(
          "the readiness check of the {} has not returned for {} ms; not waiting for it",
          running_, MonotonicMs() - running_since_ms_);
    }
    return false;
  }
  lock.unlock();
  thread_.join();
  return true;
}

Status Probes::Start(catalog::Catalog* catalog, storage::FileIO* io) {
  auto props = config_.kafka;
  // A client that only asks for metadata: reconnecting fast is what lets /ready see a
  // broker come back within a probe interval.
  props["reconnect.backoff.max.ms"] = "1000";
  FLOE_ASSIGN_OR_RAISE(kafka_, kafka::Consumer::Make(props));
  catalog_ = catalog;
  io_ = io;
  warehouse_uri_ = config_.WarehouseOnS3() ? config_.warehouse
                                           : storage::PathToFileUri(config_.warehouse);
  thread_ = std::thread([this] { Loop(); });
  return Status::OK();
}

void Probes::Running(std::string check) {
  std::lock_guard<std::mutex> lock(mu_);
  running_ = std::move(check);
  running_since_ms_ = MonotonicMs();
}

std::vector<std::string> Probes::CheckDependencies() {
  std::vector<std::string> down;
  Running("kafka");
  Status kafka = kafka_->Ping(kCheckTimeoutMs);
  if (!kafka.ok()) down.push_back("kafka: " + kafka.message());
  Running("catalog");
  auto namespaces = catalog_->ListNamespaces({});
  // Answering reads is not enough: a read-only or moved catalog file takes no commits.
  Status writable = namespaces.ok() ? catalog_->CheckWritable() : namespaces.status();
  if (!writable.ok()) down.push_back("catalog: " + writable.message());
  // A lookup of a name nobody writes: only whether the store answers matters.
  Running("storage");
  auto exists = io_->Exists(warehouse_uri_ + "/.floe-ready-probe");
  if (!exists.ok()) down.push_back("storage: " + exists.status().message());
  Running("");
  return down;
}

void Probes::Loop() {
  std::vector<std::string> previous;
  for (;;) {
    std::vector<std::string> down = CheckDependencies();
    if (down != previous) {
      if (down.empty()) {
        FLOE_LOG_INFO("ready: Kafka, the catalog and the storage answer again");
      } else {
        for (const auto& d : down) FLOE_LOG_WARN("not ready: {}", d);
      }
      previous = down;
    }
    std::unique_lock<std::mutex> lock(mu_);
    dependencies_ = std::move(down);
    checked_ = true;
    if (stop_ ||
        wake_.wait_for(lock, std::chrono::milliseconds(config_.health.probe_interval_ms),
                       [this] { return stop_; })) {
      loop_done_ = true;
      wake_.notify_all();  // StopWithin waits on the same condition
      return;
    }
  }
}

std::vector<std::string> Probes::NotAlive() const {
  const int64_t last = bridge_->LastPublishMs();
  if (last < 0) return {};  // still starting (discovering topics): alive
  const int64_t idle = MonotonicMs() - last;
  if (idle <= config_.health.stall_ms) return {};
  return {"the pipeline's loop has not turned for " + std::to_string(idle / 1000) +
          " s (health.stall.ms " + std::to_string(config_.health.stall_ms) + ")"};
}

std::vector<std::string> Probes::NotReady() const {
  std::vector<std::string> out = NotAlive();
  bool published = false;
  const auto topics = bridge_->Snapshot(&published);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!checked_) {
      out.push_back("starting: Kafka, the catalog and the storage not checked yet");
    }
    out.insert(out.end(), dependencies_.begin(), dependencies_.end());
    const int64_t running_ms = MonotonicMs() - running_since_ms_;
    if (!running_.empty() && running_ms > kCheckTimeoutMs) {
      out.push_back(running_ + ": no answer for " + std::to_string(running_ms) + " ms");
    }
  }
  if (!published) out.push_back("starting: the pipeline has not read its topics yet");
  if (!config_.health.ready_when_suspended) {
    for (const auto& t : topics) {
      if (t.suspended) out.push_back("topic " + t.topic + " is suspended: " + t.reason);
    }
  }
  return out;
}

}  // namespace floe::cli
