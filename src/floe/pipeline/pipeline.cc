#include "floe/pipeline/pipeline.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <thread>

#include "floe/common/log.h"
#include "floe/common/util.h"
#include "floe/kafka/consumer.h"
#include "floe/pipeline/committer.h"
#include "floe/pipeline/delta_mirror.h"
#include "floe/pipeline/schema_resolver.h"
#include "floe/pipeline/table_setup.h"
#include "floe/pipeline/topic_state.h"
#include "floe/storage/file_io.h"

namespace floe::pipeline {
namespace {

constexpr int kPollMs = 100;
constexpr size_t kPollMaxRecords = 20000;
constexpr int kMetadataTimeoutMs = 10000;
constexpr int64_t kRediscoverMs = 30000;
constexpr int64_t kProgressMs = 10000;

Clock WithDefaults(Clock c) {
  if (!c.monotonic_ms) c.monotonic_ms = [] { return MonotonicMs(); };
  if (!c.wall_ms) c.wall_ms = [] { return NowMs(); };
  if (!c.sleep_ms) {
    c.sleep_ms = [](int64_t ms) {
      std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    };
  }
  return c;
}

class PipelineImpl : public Pipeline {
 public:
  PipelineImpl(const config::Config& config, Collaborators c)
      : config_(config),
        source_(c.source),
        io_(c.io),
        clock_(WithDefaults(std::move(c.clock))),
        committer_(c.catalog, c.io, clock_.wall_ms),
        delta_(c.catalog, c.io, clock_.wall_ms),
        tables_(&committer_, c.io),
        resolver_(c.schemas, &tables_, clock_.monotonic_ms) {}

  Status Start(std::atomic<bool>& stop) override {
    FLOE_RETURN_NOT_OK(WithRetry(stop, "discover topics", [&] { return Discover(); }));
    last_discover_ = last_progress_ = clock_.monotonic_ms();
    return Status::OK();
  }

  Status Step(std::atomic<bool>& stop) override {
    batch_.Clear();
    errors_.clear();
    Status st = source_->Poll(kPollMs, kPollMaxRecords, &batch_, &errors_);
    if (!st.ok()) {
      FLOE_LOG_WARN("{}; retrying", st.message());
      clock_.sleep_ms(1000);
      return Status::OK();
    }
    for (const auto& e : errors_) HandlePartitionError(e);
    for (const auto& r : batch_.records()) {
      if (stop.load() && registry_outage_) break;
      FLOE_RETURN_NOT_OK(Process(r, stop));
    }
    batch_.Clear();
    FLOE_RETURN_NOT_OK(CommitDue(stop, false));
    EnforceMemoryBudget(stop);
    if (clock_.monotonic_ms() - last_discover_ > kRediscoverMs) {
      Status ds = Discover();
      if (!ds.ok()) FLOE_LOG_WARN("topic discovery failed: {}", ds.message());
      RefreshJsonSubjects();
      last_discover_ = clock_.monotonic_ms();
    }
    if (clock_.monotonic_ms() - last_progress_ > kProgressMs) {
      LogProgress();
      last_progress_ = clock_.monotonic_ms();
    }
    return Status::OK();
  }

  Status Finish() override {
    FLOE_LOG_INFO("stopping: committing buffered records");
    std::atomic<bool> no_stop{false};
    FLOE_RETURN_NOT_OK(CommitDue(no_stop, true));
    LogProgress();
    return Status::OK();
  }

  std::vector<TopicStatus> Topics() const override {
    std::vector<TopicStatus> out;
    for (const auto& [topic, ts] : topics_) {
      TopicStatus s;
      s.topic = topic;
      s.table = ts.settings.QualifiedTable();
      s.suspended = ts.suspended;
      s.reason = ts.suspend_reason;
      s.committed_records = ts.committed_records;
      s.buffered_records = ts.writer ? ts.writer->buffered_rows() : 0;
      s.skipped_records = ts.skipped;
      out.push_back(std::move(s));
    }
    return out;
  }

 private:
  // Retries systemic failures with exponential backoff until `stop`.
  template <typename F>
  Status WithRetry(std::atomic<bool>& stop, const char* what, F&& fn) {
    int64_t backoff_ms = 500;
    while (true) {
      Status st = fn();
      if (st.ok()) return st;
      ErrorKind kind = KindOf(st);
      if (kind != ErrorKind::kRetriable && kind != ErrorKind::kStateUnknown) return st;
      if (stop.load()) return st;
      FLOE_LOG_WARN("{} failed: {}; retrying in {} ms", what, st.message(), backoff_ms);
      clock_.sleep_ms(backoff_ms);
      backoff_ms = std::min<int64_t>(backoff_ms * 2, 30000);
    }
  }

  // value.format json: picks up a new version of each topic's subject (called every
  // kRediscoverMs). Records are decoded with the newest version from then on.
  void RefreshJsonSubjects() {
    for (auto& [topic, ts] : topics_) {
      if (ts.settings.value_format == config::ValueFormat::kJson) {
        (void)resolver_.CheckJsonSubject(ts, /*rate_limited=*/false);
      }
    }
  }

  Status Discover() {
    FLOE_ASSIGN_OR_RAISE(auto topics, source_->ListTopics(kMetadataTimeoutMs));
    FLOE_ASSIGN_OR_RAISE(cluster_id_, source_->ClusterId(kMetadataTimeoutMs));
    std::vector<std::string> names;
    for (const auto& [name, count] : topics) names.push_back(name);
    FLOE_RETURN_NOT_OK(config::CheckTableCollisions(config_, names));
    bool changed = false;
    Status first_error;
    for (const auto& [name, count] : topics) {
      auto settings = config::ResolveTopic(config_, name);
      if (!settings) continue;
      auto it = topics_.find(name);
      if (it != topics_.end() && it->second.partition_count == count) continue;
      if (it == topics_.end()) {
        TopicState ts;
        ts.settings = *settings;
        ts.ident = catalog::TableIdent{settings->NamespaceLevels(), settings->table};
        it = topics_.emplace(name, std::move(ts)).first;
        FLOE_LOG_INFO("topic {} → table {}", name, settings->QualifiedTable());
      }
      // The count is kept only once every partition has its position: a topic whose
      // partitions could not all be loaded (a new topic's partition without a leader yet)
      // is tried again by the next discovery instead of being taken as done. The
      // partitions already loaded are assigned meanwhile.
      const int previous = it->second.partition_count;
      it->second.partition_count = count;
      Status st = LoadPositions(name, it->second);
      if (!st.ok()) {
        it->second.partition_count = previous;
        if (first_error.ok()) first_error = st;
      }
      changed = true;
    }
    if (changed) FLOE_RETURN_NOT_OK(Reassign());
    return first_error;
  }

  // Seeks every partition of the topic to the table's recorded position (ARCHITECTURE.md
  // §2).
  Status LoadPositions(const std::string& topic, TopicState& ts) {
    if (ts.suspended) return Status::OK();
    FLOE_ASSIGN_OR_RAISE(ts.table, committer_.Load(ts.ident));
    if (ts.table.exists && !ts.table.cluster_id.empty() &&
        ts.table.cluster_id != cluster_id_) {
      return SuspendTopic(topic, ts,
                          "table " + ts.ident.ToString() +
                              " was written from Kafka cluster " + ts.table.cluster_id +
                              " but the broker is cluster " + cluster_id_ +
                              "; positions do not apply");
    }
    if (ts.table.exists) {
      FLOE_RETURN_NOT_OK(
          committer_.EnsureFormats(ts.ident, FormatsProperty(ts.settings)));
      // Recovery (ARCHITECTURE.md §2): Floe snapshots committed to Iceberg but not yet to
      // Delta (a crash in between) are replayed into Delta before reading on.
      if (WantsDelta(ts.settings)) SyncDelta(ts);
    }
    if (ts.table.exists && ts.table.has_data_files && !ts.table.positions) {
      return SuspendTopic(topic, ts,
                          "offsets lost: table " + ts.ident.ToString() +
                              " holds data but no floe.kafka.offsets; Floe will not "
                              "restart it from the beginning on its own");
    }
    const std::map<int32_t, int64_t>* recorded = nullptr;
    if (ts.table.positions) {
      auto it = ts.table.positions->find(topic);
      if (it != ts.table.positions->end()) recorded = &it->second;
    }
    for (int32_t p = 0; p < ts.partition_count; ++p) {
      if (ts.partitions.count(p)) continue;
      FLOE_ASSIGN_OR_RAISE(auto wm,
                           source_->QueryWatermarks({topic, p}, kMetadataTimeoutMs));
      PartitionState ps;
      auto rit = recorded ? recorded->find(p) : decltype(recorded->end()){};
      if (recorded && rit != recorded->end()) {
        ps.start = rit->second;
        ps.start_recorded = true;
        if (ps.start < wm.low || ps.start > wm.high) {
          return SuspendTopic(
              topic, ts,
              "recorded position " + std::to_string(ps.start) + " of partition " +
                  std::to_string(p) + " is outside the log [" + std::to_string(wm.low) +
                  ", " + std::to_string(wm.high) +
                  "] (log start, high watermark): retention or a topic reset "
                  "removed records Floe has not ingested; not resetting silently");
        }
      } else {
        ps.start =
            wm.low;  // a new table (or partition) starts at the beginning of the log
      }
      ts.partitions[p] = ps;
    }
    return Status::OK();
  }

  Status Reassign() {
    std::map<kafka::TopicPartition, int64_t> assignment;
    for (auto& [topic, ts] : topics_) {
      if (ts.suspended) continue;
      for (auto& [p, ps] : ts.partitions) {
        assignment[{topic, p}] = ps.ReadPosition();
      }
    }
    return source_->Assign(assignment);
  }

  Status SuspendTopic(const std::string& topic, TopicState& ts,
                      const std::string& reason) {
    ts.suspended = true;
    ts.suspend_reason = reason;
    FLOE_LOG_ERROR("topic {} suspended: {}", topic, reason);
    return Status::OK();
  }

  void HandlePartitionError(const kafka::PartitionError& e) {
    auto it = topics_.find(e.tp.topic);
    if (it == topics_.end()) {
      FLOE_LOG_WARN("kafka: {}", e.message);
      return;
    }
    if (e.out_of_range) {
      auto wm = source_->QueryWatermarks(e.tp, kMetadataTimeoutMs);
      std::string range =
          wm.ok() ? "[" + std::to_string(wm->low) + ", " + std::to_string(wm->high) + "]"
                  : "(unknown)";
      (void)SuspendTopic(e.tp.topic, it->second,
                         "position " + std::to_string(e.offset) + " of partition " +
                             std::to_string(e.tp.partition) +
                             " is out of range; the log is " + range +
                             " (log start, high watermark): " + e.message);
      (void)Reassign();
      return;
    }
    FLOE_LOG_WARN("kafka {}/{}: {}", e.tp.topic, e.tp.partition, e.message);
  }

  Status Process(const kafka::Record& r, std::atomic<bool>& stop) {
    auto it = topics_.find(*r.topic);
    if (it == topics_.end() || it->second.suspended) return Status::OK();
    TopicState& ts = it->second;
    auto pit = ts.partitions.find(r.partition);
    if (pit == ts.partitions.end()) return Status::OK();
    PartitionState& ps = pit->second;
    int64_t expected = ps.ReadPosition();
    if (r.offset < expected)
      return Status::OK();  // already covered (stale fetch after reassign)

    // value.format json: a record its schema rejects makes Floe look for a newer version
    // of the subject once before the record counts as invalid.
    for (bool rechecked = false;; rechecked = true) {
      RowPlan plan;
      // Schemas come from the registry and the first one creates the table: both may meet
      // an outage, retried until it ends (or Floe stops).
      Status st = WithRetry(stop, "schema registry",
                            [&] { return resolver_.Plan(ts, r, &plan); });
      registry_outage_ = false;
      if (!st.ok()) {
        ErrorKind kind = KindOf(st);
        if (kind == ErrorKind::kInvalidRecord || kind == ErrorKind::kNotFound)
          return Invalid(ts, r, st);
        if (kind == ErrorKind::kSuspend) {
          FLOE_RETURN_NOT_OK(CommitTopic(*r.topic, ts, stop, /*batch_done=*/false));
          return SuspendTopic(*r.topic, ts, Where(r) + ": " + st.message());
        }
        if (stop.load()) {
          registry_outage_ = true;
          return Status::OK();
        }
        return st;
      }
      // A value that fails to decode leaves nothing appended (its decoder sees to it);
      // the key was validated by Plan.
      st = ts.writer->AppendRow(
          [&](::arrow::ArrayBuilder* const* columns) {
            return resolver_.Fill(ts, r, plan, columns);
          },
          r);
      if (!st.ok()) {
        if (KindOf(st) != ErrorKind::kInvalidRecord) return st;
        if (!rechecked && ts.settings.value_format == config::ValueFormat::kJson &&
            resolver_.CheckJsonSubject(ts, /*rate_limited=*/true)) {
          continue;
        }
        return Invalid(ts, r, st);
      }
      ps.next = r.offset + 1;
      return Status::OK();
    }
  }

  Status Invalid(TopicState& ts, const kafka::Record& r, const Status& why) {
    std::string msg = Where(r) + ": " + why.message();
    if (ts.settings.on_invalid_record == config::InvalidRecordPolicy::kSkip) {
      ts.skipped++;
      FLOE_LOG_WARN("skipped invalid record ({} skipped so far): {}", ts.skipped, msg);
      ts.partitions[r.partition].next = r.offset + 1;
      return Status::OK();
    }
    // suspend: commit everything before this record, then stop the topic here.
    std::atomic<bool> no_stop{false};
    FLOE_RETURN_NOT_OK(CommitTopic(*r.topic, ts, no_stop, /*batch_done=*/false));
    FLOE_RETURN_NOT_OK(SuspendTopic(*r.topic, ts, "invalid record at " + msg));
    return Reassign();
  }

  Status CommitDue(std::atomic<bool>& stop, bool force) {
    int64_t now = clock_.monotonic_ms();
    for (auto& [topic, ts] : topics_) {
      if (ts.last_commit_ms == 0) ts.last_commit_ms = now;
      if (!force && now - ts.last_commit_ms < ts.settings.commit_interval_ms) continue;
      FLOE_RETURN_NOT_OK(CommitTopic(topic, ts, stop, !registry_outage_));
    }
    return Status::OK();
  }

  // `batch_done`: every record fetched so far was processed, so the consumer's position
  // (which moves past transaction markers and aborted records) may end the batch
  // (ARCHITECTURE.md §2: b = last delivered + 1, or the consumer position if larger).
  Status CommitTopic(const std::string& topic, TopicState& ts, std::atomic<bool>& stop,
                     bool batch_done) {
    ts.last_commit_ms = clock_.monotonic_ms();
    if (ts.suspended && !batch_done) return Status::OK();
    if (batch_done && !ts.suspended) {
      auto positions = source_->Positions();
      if (positions.ok()) {
        for (auto& [p, ps] : ts.partitions) {
          auto it = positions->find(kafka::TopicPartition{topic, p});
          if (it == positions->end() || it->second < 0) continue;
          int64_t current = ps.ReadPosition();
          if (it->second > current) ps.next = it->second;
        }
      }
    }
    bool any = false;
    for (auto& [p, ps] : ts.partitions) any |= ps.next >= 0;
    if (!any) return Status::OK();
    if (!ts.writer && !ts.table.exists)
      return Status::OK();  // nothing to record positions in
    CommitRequest req;
    req.ident = ts.ident;
    req.cluster_id = cluster_id_;
    if (ts.writer) {
      FLOE_ASSIGN_OR_RAISE(req.files, ts.writer->TakeFiles());
    }
    int64_t records = 0;
    for (const auto& f : req.files) records += f.record_count;
    for (auto& [p, ps] : ts.partitions) {
      if (ps.next < 0) continue;
      req.expected[topic][p] =
          ps.start_recorded ? std::optional<int64_t>(ps.start) : std::nullopt;
      req.new_positions[topic][p] = ps.next;
    }
    Status st = WithRetry(stop, "commit", [&] { return committer_.Commit(req); });
    if (!st.ok()) {
      if (KindOf(st) == ErrorKind::kConflict) {
        // Fenced: another writer advanced this table's positions. Our files are not
        // referenced; re-read from the table's positions.
        FLOE_LOG_WARN("table {}: {}; re-reading from the table's positions",
                      ts.ident.ToString(), st.message());
        for (const auto& f : req.files) (void)io_->Delete(f.file_path);
        ts.ResetForReread();
        FLOE_RETURN_NOT_OK(LoadPositions(topic, ts));
        return Reassign();
      }
      return st;
    }
    for (auto& [p, ps] : ts.partitions) {
      if (ps.next < 0) continue;
      ps.start = ps.next;
      ps.start_recorded = true;
      ps.next = -1;
    }
    ts.committed_records += records;
    if (WantsDelta(ts.settings)) SyncDelta(ts);
    FLOE_LOG_DEBUG("table {}: committed {} records in {} files", ts.ident.ToString(),
                   records, req.files.size());
    return Status::OK();
  }

  // Delta follows Iceberg; a failure here is logged and repaired by the next commit's (or
  // the next start's) sync, never by re-committing Iceberg.
  void SyncDelta(TopicState& ts) {
    auto version = delta_.Sync(ts.ident);
    if (!version.ok()) {
      FLOE_LOG_WARN(
          "table {}: Delta log not updated yet ({}); it catches up at the next "
          "commit",
          ts.ident.ToString(), version.status().message());
    }
  }

  void EnforceMemoryBudget(std::atomic<bool>& stop) {
    int64_t total = 0;
    TopicState* largest = nullptr;
    const std::string* largest_topic = nullptr;
    int64_t largest_bytes = -1;
    for (auto& [topic, ts] : topics_) {
      if (!ts.writer) continue;
      int64_t b = ts.writer->MemoryBytes();
      total += b;
      if (b > largest_bytes) {
        largest_bytes = b;
        largest = &ts;
        largest_topic = &topic;
      }
    }
    if (total > config_.memory_budget_bytes && largest != nullptr) {
      FLOE_LOG_DEBUG("memory {} > budget {}: committing {} early", total,
                     config_.memory_budget_bytes, *largest_topic);
      Status st = CommitTopic(*largest_topic, *largest, stop, true);
      if (!st.ok()) FLOE_LOG_WARN("early commit failed: {}", st.message());
    }
  }

  void LogProgress() {
    for (const auto& [topic, ts] : topics_) {
      if (ts.suspended) {
        FLOE_LOG_WARN("topic {}: SUSPENDED: {}", topic, ts.suspend_reason);
        continue;
      }
      FLOE_LOG_INFO(
          "topic {} → {}: {} records committed this run, {} buffered, {} skipped", topic,
          ts.ident.ToString(), ts.committed_records,
          ts.writer ? ts.writer->buffered_rows() : 0, ts.skipped);
    }
  }

  const config::Config& config_;
  kafka::RecordSource* source_;
  storage::FileIO* io_;
  Clock clock_;
  Committer committer_;
  DeltaMirror delta_;
  TableSetup tables_;
  SchemaResolver resolver_;
  kafka::Batch batch_;
  std::vector<kafka::PartitionError> errors_;
  int64_t last_discover_ = 0;
  int64_t last_progress_ = 0;
  std::string cluster_id_;
  std::map<std::string, TopicState> topics_;
  bool registry_outage_ = false;
};

}  // namespace

Status Pipeline::Run(std::atomic<bool>& stop) {
  FLOE_RETURN_NOT_OK(Start(stop));
  while (!stop.load()) FLOE_RETURN_NOT_OK(Step(stop));
  return Finish();
}

Result<std::unique_ptr<Pipeline>> Pipeline::Make(const config::Config& config,
                                                 Collaborators collaborators) {
  if (!collaborators.source || !collaborators.schemas || !collaborators.catalog ||
      !collaborators.io) {
    return Status::Invalid("Pipeline::Make: a collaborator is missing");
  }
  return std::unique_ptr<Pipeline>(new PipelineImpl(config, std::move(collaborators)));
}

}  // namespace floe::pipeline
