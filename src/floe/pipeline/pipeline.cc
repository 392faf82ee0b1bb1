#include "floe/pipeline/pipeline.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <thread>

#include "floe/common/log.h"
#include "floe/common/util.h"
#include "floe/kafka/consumer.h"
#include "floe/metrics/metrics.h"
#include "floe/pipeline/admin_bridge.h"
#include "floe/pipeline/dead_letters.h"
#include "floe/pipeline/range_commit.h"
#include "floe/pipeline/reload.h"
#include "floe/pipeline/schema_resolver.h"
#include "floe/pipeline/status_metrics.h"
#include "floe/pipeline/table_faults.h"
#include "floe/pipeline/table_setup.h"
#include "floe/pipeline/topic_set.h"
#include "floe/pipeline/topic_state.h"
#include "floe/pipeline/translator.h"
#include "floe/storage/file_io.h"
#include "floe/table/committer.h"
#include "floe/table/delta_mirror.h"

namespace floe::pipeline {
namespace {

constexpr int kPollMs = 100;
constexpr size_t kPollMaxRecords = 20000;
constexpr int kMetadataTimeoutMs = 10000;
constexpr int64_t kRediscoverMs = 30000;
constexpr int64_t kProgressMs = 10000;
// The admin status: published at most this often, high watermarks refreshed this often.
constexpr int64_t kPublishMs = 500;
constexpr int64_t kWatermarksMs = 5000;
constexpr int kWatermarkTimeoutMs = 2000;
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
        owned_metrics_(c.metrics ? nullptr : std::make_unique<metrics::Metrics>()),
        metrics_(c.metrics ? c.metrics : owned_metrics_.get()),
        source_(c.source),
        io_(c.io),
        clock_(WithDefaults(std::move(c.clock))),
        committer_(c.catalog, c.io, clock_.wall_ms),
        delta_(c.catalog, c.io, clock_.wall_ms),
        tables_(&committer_, c.io),
        dead_letters_(c.catalog, &committer_, c.io, &delta_),
        resolver_(c.schemas, &tables_, clock_.monotonic_ms),
        commits_(&committer_, &delta_, &dead_letters_, c.source, &clock_),
        topics_(TopicSet::Deps{&config_, c.source, c.io, &clock_, &committer_,
                               &dead_letters_, &commits_, &resolver_, metrics_}),
        admin_(c.admin),
        load_config_(std::move(c.load_config)) {
    metrics_->memory_budget().Set(static_cast<double>(config_.memory_budget_bytes));
  }

  Status Start(std::atomic<bool>& stop) override {
    Status writable = committer_.CheckWritable();
    if (!writable.ok()) FLOE_LOG_ERROR("{}", writable.message());
    FLOE_RETURN_NOT_OK(
        WithRetry(stop, "discover topics", [&] { return topics_.Discover(); }));
    last_discover_ = last_progress_ = started_ms_ = clock_.monotonic_ms();
    return Status::OK();
  }

  Status Step(std::atomic<bool>& /*stop*/) override {
    if (BatchDone()) {
      batch_.Clear();
      cursor_ = 0;
      retaking_ = nullptr;
      errors_.clear();
      // A seek from here on (a partition error, a rebalance) comes after the fetch: the
      // consumer fetches this batch's records again, so what is left of it is dropped.
      seen_reassignments_ = topics_.reassignments();
      Status st = source_->Poll(kPollMs, kPollMaxRecords, &batch_, &errors_);
      if (!st.ok()) {
        FLOE_LOG_WARN("{}; retrying", st.message());
        clock_.sleep_ms(1000);
        return Status::OK();
      }
      for (const auto& e : errors_) topics_.HandlePartitionError(e);
      for (const auto& moved : source_->TakeRebalances()) {
        FLOE_RETURN_NOT_OK(topics_.Rebalanced(moved));
      }
    }
    FLOE_RETURN_NOT_OK(Translate());
    if (BatchDone()) batch_.Clear();  // the records' buffers go back before commits
    FLOE_RETURN_NOT_OK(CommitDue(false));
    FLOE_RETURN_NOT_OK(topics_.ResumeDue());
    topics_.RetryDelta(/*all=*/false);
    EnforceMemoryBudget();
    if (admin_ != nullptr) FLOE_RETURN_NOT_OK(AdminStep());
    if (clock_.monotonic_ms() - last_discover_ > kRediscoverMs) {
      Status ds = topics_.Discover();
      if (!ds.ok()) FLOE_LOG_WARN("topic discovery failed: {}", ds.message());
      topics_.RefreshJsonSubjects();
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
    topics_.RetryDelta(/*all=*/true);
    LogProgress();
    topics_.LogRunSummary(clock_.monotonic_ms() - started_ms_);
    return Status::OK();
  }

  std::vector<TopicStatus> Topics() const override {
    std::vector<TopicStatus> out;
    for (const auto& [topic, ts] : topics_.all()) out.push_back(StatusOf(topic, ts));
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

  // Once per Step: the operators' commands, the high watermarks (every kWatermarksMs)
  // and the status snapshot (every kPublishMs, and after a command or a commit, so the
  // freshness metrics see a commit at once).
  Status AdminStep() {
    const int64_t now = clock_.monotonic_ms();
    if (now - last_watermarks_ >= kWatermarksMs) {
      for (auto& [topic, ts] : topics_.all()) {
        LogScope log = ts.LogAbout();
        RefreshWatermarks(source_, topic, ts, kWatermarkTimeoutMs);
      }
      last_watermarks_ = now;
    }
    auto commands = admin_->TakeCommands();
    std::vector<Status> answers;
    for (const auto& c : commands) {
      answers.push_back(c.reload ? Reload()
                                 : topics_.ResumeTopic(c.topic, c.skip_incompatible));
    }
    if (!commands.empty() || committed_since_publish_ ||
        now - last_publish_ >= kPublishMs) {
      for (auto& [topic, ts] : topics_.all()) TakeFetchedWatermarks(source_, topic, ts);
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
    ReloadPlan plan = PlanReload(config_, std::move(next), topics_.all());
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
        TopicState& ts = topics_.all().at(topic);
        LogScope log = ts.LogAbout();
        Status committed = CommitTopic(topic, ts, BatchDone());
        const bool done = committed.ok() && ts.Active();
        FLOE_LOG_INFO("topic {}: {}; {}", topic, why,
                      done ? "committed and stopped"
                           : "stopped (what it had not committed is read again by its "
                             "next run)");
        DiscardUncommitted(ts, io_);
      }
      topics_.Remove(topic, restart);  // a restart's counters go on (Discover)
    };
    for (const auto& t : plan.stop) stop(t, "no longer in the configuration", false);
    for (const auto& t : plan.restart) {
      stop(t, "settings changed by a reload, starting again from its table's positions",
           true);
    }
    if (Status st = topics_.Reassign(); !st.ok()) {
      FLOE_LOG_WARN(
          "reload: reassigning the partitions failed: {}; retried at the next "
          "discovery",
          st.message());
    }
    Status discovered = topics_.Discover();
    last_discover_ = clock_.monotonic_ms();
    if (!discovered.ok()) {
      FLOE_LOG_WARN("reload: topic discovery failed: {}; retried in {} s",
                    discovered.message(), kRediscoverMs / 1000);
    }
    FLOE_LOG_INFO(
        "reload: configuration applied ({} topics stopped, {} restarted; {} running)",
        plan.stop.size(), plan.restart.size(), topics_.all().size());
    return Status::OK();
  }

  // A pause that is not the table's fault (the registry): what was read before the
  // record is committed first, so reading resumes at the record.
  Status PauseAt(const kafka::Record& r, TopicState& ts, const std::string& reason) {
    FLOE_RETURN_NOT_OK(CommitTopic(*r.topic, ts, /*batch_done=*/false));
    if (!ts.Active()) return Status::OK();  // the commit failed: TableFault paused it
    return topics_.TableFault(*r.topic, ts, Retriable(Where(r) + ": " + reason));
  }

  // Takes the batch's records from the cursor on through their topics' translators.
  // A record a translator cannot take ends the slice: the loop acts on its verdict
  // between slices (the record path never commits, reloads or seeks), and the next Step
  // goes on from the cursor without fetching again.
  Status Translate() {
    const auto& records = batch_.records();
    DropIfSeeked();
    while (cursor_ < records.size()) {
      const kafka::Record& r = records[cursor_];
      auto it = topics_.all().find(*r.topic);
      if (it == topics_.all().end() || !it->second.Active()) {
        ++cursor_;
        continue;
      }
      LogScope log = it->second.LogAbout(r.partition);
      Verdict v = it->second.translator->Add(r);
      if (v.taken()) {
        ++cursor_;
        continue;
      }
      bool again = false;
      FLOE_RETURN_NOT_OK(Act(it->first, it->second, r, std::move(v), &again));
      if (!again) ++cursor_;
      break;
    }
    DropIfSeeked();
    return Status::OK();
  }

  // After a seek (TopicSet::Reassign), the consumer fetches the rest of the batch again
  // from the new positions: what is left of it is dropped.
  void DropIfSeeked() {
    if (topics_.reassignments() == seen_reassignments_) return;
    seen_reassignments_ = topics_.reassignments();
    cursor_ = batch_.records().size();
  }

  // Every record fetched so far was taken (or dropped after a seek).
  bool BatchDone() const { return cursor_ >= batch_.records().size(); }

  // What the loop does for a record its translator stopped at. `again`: the record is
  // taken again (the table evolved in place).
  Status Act(const std::string& topic, TopicState& ts, const kafka::Record& r, Verdict v,
             bool* again) {
    switch (v.kind) {
      case Verdict::Kind::kTaken:
        return Status::OK();
      case Verdict::Kind::kFault:
        return topics_.TableFault(topic, ts, v.fault);
      case Verdict::Kind::kPause:
        return PauseAt(r, ts, v.reason);
      case Verdict::Kind::kSuspend:
        // What was read before the record is committed; the topic stops at it.
        FLOE_RETURN_NOT_OK(CommitTopic(topic, ts, /*batch_done=*/false));
        if (!ts.Active()) return Status::OK();  // the commit failed: TableFault paused it
        FLOE_RETURN_NOT_OK(topics_.SuspendTopic(topic, ts, v.reason, &r, v.schema_id));
        return topics_.Reassign();
      case Verdict::Kind::kEvolve:
        return Evolve(r, ts, again);
    }
    return Status::OK();
  }

  // The record's schema evolves the table (TableSetup left the change in ts.evolution):
  // what came before is committed with the old schema, the schema change is committed on
  // its own (a crash between the two leaves a table whose new schema nothing uses yet),
  // and the topic reads on from this record with the new schema. A lost race on the
  // schema (someone changed it meanwhile) re-reads and evolves against theirs.
  Status Evolve(const kafka::Record& r, TopicState& ts, bool* again) {
    // Changes one after another on the same record are lost races (counted while the
    // cursor stays at it).
    if (retaking_ != &r) in_place_evolutions_ = 0;
    schema::Evolution evolution = std::move(*ts.evolution);
    ts.evolution.reset();
    const int64_t reassignments = topics_.reassignments();
    FLOE_RETURN_NOT_OK(CommitTopic(*r.topic, ts, /*batch_done=*/false));
    if (!ts.Active()) return Status::OK();  // the commit failed: TableFault paused it
    Status st = commits_.CommitSchema(ts, evolution, Where(r));
    if (!st.ok()) return topics_.TableFault(*r.topic, ts, st);
    // In place unless the commit before the change re-read the positions (fenced).
    if (in_place_evolutions_ < kMaxInPlaceEvolutions &&
        reassignments == topics_.reassignments()) {
      // The table is loaded again with its new schema, and this record goes through
      // again; the partitions keep their positions, so the rest of this poll's records
      // follow in order and nothing is fetched twice (fetching the prefetched records
      // again costs a drain with frequent changes a few percent of its CPU).
      Status reloaded = commits_.ReloadTable(ts);
      if (!reloaded.ok()) return topics_.TableFault(*r.topic, ts, reloaded);
      ++in_place_evolutions_;
      retaking_ = &r;
      *again = true;
      return Status::OK();
    }
    // Changes one after another on the same record (lost races): read again from this
    // record (the rest of this poll's records of the topic are dropped, so nothing is
    // taken out of order) after a pause of no length.
    DiscardUncommitted(ts, io_);
    ts.paused_until_ms = clock_.monotonic_ms();
    ts.pause_reason = "schema change";
    return topics_.Reassign();
  }

  Status CommitDue(bool force) {
    int64_t now = clock_.monotonic_ms();
    for (auto& [topic, ts] : topics_.all()) {
      if (ts.last_commit_ms == 0) ts.last_commit_ms = now;
      if (!force && now - ts.last_commit_ms < ts.settings.commit_interval_ms) continue;
      FLOE_RETURN_NOT_OK(CommitTopic(topic, ts, BatchDone()));
      if (ts.resuming && ts.Active()) {  // a whole interval read without a suspension
        LogScope log = ts.LogAbout();
        ts.resuming = false;
        FLOE_LOG_INFO("topic {} is running again", topic);
      }
    }
    return Status::OK();
  }

  // `batch_done`: every record fetched so far was taken (RangeCommit::Options). A
  // failed commit pauses or suspends the topic (TableFault), or re-reads it after a lost
  // fence; the error returned is Kafka's.
  Status CommitTopic(const std::string& topic, TopicState& ts, bool batch_done) {
    LogScope log = ts.LogAbout();
    ts.last_commit_ms = clock_.monotonic_ms();
    if (!ts.Active()) return Status::OK();
    RangeCommit::Options options;
    options.cluster_id = topics_.cluster_id();
    options.expire_age_factor = config_.maintenance.interval_ms > 0 ? 4 : 1;
    options.batch_done = batch_done;
    auto committed = commits_.Commit(ts, *ts.translator, options);
    if (committed.ok()) {
      committed_since_publish_ |= *committed;
      return Status::OK();
    }
    if (KindOf(committed.status()) == ErrorKind::kConflict) {
      return topics_.Refence(topic, ts, committed.status());
    }
    return topics_.TableFault(topic, ts, committed.status());
  }

  // Over memory.budget.bytes, the topic buffering the most commits early.
  void EnforceMemoryBudget() {
    int64_t total = 0;
    auto* largest = topics_.LargestBuffer(&total);
    metrics_->memory_in_use().Set(static_cast<double>(total));
    if (total > config_.memory_budget_bytes && largest != nullptr) {
      LogScope log = largest->second.LogAbout();
      FLOE_LOG_DEBUG("memory {} > budget {}: committing {} early", total,
                     config_.memory_budget_bytes, largest->first);
      Status st = CommitTopic(largest->first, largest->second, BatchDone());
      if (!st.ok()) FLOE_LOG_WARN("early commit failed: {}", st.message());
    }
  }

  void LogProgress() {
    const int64_t now = clock_.monotonic_ms();
    topics_.LogProgress(now - last_progress_);
    last_progress_ = now;
  }

  config::Config config_;                            // replaced by a reload
  std::unique_ptr<metrics::Metrics> owned_metrics_;  // when the caller gave none
  metrics::Metrics* metrics_;
  kafka::RecordSource* source_;
  storage::FileIO* io_;
  Clock clock_;
  table::Committer committer_;
  table::DeltaMirror delta_;
  TableSetup tables_;
  DeadLetters dead_letters_;
  SchemaResolver resolver_;
  RangeCommit commits_;
  TopicSet topics_;
  kafka::Batch batch_;
  std::vector<kafka::PartitionError> errors_;
  int64_t last_discover_ = 0;
  int64_t last_progress_ = 0;
  int64_t started_ms_ = 0;
  AdminBridge* admin_;                                   // optional
  std::function<Result<config::Config>()> load_config_;  // optional
  int64_t last_watermarks_ = 0;
  size_t cursor_ = 0;  // the next record of batch_ to take
  int64_t seen_reassignments_ = 0;
  // Evolve's changes in place on one record (lost races), and the record they are on.
  int in_place_evolutions_ = 0;
  const kafka::Record* retaking_ = nullptr;
  int64_t last_publish_ = 0;
  bool committed_since_publish_ = false;
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
