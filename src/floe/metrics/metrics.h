// Floe's Prometheus metrics (docs/operations.md): one registry per process, rendered in
// the text exposition format by the server's GET /metrics. Built on prometheus-cpp's core
// (Debian's prometheus-cpp-dev): its counters, gauges and histograms are lock-free to
// update, so a module records an event where it happens (a commit, a file) without
// knowing who reads it.
//
// What changes per record is never counted here: the pipeline keeps plain per-topic
// counts and publishes them with its status snapshot, which a Collectable turns into
// metrics at scrape time (pipeline/status_metrics.h). Instruments here are updated per
// commit, per file or per request.
//
// Threading: every member is thread-safe.
#pragma once

#include <prometheus/collectable.h>
#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace floe::metrics {

// Instruments of one table, labelled {topic, table}; stable for the process's life.
struct TableInstruments {
  prometheus::Counter* commits = nullptr;           // Iceberg commits that succeeded
  prometheus::Counter* commit_failures = nullptr;   // commits that failed (retried)
  prometheus::Counter* commit_conflicts = nullptr;  // of which: fenced or conflicting
  prometheus::Counter* data_files = nullptr;        // data files committed
  prometheus::Counter* bytes_written = nullptr;     // their bytes
  prometheus::Histogram* commit_seconds = nullptr;  // a commit, data files to pointer
  prometheus::Histogram* file_bytes = nullptr;      // one committed data file
};

class Metrics {
 public:
  Metrics();
  Metrics(const Metrics&) = delete;
  Metrics& operator=(const Metrics&) = delete;

  // The instruments of (topic, table), made on first use.
  TableInstruments* Table(const std::string& topic, const std::string& table);

  // Memory held for tables against memory.budget.bytes (set by the pipeline).
  prometheus::Gauge& memory_in_use() { return *memory_in_use_; }
  prometheus::Gauge& memory_budget() { return *memory_budget_; }

  // A source read at every scrape (e.g. the pipeline's status snapshot).
  void AddCollectable(std::shared_ptr<prometheus::Collectable> source);

  // Every metric, process_* included, in the text exposition format (version 0.0.4).
  std::string Render() const;

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Counter>* commits_;
  prometheus::Family<prometheus::Counter>* commit_failures_;
  prometheus::Family<prometheus::Counter>* commit_conflicts_;
  prometheus::Family<prometheus::Counter>* data_files_;
  prometheus::Family<prometheus::Counter>* bytes_written_;
  prometheus::Family<prometheus::Histogram>* commit_seconds_;
  prometheus::Family<prometheus::Histogram>* file_bytes_;
  prometheus::Gauge* memory_in_use_;
  prometheus::Gauge* memory_budget_;

  mutable std::mutex mu_;  // guards tables_ and sources_
  std::vector<std::pair<std::string, std::unique_ptr<TableInstruments>>> tables_;
  std::vector<std::shared_ptr<prometheus::Collectable>> sources_;
};

// process_cpu_seconds_total, process_resident_memory_bytes, process_virtual_memory_bytes,
// process_start_time_seconds, process_open_fds and process_max_fds of this process, from
// /proc (the names Prometheus' client libraries use).
std::vector<prometheus::MetricFamily> ProcessMetrics();

// A gauge sample with labels, for Collectables that build families by hand.
prometheus::ClientMetric GaugeSample(double value,
                                     std::vector<prometheus::ClientMetric::Label> labels);
prometheus::ClientMetric CounterSample(
    double value, std::vector<prometheus::ClientMetric::Label> labels);

}  // namespace floe::metrics
