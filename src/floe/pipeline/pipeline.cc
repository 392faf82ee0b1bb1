#include "floe/pipeline/pipeline.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <thread>

#include "floe/common/crash.h"
#include "floe/common/log.h"
#include "floe/common/util.h"
#include "floe/kafka/consumer.h"
#include "floe/metrics/metrics.h"
#include "floe/pipeline/admin_bridge.h"
#include "floe/pipeline/dead_letters.h"
#include "floe/pipeline/reload.h"
#include "floe/pipeline/schema_resolver.h"
#include "floe/pipeline/status_metrics.h"
#include "floe/pipeline/table_faults.h"
#include "floe/pipeline/table_setup.h"
#include "floe/pipeline/topic_state.h"
#include "floe/storage/file_io.h"
#include "floe/table/committer.h"
#include "floe/table/delta_mirror.h"
#include "floe/table/table_properties.h"

namespace floe::pipeline {
namespace {

constexpr int kPollMs = 100;
constexpr size_t kPollMaxRecords = 20000;
constexpr int kMetadataTimeoutMs = 10000;
constexpr int64_t kRediscoverMs = 30000;
constexpr int64_t kProgressMs = 10000;
constexpr int64_t kMissingTopicWarnMs = 600000;
// The admin status: published at most this often, high watermarks refreshed this often.
constexpr int64_t kPublishMs = 500;
constexpr int64_t kWatermarksMs = 5000;
constexpr int kWatermarkTimeoutMs = 2000;
// A schema id the registry answers "not found" for is retried this long before its
// records count as invalid: a registry restarting from its _schemas topic, or a replica
// that has not caught up yet, knows the id a few seconds later.
constexpr int64_t kUnknownSchemaWindowMs = 30000;
// An id found unknown after that window counts as unknown at once for this long, then is
// asked for again (it may have been registered meanwhile).
constexpr int64_t kUnknownSchemaMemoryMs = 300000;
// Schema changes a record may bring in a row (each a lost race against another writer's
// change) before the pipeline reads it again through a reassignment instead.
constexpr int kMaxInPlaceEvolutions = 4;

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
        dead_letters_(c.catalog, &committer_, c.io, &delta_),
        resolver_(c.schemas, &tables_, clock_.monotonic_ms),
        admin_(c.admin),
        load_config_(std::move(c.load_config)),
        owned_metrics_(c.metrics ? nullptr : std::make_unique<metrics::Metrics>()),
        metrics_(c.metrics ? c.metrics : owned_metrics_.get()) {
    metrics_->memory_budget().Set(static_cast<double>(config_.memory_budget_bytes));
  }

  Status Start(std::atomic<bool>& stop) override {
    Status writable = committer_.CheckWritable();
    if (!writable.ok()) FLOE_LOG_ERROR("{}", writable.message());
    FLOE_RETURN_NOT_OK(WithRetry(stop, "discover topics", [&] { return Discover(); }));
    last_discover_ = last_progress_ = started_ms_ = clock_.monotonic_ms();
    return Status::OK();
  }

  Status Step(std::atomic<bool>& /*stop*/) override {
    batch_.Clear();
    errors_.clear();
    Status st = source_->Poll(kPollMs, kPollMaxRecords, &batch_, &errors_);
    if (!st.ok()) {
      FLOE_LOG_WARN("{}; retrying", st.message());
      clock_.sleep_ms(1000);
      return Status::OK();
    }
    for (const auto& e : errors_) HandlePartitionError(e);
    for (const auto& r : batch_.records()) FLOE_RETURN_NOT_OK(Process(r));
    batch_.Clear();
    FLOE_RETURN_NOT_OK(CommitDue(false));
    FLOE_RETURN_NOT_OK(ResumeDue());
    RetryDeltaDue();
    EnforceMemoryBudget();
    if (admin_ != nullptr) FLOE_RETURN_NOT_OK(AdminStep());
    if (clock_.monotonic_ms() - last_discover_ > kRediscoverMs) {
      Status ds = Discover();
      if (!ds.ok()) FLOE_LOG_WARN("topic discovery failed: {}", ds.message());
      RefreshJsonSubjects();
      last_discover_ = clock_.monotonic_ms();
    }
    if (clock_.monotonic_ms() - last_progress_ > kProgressMs) LogProgress();
    return Status::OK();
  }

  Status Finish() override {
    FLOE_LOG_INFO("stopping: committing buffered records");
    FLOE_RETURN_NOT_OK(CommitDue(true));
    // A Delta log left behind by a failed sync gets one more chance before exit (the
    // next start repairs it otherwise).
    for (auto& [topic, ts] : topics_) {
      if (ts.delta_retry_at_ms >= 0) SyncDelta(ts);
    }
    LogProgress();
    // The run in one line.
    int64_t committed = 0;
    int64_t suspended = 0;
    for (const auto& [topic, ts] : topics_) {
      committed += ts.committed_records;
      suspended += ts.suspended ? 1 : 0;
    }
    const double seconds =
        static_cast<double>(std::max<int64_t>(1, clock_.monotonic_ms() - started_ms_)) /
        1000;
    FLOE_LOG_INFO(
        "this run: {} records committed to {} tables in {:.0f} s ({:.0f} records/s){}",
        committed, topics_.size(), seconds, committed / seconds,
        suspended > 0 ? fmt::format(", {} topics suspended", suspended) : "");
    return Status::OK();
  }

  std::vector<TopicStatus> Topics() const override {
    std::vector<TopicStatus> out;
    for (const auto& [topic, ts] : topics_) out.push_back(StatusOf(topic, ts));
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
        LogScope log = ts.LogAbout();
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
        ts.table_name = settings->QualifiedTable();
        ts.instruments = metrics_->Table(name, settings->QualifiedTable());
        // A topic a reload restarted keeps its run's counters when its table stayed.
        if (auto kept = restarted_counters_.find(name);
            kept != restarted_counters_.end()) {
          if (kept->second.ident == ts.ident) CarryRunCounters(kept->second, &ts);
          restarted_counters_.erase(kept);
        }
        it = topics_.emplace(name, std::move(ts)).first;
        LogScope log = it->second.LogAbout();
        FLOE_LOG_INFO("topic {} → table {}", name, settings->QualifiedTable());
      }
      LogScope log = it->second.LogAbout();
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
    WarnMissingTopics(topics);
    if (changed) FLOE_RETURN_NOT_OK(Reassign());
    return first_error;
  }

  // A topic named in the config that the cluster does not have: one warning at once,
  // repeated every kMissingTopicWarnMs while it is missing.
  void WarnMissingTopics(const std::map<std::string, int>& existing) {
    const int64_t now = clock_.monotonic_ms();
    for (const auto& entry : config_.topics) {
      if (entry.name.empty() || existing.count(entry.name)) {
        missing_warned_ms_.erase(entry.name);
        continue;
      }
      auto it = missing_warned_ms_.find(entry.name);
      if (it != missing_warned_ms_.end() && now - it->second < kMissingTopicWarnMs)
        continue;
      missing_warned_ms_[entry.name] = now;
      LogScope log(&entry.name, nullptr);
      FLOE_LOG_WARN(
          "topic {} is configured but does not exist in the Kafka cluster; Floe "
          "starts reading it when it is created",
          entry.name);
    }
  }

  // Seeks every partition of the topic to the table's recorded position (ARCHITECTURE.md
  // §2). A fault of the table pauses or suspends the topic (TableFault), never the
  // daemon; errors returned are Kafka's.
  Status LoadPositions(const std::string& topic, TopicState& ts) {
    if (!ts.Active()) return Status::OK();
    LogScope log = ts.LogAbout();
    auto loaded = committer_.Load(ts.ident);
    if (!loaded.ok()) return TableFault(topic, ts, loaded.status());
    ts.table = std::move(*loaded);
    if (ApplyTableState(topic, ts)) return Status::OK();  // suspended before a restart
    if (!ts.table.exists && ts.table_seen) {
      return TableFault(topic, ts,
                        NotFound("table " + ts.ident.ToString() +
                                 " was dropped from the catalog (or renamed) while Floe "
                                 "was writing it; restart Floe (or set on.table.dropped: "
                                 "recreate) to create it again from the beginning of "
                                 "the topic"));
    }
    ts.table_seen = ts.table.exists;
    if (ts.table.exists && !ts.table.cluster_id.empty() &&
        ts.table.cluster_id != cluster_id_) {
      return SuspendTopic(topic, ts,
                          "table " + ts.ident.ToString() +
                              " was written from Kafka cluster " + ts.table.cluster_id +
                              " but the broker is cluster " + cluster_id_ +
                              "; positions do not apply");
    }
    if (ts.table.exists) {
      Status formats = committer_.EnsureFormats(ts.ident, FormatsProperty(ts.settings));
      if (!formats.ok()) return TableFault(topic, ts, formats);
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
    // Once per fresh start of the topic (a fault, fence or resume discards and clears
    // `loaded`): a discovery of more partitions must keep the buffered dead letters.
    if (ts.settings.on_invalid_record == config::InvalidRecordPolicy::kDlq &&
        !ts.dead_letters.loaded) {
      Status dl = dead_letters_.Load(ts);
      if (!dl.ok()) return TableFault(topic, ts, dl);
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
    ++reassignments_;
    std::map<kafka::TopicPartition, int64_t> assignment;
    for (auto& [topic, ts] : topics_) {
      if (!ts.Active()) continue;
      for (auto& [p, ps] : ts.partitions) {
        assignment[{topic, p}] = ps.ReadPosition();
      }
    }
    return source_->Assign(assignment);
  }

  // `r`: the record the topic stops at (a record-level suspension, persisted in the
  // table so a restart stays suspended); `schema_id`: its value schema when the schema
  // is the cause.
  Status SuspendTopic(const std::string& topic, TopicState& ts, const std::string& reason,
                      const kafka::Record* r = nullptr, int schema_id = -1) {
    LogScope log = ts.LogAbout(r != nullptr ? r->partition : -1);
    ts.suspended = true;
    ts.resuming = false;
    ts.suspend_reason = reason;
    ts.suspension = Suspension{reason, schema_id, -1, -1, clock_.wall_ms(), r != nullptr};
    if (r != nullptr) {
      ts.suspension.partition = r->partition;
      ts.suspension.offset = r->offset;
    }
    FLOE_LOG_ERROR("topic {} suspended: {}", topic, reason);
    if (r != nullptr) (void)SaveTopicState(committer_, topic, ts);  // it logs a failure
    return Status::OK();
  }

  // Once per Step: the operators' commands, the high watermarks (every kWatermarksMs)
  // and the status snapshot (every kPublishMs, and after a command or a commit, so the
  // freshness metrics see a commit at once).
  Status AdminStep() {
    const int64_t now = clock_.monotonic_ms();
    if (now - last_watermarks_ >= kWatermarksMs) {
      for (auto& [topic, ts] : topics_) {
        LogScope log = ts.LogAbout();
        RefreshWatermarks(source_, topic, ts, kWatermarkTimeoutMs);
      }
      last_watermarks_ = now;
    }
    auto commands = admin_->TakeCommands();
    std::vector<Status> answers;
    for (const auto& c : commands) {
      answers.push_back(c.reload ? Reload() : ResumeTopic(c.topic, c.skip_incompatible));
    }
    if (!commands.empty() || committed_since_publish_ ||
        now - last_publish_ >= kPublishMs) {
      for (auto& [topic, ts] : topics_) TakeFetchedWatermarks(source_, topic, ts);
      admin_->Publish(Topics());
      last_publish_ = now;
      committed_since_publish_ = false;
    }
    for (size_t i = 0; i < commands.size(); ++i) commands[i].done->set_value(answers[i]);
    return Status::OK();
  }

  // SIGHUP or POST /floe/v1/reload: the config file read again and applied; a file with
  // an error is refused with the message a start would give, and the running config
  // stays.
  Status Reload() {
    if (!load_config_) return Status::Invalid("this Floe has no config file to reload");
    auto next = load_config_();
    if (!next.ok()) {
      FLOE_LOG_ERROR("reload refused, the running configuration stays: {}",
                     next.status().message());
      return next.status();
    }
    Status st = Reconfigure(std::move(*next));
    if (!st.ok()) {
      FLOE_LOG_ERROR("reload refused, the running configuration stays: {}", st.message());
    }
    return st;
  }

  Status Reconfigure(config::Config next) override {
    // Two topics writing one table is refused before anything changes.
    FLOE_ASSIGN_OR_RAISE(auto cluster, source_->ListTopics(kMetadataTimeoutMs));
    std::vector<std::string> names;
    for (const auto& [name, count] : cluster) names.push_back(name);
    FLOE_RETURN_NOT_OK(config::CheckTableCollisions(next, names));
    ReloadPlan plan = PlanReload(config_, std::move(next), topics_);
    for (const auto& section : plan.restart_only_changes) {
      FLOE_LOG_WARN("reload: {} changed; it takes effect at the next restart", section);
    }
    if (plan.config.log_level != config_.log_level)
      SetLogLevel(plan.config.log_level.c_str());
    config_ = std::move(plan.config);
    metrics_->memory_budget().Set(static_cast<double>(config_.memory_budget_bytes));
    // From here the new config is applied whatever fails: a commit that fails leaves
    // its records to be read again from the table's positions.
    auto stop = [&](const std::string& topic, const char* why, bool restart) {
      {
        TopicState& ts = topics_.at(topic);
        LogScope log = ts.LogAbout();
        Status committed = CommitTopic(topic, ts, /*batch_done=*/true);
        const bool done = committed.ok() && ts.Active();
        FLOE_LOG_INFO("topic {}: {}; {}", topic, why,
                      done ? "committed and stopped"
                           : "stopped (what it had not committed is read again by its "
                             "next run)");
        DiscardUncommitted(ts, io_);
        // Its counters go on in the state that starts it again (Discover).
        if (restart) {
          TopicState& kept = restarted_counters_[topic];
          kept.ident = ts.ident;
          CarryRunCounters(ts, &kept);
        }
      }
      topics_.erase(topic);
    };
    for (const auto& t : plan.stop) stop(t, "no longer in the configuration", false);
    for (const auto& t : plan.restart) {
      stop(t, "settings changed by a reload, starting again from its table's positions",
           true);
    }
    if (Status st = Reassign(); !st.ok()) {
      FLOE_LOG_WARN(
          "reload: reassigning the partitions failed: {}; retried at the next "
          "discovery",
          st.message());
    }
    Status discovered = Discover();
    last_discover_ = clock_.monotonic_ms();
    if (!discovered.ok()) {
      FLOE_LOG_WARN("reload: topic discovery failed: {}; retried in {} s",
                    discovered.message(), kRediscoverMs / 1000);
    }
    FLOE_LOG_INFO(
        "reload: configuration applied ({} topics stopped, {} restarted; {} running)",
        plan.stop.size(), plan.restart.size(), topics_.size());
    return Status::OK();
  }

  // An operator's resume: the topic reads again from its table's positions, like a pause
  // ending; with `skip`, the suspension's schema id (else its record) joins the skip set.
  Status ResumeTopic(const std::string& topic, bool skip) {
    auto it = topics_.find(topic);
    if (it == topics_.end()) {
      return NotFound("topic " + topic +
                      " is not ingested by this Floe (see floe status)");
    }
    TopicState& ts = it->second;
    LogScope log = ts.LogAbout();
    if (!ts.suspended) {
      return Conflict("topic " + topic + " is " + StateName(ts) +
                      ", not suspended: there is nothing to resume");
    }
    SkipSet before = ts.skip;
    if (skip) {
      FLOE_ASSIGN_OR_RAISE(SkipSet add, SkipFor(ts.suspension, topic));
      ts.skip.Merge(add);
    }
    ts.suspended = false;
    // Only a saved suspension or a new skip changes the property.
    Status saved = ts.suspension.persist || skip ? SaveTopicState(committer_, topic, ts)
                                                 : Status::OK();
    if (!saved.ok()) {  // stays suspended: a restart would still find it so
      ts.suspended = true;
      ts.skip = std::move(before);
      return saved;
    }
    FLOE_LOG_INFO("topic {} resumed by an operator{} after: {}", topic,
                  skip ? " (skipping its incompatible records)" : "", ts.suspend_reason);
    ts.suspend_reason.clear();
    ts.suspension = Suspension{};
    ts.resuming = true;
    DiscardUncommitted(ts, io_);
    ts.last_commit_ms = clock_.monotonic_ms();  // running once a full interval went well
    Status loaded = LoadPositions(topic, ts);
    if (!loaded.ok()) {
      ts.partition_count = 0;  // the next discovery loads the partitions again
      FLOE_LOG_WARN("topic {}: {}; retried at the next discovery", topic,
                    loaded.message());
    }
    return Reassign();
  }

  // One table's storage or catalog failed (TableFaults): its uncommitted files go, and
  // the topic pauses (a fault time can fix) or suspends; every other topic goes on.
  Status TableFault(const std::string& topic, TopicState& ts, const Status& fault) {
    LogScope log = ts.LogAbout();
    DiscardUncommitted(ts, io_);
    if (KindOf(fault) == ErrorKind::kNotFound &&
        ts.settings.on_table_dropped == config::DroppedTablePolicy::kRecreate) {
      auto now = committer_.Load(ts.ident);
      if (now.ok() && !now->exists) return RecreateDropped(topic, ts, fault);
    }
    if (PausesTopic(fault)) {
      const int64_t pause = NextPauseMs(ts);
      ts.paused_until_ms = clock_.monotonic_ms() + pause;
      ts.pause_reason = fault.message();
      FLOE_LOG_WARN("topic {} paused: {}; retrying in {} ms from table {}'s positions",
                    topic, fault.message(), pause, ts.ident.ToString());
    } else {
      FLOE_RETURN_NOT_OK(SuspendTopic(topic, ts, fault.message()));
    }
    return Reassign();
  }

  // on.table.dropped: recreate. The table is gone from the catalog: the topic starts over
  // as on a first start, its table created again at the first record and filled from
  // the beginning of the log Kafka still has.
  Status RecreateDropped(const std::string& topic, TopicState& ts, const Status& why) {
    FLOE_LOG_WARN(
        "topic {}: {}; on.table.dropped is recreate: table {} is created again and "
        "filled from the beginning of the topic",
        topic, why.message(), ts.ident.ToString());
    ts.ResetForReread();
    ts.table_seen = false;
    FLOE_RETURN_NOT_OK(LoadPositionsOrPause(topic, ts));
    return Reassign();
  }

  // A pause that is not the table's fault (the registry): what was read before the
  // record is committed first, so reading resumes at the record.
  Status PauseAt(const kafka::Record& r, TopicState& ts, const std::string& reason) {
    FLOE_RETURN_NOT_OK(CommitTopic(*r.topic, ts, /*batch_done=*/false));
    if (!ts.Active()) return Status::OK();  // the commit failed: TableFault paused it
    return TableFault(*r.topic, ts, Retriable(Where(r) + ": " + reason));
  }

  // Paused topics whose time has come load their table and positions again.
  Status ResumeDue() {
    const int64_t now = clock_.monotonic_ms();
    bool resumed = false;
    for (auto& [topic, ts] : topics_) {
      if (ts.suspended || ts.paused_until_ms < 0 || now < ts.paused_until_ms) continue;
      ts.paused_until_ms = -1;
      LogScope log = ts.LogAbout();
      FLOE_RETURN_NOT_OK(LoadPositionsOrPause(topic, ts));
      if (ts.Active()) {
        FLOE_LOG_INFO("topic {} resumed after: {}", topic, ts.pause_reason);
        ts.pause_reason.clear();
        resumed = true;
      }
    }
    return resumed ? Reassign() : Status::OK();
  }

  void HandlePartitionError(const kafka::PartitionError& e) {
    auto it = topics_.find(e.tp.topic);
    if (it == topics_.end()) {
      FLOE_LOG_WARN("kafka: {}", e.message);
      return;
    }
    if (!it->second.Active()) return;
    LogScope log = it->second.LogAbout(e.tp.partition);
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

  Status Process(const kafka::Record& r) {
    auto it = topics_.find(*r.topic);
    if (it == topics_.end() || !it->second.Active()) return Status::OK();
    TopicState& ts = it->second;
    LogScope log = ts.LogAbout(r.partition);
    auto pit = ts.partitions.find(r.partition);
    if (pit == ts.partitions.end()) return Status::OK();
    PartitionState& ps = pit->second;
    int64_t expected = ps.ReadPosition();
    if (r.offset < expected)
      return Status::OK();  // already covered (stale fetch after reassign)
    ts.read_records++;
    ts.read_bytes += static_cast<int64_t>(r.key_len + r.value_len);
    if (!ts.dead_letters.already_there.empty() &&
        ts.dead_letters.AlreadyThere(r.partition, r.offset)) {
      ps.next = r.offset + 1;  // committed as a dead letter before a crash or fault
      return Status::OK();
    }
    if (r.value == nullptr && ts.settings.value_format != config::ValueFormat::kBinary) {
      // A tombstone (compacted topics carry them routinely): counted, never a row.
      ts.tombstones++;
      ps.next = r.offset + 1;
      return Status::OK();
    }
    if (!ts.skip.empty() && InSkipSet(ts, r)) {
      ts.skipped++;
      FLOE_LOG_WARN(
          "skipped record at {} ({} skipped so far): skipped by an operator's "
          "resume with skip-incompatible",
          Where(r), ts.skipped);
      ps.next = r.offset + 1;
      return Status::OK();
    }

    // value.format json: a record its schema rejects makes Floe look for a newer version
    // of the subject once before the record counts as invalid.
    for (bool rechecked = false;; rechecked = true) {
      RowPlan plan;
      Status st = resolver_.Plan(ts, r, &plan);
      if (!st.ok()) {
        if (ts.evolution) return Evolve(r, ts);
        ErrorKind kind = KindOf(st);
        if (kind == ErrorKind::kInvalidRecord) return Invalid(ts, r, st, "decode");
        if (kind == ErrorKind::kNotFound) return UnknownSchema(ts, r, st);
        if (kind == ErrorKind::kSuspend) {
          FLOE_RETURN_NOT_OK(CommitTopic(*r.topic, ts, /*batch_done=*/false));
          if (!ts.Active()) return Status::OK();
          FLOE_RETURN_NOT_OK(SuspendTopic(*r.topic, ts, Where(r) + ": " + st.message(),
                                          &r, ValueSchemaId(ts, r)));
          return Reassign();
        }
        // The registry, or the table's catalog or storage, is down: the topic waits.
        if (PausesTopic(st)) return PauseAt(r, ts, st.message());
        return TableFault(*r.topic, ts, WithContext(st, Where(r)));
      }
      // A value that fails to decode leaves nothing appended (its decoder sees to it);
      // the key was validated by Plan.
      st = ts.writer->AppendRow(
          [&](::arrow::ArrayBuilder* const* columns) {
            return resolver_.Fill(ts, r, plan, columns);
          },
          r);
      if (!st.ok()) {
        // Not the record's fault: writing the data file failed.
        if (KindOf(st) != ErrorKind::kInvalidRecord) {
          return TableFault(*r.topic, ts,
                            WithContext(st, "table " + ts.ident.ToString()));
        }
        if (!rechecked && ts.settings.value_format == config::ValueFormat::kJson &&
            resolver_.CheckJsonSubject(ts, /*rate_limited=*/true)) {
          continue;
        }
        return Invalid(ts, r, st, "decode");
      }
      ps.next = r.offset + 1;
      ts.unknown_schema_since_ms = -1;
      return Status::OK();
    }
  }

  // The record's schema evolves the table (TableSetup left the change in ts.evolution):
  // what came before is committed with the old schema, the schema change is committed on
  // its own (a crash between the two leaves a table whose new schema nothing uses yet),
  // and the topic reads on from this record with the new schema. A lost race on the
  // schema (someone changed it meanwhile) re-reads and evolves against theirs.
  Status Evolve(const kafka::Record& r, TopicState& ts) {
    schema::Evolution evolution = std::move(*ts.evolution);
    ts.evolution.reset();
    const int64_t reassignments = reassignments_;
    FLOE_RETURN_NOT_OK(CommitTopic(*r.topic, ts, /*batch_done=*/false));
    if (!ts.Active()) return Status::OK();  // the commit failed: TableFault paused it
    const int base_schema_id =
        ts.writer ? ts.writer->schema().schema_id : ts.table.schema->schema_id;
    CrashPoint("before-schema-commit");
    Status st = committer_.CommitSchema(ts.ident, base_schema_id, evolution.schema,
                                        evolution.last_column_id);
    if (!st.ok() && KindOf(st) != ErrorKind::kConflict) {
      return TableFault(*r.topic, ts, st);
    }
    if (st.ok()) {
      // The Iceberg schema is in, the Delta metaData not yet (the next sync writes it).
      CrashPoint("after-schema-commit");
      std::string changes;
      for (const auto& c : evolution.changes)
        changes += (changes.empty() ? "" : "; ") + c;
      FLOE_LOG_INFO("table {}: schema evolved for {} at {}: {}", ts.ident.ToString(),
                    ts.evolution_what, Where(r), changes);
    }
    // In place unless the commit before the change re-read the positions (fenced).
    if (in_place_evolutions_ < kMaxInPlaceEvolutions && reassignments == reassignments_) {
      // The table is loaded again with its new schema, and this record goes through
      // again; the partitions keep their positions, so the rest of this poll's records
      // follow in order and nothing is fetched twice. (Dropping the prefetched records
      // and fetching them again cost a W1 drain with a change every 500,000 records
      // ~5% of its CPU.)
      auto loaded = committer_.Load(ts.ident);
      if (!loaded.ok()) return TableFault(*r.topic, ts, loaded.status());
      auto partitions = std::move(ts.partitions);
      ts.ResetForReread();
      ts.partitions = std::move(partitions);
      ts.table = std::move(*loaded);
      if (WantsDelta(ts.settings)) SyncDelta(ts);
      ++in_place_evolutions_;
      Status again = Process(r);
      --in_place_evolutions_;
      return again;
    }
    // Changes one after another on the same record (lost races): read again from this
    // record (the rest of this poll's records of the topic are dropped, so nothing is
    // taken out of order) after a pause of no length.
    DiscardUncommitted(ts, io_);
    ts.paused_until_ms = clock_.monotonic_ms();
    ts.pause_reason = "schema change";
    return Reassign();
  }

  // The registry does not know the record's schema id (or a schema it references).
  // Within kUnknownSchemaWindowMs of the first such answer the topic waits and asks
  // again; after it, the record is invalid.
  Status UnknownSchema(TopicState& ts, const kafka::Record& r, const Status& why) {
    const int64_t now = clock_.monotonic_ms();
    // An id that already went unknown for a whole window is not waited for again for a
    // while: a burst of records with an id nobody registered costs one window, not one
    // per record.
    const int id = ValueSchemaId(ts, r);
    auto gone = ts.unknown_schema_ids.find(id);
    if (gone != ts.unknown_schema_ids.end() &&
        now - gone->second < kUnknownSchemaMemoryMs) {
      return Invalid(ts, r, why, "schema");
    }
    if (ts.unknown_schema_since_ms < 0) ts.unknown_schema_since_ms = now;
    if (now - ts.unknown_schema_since_ms < kUnknownSchemaWindowMs) {
      return PauseAt(r, ts,
                     why.message() +
                         " (the registry may not know it yet: asking again for up to " +
                         std::to_string(kUnknownSchemaWindowMs / 1000) +
                         " s before the record counts as invalid)");
    }
    ts.unknown_schema_since_ms = -1;
    if (id >= 0) ts.unknown_schema_ids[id] = now;
    return Invalid(ts, r, why, "schema");
  }

  // `stage` names where it failed, for the dead-letter table: "decode" or "schema".
  Status Invalid(TopicState& ts, const kafka::Record& r, const Status& why,
                 std::string_view stage) {
    std::string msg = Where(r) + ": " + why.message();
    if (ts.settings.on_invalid_record == config::InvalidRecordPolicy::kDlq) {
      Status st =
          dead_letters_.Add(ts, r, stage, msg, ValueSchemaId(ts, r), clock_.wall_ms());
      if (!st.ok()) return TableFault(*r.topic, ts, st);
      FLOE_LOG_DEBUG("dead-lettered {}", msg);
      ts.partitions[r.partition].next = r.offset + 1;
      return Status::OK();
    }
    if (ts.settings.on_invalid_record == config::InvalidRecordPolicy::kSkip) {
      ts.skipped++;
      FLOE_LOG_WARN("skipped invalid record ({} skipped so far): {}", ts.skipped, msg);
      ts.partitions[r.partition].next = r.offset + 1;
      return Status::OK();
    }
    // suspend: commit everything before this record, then stop the topic here.
    FLOE_RETURN_NOT_OK(CommitTopic(*r.topic, ts, /*batch_done=*/false));
    if (!ts.Active()) return Status::OK();
    FLOE_RETURN_NOT_OK(SuspendTopic(*r.topic, ts, "invalid record at " + msg, &r));
    return Reassign();
  }

  Status CommitDue(bool force) {
    int64_t now = clock_.monotonic_ms();
    for (auto& [topic, ts] : topics_) {
      if (ts.last_commit_ms == 0) ts.last_commit_ms = now;
      if (!force && now - ts.last_commit_ms < ts.settings.commit_interval_ms) continue;
      FLOE_RETURN_NOT_OK(CommitTopic(topic, ts, /*batch_done=*/true));
      if (ts.resuming && ts.Active()) {  // a whole interval read without a suspension
        LogScope log = ts.LogAbout();
        ts.resuming = false;
        FLOE_LOG_INFO("topic {} is running again", topic);
      }
    }
    return Status::OK();
  }

  // `batch_done`: every record fetched so far was processed, so the consumer's position
  // (which moves past transaction markers and aborted records) may end the batch
  // (ARCHITECTURE.md §2: b = last delivered + 1, or the consumer position if larger).
  // A failed commit pauses or suspends the topic (TableFault); the error returned is
  // Kafka's.
  Status CommitTopic(const std::string& topic, TopicState& ts, bool batch_done) {
    LogScope log = ts.LogAbout();
    ts.last_commit_ms = clock_.monotonic_ms();
    if (!ts.Active()) return Status::OK();
    if (batch_done) {
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
    // Dead letters first (dead_letters.h), even when no good record made a table yet.
    if (ts.dead_letters.buffered > 0) {
      table::Positions batch_end;
      for (auto& [p, ps] : ts.partitions) {
        if (ps.next >= 0) batch_end[topic][p] = ps.next;
      }
      Status dl = dead_letters_.Commit(ts, batch_end, cluster_id_);
      if (!dl.ok()) {
        RecordCommitFailure(ts.instruments, dl);
        if (KindOf(dl) == ErrorKind::kConflict) return Refence(topic, ts, dl);
        return TableFault(topic, ts, dl);
      }
    }
    if (!ts.writer && !ts.table.exists)
      return Status::OK();  // nothing to record positions in
    table::CommitRequest req;
    req.ident = ts.ident;
    req.cluster_id = cluster_id_;
    req.retention =
        iceberg::RetentionPolicy{ts.settings.snapshot_retention_ms,
                                 static_cast<int>(ts.settings.snapshot_min_count)};
    // Background maintenance expires snapshots and deletes their files; the commit's own
    // expiry then only bounds the metadata should maintenance fall behind.
    req.expire_age_factor = config_.maintenance.interval_ms > 0 ? 4 : 1;
    req.settings_properties = table::SettingsProperties(ts.settings);
    const int64_t commit_started_ms = clock_.monotonic_ms();
    const int64_t newest_ms = ts.writer ? ts.writer->newest_timestamp_ms() : -1;
    if (ts.writer) {
      auto files = ts.writer->TakeFiles();
      if (!files.ok()) {
        return TableFault(topic, ts,
                          WithContext(files.status(), "table " + ts.ident.ToString()));
      }
      req.files = std::move(*files);
    }
    int64_t records = 0;
    for (const auto& f : req.files) records += f.record_count;
    for (auto& [p, ps] : ts.partitions) {
      if (ps.next < 0) continue;
      req.expected[topic][p] =
          ps.start_recorded ? std::optional<int64_t>(ps.start) : std::nullopt;
      req.new_positions[topic][p] = ps.next;
    }
    Status st = committer_.Commit(req);
    if (!st.ok()) {
      RecordCommitFailure(ts.instruments, st);
      // Not committed (the committer deleted the files) or, kStateUnknown, perhaps
      // committed (the files stay). Either way the topic reads again from the positions
      // the table records.
      if (KindOf(st) == ErrorKind::kConflict) return Refence(topic, ts, st);
      return TableFault(topic, ts, st);
    }
    std::map<kafka::TopicPartition, int64_t> group_offsets;
    for (auto& [p, ps] : ts.partitions) {
      if (ps.next < 0) continue;
      ps.start = ps.next;
      ps.start_recorded = true;
      ps.next = -1;
      group_offsets[{topic, p}] = ps.start;
    }
    Status group = source_->CommitForMonitoring(group_offsets);
    if (!group.ok()) {
      FLOE_LOG_WARN_EVERY(
          topic, 300000,
          "topic {}: group offsets for monitoring not committed ({}); the "
          "table's positions are unaffected",
          topic, group.message());
    }
    ts.committed_records += records;
    ts.newest_committed_timestamp_ms =
        std::max(ts.newest_committed_timestamp_ms, newest_ms);
    RecordCommit(ts.instruments, req.files,
                 static_cast<double>(clock_.monotonic_ms() - commit_started_ms) / 1000);
    ts.last_commit_wall_ms = clock_.wall_ms();
    committed_since_publish_ = true;
    ts.backoff_ms = 0;
    ts.table_seen = true;
    if (WantsDelta(ts.settings)) SyncDelta(ts);
    FLOE_LOG_DEBUG("table {}: committed {} records in {} files", ts.ident.ToString(),
                   records, req.files.size());
    return Status::OK();
  }

  // Fenced: another writer advanced this table's (or its dead-letter table's) positions.
  // The batch goes; the topic reads again at once from the tables' positions.
  Status Refence(const std::string& topic, TopicState& ts, const Status& why) {
    FLOE_LOG_WARN("table {}: {}; re-reading from the table's positions",
                  ts.ident.ToString(), why.message());
    DiscardUncommitted(ts, io_);
    FLOE_RETURN_NOT_OK(LoadPositionsOrPause(topic, ts));
    return Reassign();
  }

  // LoadPositions after a fence or a pause. What it returns is Kafka's (a table's faults
  // are handled inside it): a watermark query that timed out while the broker or this
  // process was stalled, an assignment refused. It pauses the topic with backoff, like a
  // table fault (a kind that would suspend is retried too: Kafka's errors here are the
  // cluster's state, not the table's); the daemon goes on and the topic reads again from
  // its table's positions. Only a configuration error ends the run.
  Status LoadPositionsOrPause(const std::string& topic, TopicState& ts) {
    Status st = LoadPositions(topic, ts);
    if (st.ok() || KindOf(st) == ErrorKind::kInvalidConfig) return st;
    return TableFault(
        topic, ts,
        PausesTopic(st) ? WithContext(st, "kafka") : Retriable("kafka: " + st.message()));
  }

  // Delta follows Iceberg; a failure here is logged and repaired by a later sync (with
  // backoff, even when no more records come; at every commit; at the next start), never
  // by re-committing Iceberg.
  void SyncDelta(TopicState& ts) {
    LogScope log = ts.LogAbout();
    auto version = delta_.Sync(ts.ident);
    if (version.ok()) {
      if (ts.delta_retry_at_ms >= 0) {
        FLOE_LOG_INFO("table {}: Delta log caught up (version {})", ts.ident.ToString(),
                      *version);
      }
      ts.delta_retry_at_ms = -1;
      ts.delta_backoff_ms = 0;
      return;
    }
    ts.delta_backoff_ms = ts.delta_backoff_ms == 0
                              ? kFirstPauseMs
                              : std::min(ts.delta_backoff_ms * 2, kMaxPauseMs);
    ts.delta_retry_at_ms = clock_.monotonic_ms() + ts.delta_backoff_ms;
    FLOE_LOG_WARN("table {}: Delta log not updated yet ({}); trying again in {} ms",
                  ts.ident.ToString(), version.status().message(), ts.delta_backoff_ms);
  }

  void RetryDeltaDue() {
    const int64_t now = clock_.monotonic_ms();
    for (auto& [topic, ts] : topics_) {
      if (ts.delta_retry_at_ms >= 0 && now >= ts.delta_retry_at_ms && !ts.suspended) {
        SyncDelta(ts);
      }
    }
  }

  void EnforceMemoryBudget() {
    int64_t total = 0;
    TopicState* largest = nullptr;
    const std::string* largest_topic = nullptr;
    int64_t largest_bytes = -1;
    for (auto& [topic, ts] : topics_) {
      int64_t b = ts.writer ? ts.writer->MemoryBytes() : 0;
      if (ts.dead_letters.writer) b += ts.dead_letters.writer->MemoryBytes();
      if (b == 0) continue;
      total += b;
      if (b > largest_bytes) {
        largest_bytes = b;
        largest = &ts;
        largest_topic = &topic;
      }
    }
    metrics_->memory_in_use().Set(static_cast<double>(total));
    if (total > config_.memory_budget_bytes && largest != nullptr) {
      LogScope log = largest->LogAbout();
      FLOE_LOG_DEBUG("memory {} > budget {}: committing {} early", total,
                     config_.memory_budget_bytes, *largest_topic);
      Status st = CommitTopic(*largest_topic, *largest, true);
      if (!st.ok()) FLOE_LOG_WARN("early commit failed: {}", st.message());
    }
  }

  void LogProgress() {
    const int64_t now = clock_.monotonic_ms();
    for (auto& [topic, ts] : topics_) {
      LogScope log = ts.LogAbout();
      LogTopicProgress(topic, ts, now - last_progress_);
    }
    last_progress_ = now;
  }

  config::Config config_;  // replaced by a reload
  kafka::RecordSource* source_;
  storage::FileIO* io_;
  Clock clock_;
  table::Committer committer_;
  table::DeltaMirror delta_;
  TableSetup tables_;
  DeadLetters dead_letters_;
  SchemaResolver resolver_;
  kafka::Batch batch_;
  std::vector<kafka::PartitionError> errors_;
  int64_t last_discover_ = 0;
  int64_t last_progress_ = 0;
  int64_t started_ms_ = 0;
  std::string cluster_id_;
  std::map<std::string, TopicState> topics_;
  std::map<std::string, int64_t> missing_warned_ms_;     // configured topics not found
  AdminBridge* admin_;                                   // optional
  std::function<Result<config::Config>()> load_config_;  // optional
  int64_t last_watermarks_ = 0;
  int in_place_evolutions_ = 0;  // Evolve calls Process again for the record
  // Counters of topics a reload restarted, until Discover starts them again.
  std::map<std::string, TopicState> restarted_counters_;
  int64_t reassignments_ = 0;
  int64_t last_publish_ = 0;
  bool committed_since_publish_ = false;
  std::unique_ptr<metrics::Metrics> owned_metrics_;  // when the caller gave none
  metrics::Metrics* metrics_;
};

}  // namespace

Status Pipeline::Run(std::atomic<bool>& stop) {
  Status started = Start(stop);
  if (!started.ok()) {
    // Stopped while waiting for Kafka or the catalog: nothing was read, nothing is lost.
    if (stop.load()) return Status::OK();
    return started;
  }
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
