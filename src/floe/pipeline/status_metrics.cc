#include "floe/pipeline/status_metrics.h"

#include <string>
#include <utility>

#include "floe/common/util.h"
#include "floe/pipeline/admin_bridge.h"

namespace floe::pipeline {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

// The states a topic can be in (docs/operations.md): floe_topic_state has one series per
// state, 1 for the current one, so an alert can match `state="suspended"` directly.
constexpr const char* kStates[] = {"running", "paused", "suspended", "resuming"};

struct Families {
  MetricFamily read{"floe_records_read_total",
                    "Records taken from Kafka for the topic this run (after a fault, "
                    "records read again count again).",
                    MetricType::Counter,
                    {}};
  MetricFamily read_bytes{"floe_read_bytes_total",
                          "Key and value bytes of the records read.",
                          MetricType::Counter,
                          {}};
  MetricFamily committed{"floe_records_committed_total",
                         "Rows committed to the table this run.",
                         MetricType::Counter,
                         {}};
  MetricFamily skipped{"floe_records_skipped_total",
                       "Records skipped: invalid ones under on.invalid.record: skip, and "
                       "those an operator's resume with skip-incompatible skips.",
                       MetricType::Counter,
                       {}};
  MetricFamily dead_lettered{"floe_records_dead_lettered_total",
                             "Invalid records committed to the topic's dead-letter table "
                             "(on.invalid.record: dlq) this run.",
                             MetricType::Counter,
                             {}};
  MetricFamily tombstones{"floe_tombstones_total",
                          "Records with a null value (tombstones), counted, never rows.",
                          MetricType::Counter,
                          {}};
  MetricFamily buffered{"floe_records_buffered",
                        "Rows decoded and not yet committed.",
                        MetricType::Gauge,
                        {}};
  MetricFamily state{"floe_topic_state",
                     "1 for the topic's current state (running, paused, suspended, "
                     "resuming), 0 for the others.",
                     MetricType::Gauge,
                     {}};
  MetricFamily freshness{"floe_table_freshness_seconds",
                         "Now minus the Kafka timestamp of the newest committed record.",
                         MetricType::Gauge,
                         {}};
  MetricFamily commit_age{"floe_table_last_commit_age_seconds",
                          "Now minus the time of the table's newest commit.",
                          MetricType::Gauge,
                          {}};
  MetricFamily lag{"floe_partition_lag_records",
                   "High watermark minus the table's committed position: what waits for "
                   "a commit, read or not.",
                   MetricType::Gauge,
                   {}};
  MetricFamily read_lag{"floe_partition_read_lag_records",
                        "High watermark minus the consumed position: what waits to be "
                        "read.",
                        MetricType::Gauge,
                        {}};
  MetricFamily consumed_offset{"floe_partition_consumed_offset",
                               "The next offset Floe reads from the partition (read, not "
                               "necessarily committed).",
                               MetricType::Gauge,
                               {}};
  MetricFamily committed_offset{"floe_partition_committed_offset",
                                "The next offset the table records for the partition.",
                                MetricType::Gauge,
                                {}};
  MetricFamily high_watermark{"floe_partition_high_watermark",
                              "The partition's high watermark as the latest fetch "
                              "response gave it (asked every few seconds for a partition "
                              "not being read).",
                              MetricType::Gauge,
                              {}};
};

}  // namespace

StatusMetrics::StatusMetrics(const AdminBridge* bridge, std::function<int64_t()> now_ms)
    : bridge_(bridge), now_ms_(now_ms ? std::move(now_ms) : [] { return NowMs(); }) {}

std::vector<MetricFamily> StatusMetrics::Collect() const {
  return FromSnapshot(bridge_->Snapshot(), now_ms_());
}

std::vector<MetricFamily> StatusMetrics::FromSnapshot(
    const std::vector<TopicStatus>& topics, int64_t now_ms) {
  Families f;
  for (const auto& t : topics) {
    const std::vector<ClientMetric::Label> labels = {{"topic", t.topic},
                                                     {"table", t.table}};
    f.read.metric.push_back(metrics::CounterSample(t.read_records, labels));
    f.read_bytes.metric.push_back(metrics::CounterSample(t.read_bytes, labels));
    f.committed.metric.push_back(metrics::CounterSample(t.committed_records, labels));
    f.skipped.metric.push_back(metrics::CounterSample(t.skipped_records, labels));
    f.dead_lettered.metric.push_back(
        metrics::CounterSample(t.dead_lettered_records, labels));
    f.tombstones.metric.push_back(metrics::CounterSample(t.tombstones, labels));
    f.buffered.metric.push_back(metrics::GaugeSample(t.buffered_records, labels));
    for (const char* state : kStates) {
      auto with_state = labels;
      with_state.push_back({"state", state});
      f.state.metric.push_back(
          metrics::GaugeSample(t.state == state ? 1 : 0, with_state));
    }
    if (t.newest_committed_timestamp_ms >= 0) {
      f.freshness.metric.push_back(metrics::GaugeSample(
          static_cast<double>(now_ms - t.newest_committed_timestamp_ms) / 1000, labels));
    }
    if (t.last_commit_ms > 0) {
      f.commit_age.metric.push_back(metrics::GaugeSample(
          static_cast<double>(now_ms - t.last_commit_ms) / 1000, labels));
    }
    for (const auto& p : t.partitions) {
      const std::vector<ClientMetric::Label> pl = {
          {"topic", t.topic}, {"partition", std::to_string(p.partition)}};
      if (p.lag >= 0) f.lag.metric.push_back(metrics::GaugeSample(p.lag, pl));
      if (p.committed >= 0)
        f.committed_offset.metric.push_back(metrics::GaugeSample(p.committed, pl));
      if (p.high_watermark >= 0)
        f.high_watermark.metric.push_back(metrics::GaugeSample(p.high_watermark, pl));
      if (p.consumed >= 0)
        f.consumed_offset.metric.push_back(metrics::GaugeSample(p.consumed, pl));
      if (p.read_lag >= 0)
        f.read_lag.metric.push_back(metrics::GaugeSample(p.read_lag, pl));
    }
  }
  return {std::move(f.read),
          std::move(f.read_bytes),
          std::move(f.committed),
          std::move(f.skipped),
          std::move(f.tombstones),
          std::move(f.buffered),
          std::move(f.state),
          std::move(f.freshness),
          std::move(f.commit_age),
          std::move(f.lag),
          std::move(f.read_lag),
          std::move(f.committed_offset),
          std::move(f.consumed_offset),
          std::move(f.high_watermark),
          std::move(f.dead_lettered)};
}

void RecordCommit(metrics::TableInstruments* instruments,
                  const std::vector<iceberg::DataFile>& files, double seconds) {
  if (instruments == nullptr) return;
  instruments->commits->Increment();
  instruments->commit_seconds->Observe(seconds);
  for (const auto& f : files) {
    instruments->data_files->Increment();
    instruments->bytes_written->Increment(static_cast<double>(f.file_size_in_bytes));
    instruments->file_bytes->Observe(static_cast<double>(f.file_size_in_bytes));
  }
}

void RecordCommitFailure(metrics::TableInstruments* instruments, const Status& st) {
  if (instruments == nullptr) return;
  instruments->commit_failures->Increment();
  if (KindOf(st) == ErrorKind::kConflict) instruments->commit_conflicts->Increment();
}

}  // namespace floe::pipeline
