// The pipeline's side of GET /metrics (docs/operations.md): what changes per record is
// counted in plain TopicState fields and published with the status snapshot every
// 500 ms; StatusMetrics turns the latest snapshot into Prometheus families at scrape
// time, so counting costs the hot path two additions per record and no atomics. What
// happens per commit is recorded at once on the table's instruments.
//
// Threading: StatusMetrics::Collect runs on the server's threads and reads only the
// AdminBridge's snapshot; RecordCommit* run on the pipeline thread.
#pragma once

#include <prometheus/collectable.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "floe/common/status.h"
#include "floe/iceberg/data_file.h"
#include "floe/metrics/metrics.h"
#include "floe/pipeline/pipeline.h"

namespace floe::pipeline {

class AdminBridge;

class StatusMetrics : public prometheus::Collectable {
 public:
  // Borrows `bridge`, which must outlive this. `now_ms`: wall clock (empty: the
  // system's).
  explicit StatusMetrics(const AdminBridge* bridge, std::function<int64_t()> now_ms = {});
  std::vector<prometheus::MetricFamily> Collect() const override;

  // The families of one snapshot at wall time `now_ms` (tested without a bridge).
  static std::vector<prometheus::MetricFamily> FromSnapshot(
      const std::vector<TopicStatus>& topics, int64_t now_ms);

 private:
  const AdminBridge* bridge_;
  std::function<int64_t()> now_ms_;
};

// A successful commit of `files` that took `seconds`; `instruments` may be null.
void RecordCommit(metrics::TableInstruments* instruments,
                  const std::vector<iceberg::DataFile>& files, double seconds);
// A commit that failed with `st` (a conflict counts as one too).
void RecordCommitFailure(metrics::TableInstruments* instruments, const Status& st);

}  // namespace floe::pipeline
