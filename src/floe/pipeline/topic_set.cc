#include "floe/pipeline/topic_set.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "floe/common/log.h"
#include "floe/metrics/metrics.h"
#include "floe/pipeline/dead_letters.h"
#include "floe/pipeline/range_commit.h"
#include "floe/pipeline/schema_resolver.h"
#include "floe/pipeline/table_faults.h"
#include "floe/pipeline/translator.h"
#include "floe/table/committer.h"

namespace floe::pipeline {
namespace {

constexpr int kMetadataTimeoutMs = 10000;
constexpr int64_t kMissingTopicWarnMs = 600000;

}  // namespace

Status TopicSet::Discover() {
  FLOE_ASSIGN_OR_RAISE(auto topics, d_.source->ListTopics(kMetadataTimeoutMs));
  FLOE_ASSIGN_OR_RAISE(cluster_id_, d_.source->ClusterId(kMetadataTimeoutMs));
  std::vector<std::string> names;
  for (const auto& [name, count] : topics) names.push_back(name);
  FLOE_RETURN_NOT_OK(config::CheckTableCollisions(*d_.config, names));
  bool changed = false;
  Status first_error;
  for (const auto& [name, count] : topics) {
    auto settings = config::ResolveTopic(*d_.config, name);
    if (!settings) continue;
    auto it = topics_.find(name);
    if (it != topics_.end() && it->second.partition_count == count) continue;
    if (it == topics_.end()) {
      TopicState ts;
      ts.settings = *settings;
      ts.ident = catalog::TableIdent{settings->NamespaceLevels(), settings->table};
      ts.table_name = settings->QualifiedTable();
      ts.instruments = d_.metrics->Table(name, settings->QualifiedTable());
      // A topic a reload restarted keeps its run's counters when its table stayed.
      if (auto kept = restarted_counters_.find(name); kept != restarted_counters_.end()) {
        if (kept->second.ident == ts.ident) CarryRunCounters(kept->second, &ts);
        restarted_counters_.erase(kept);
      }
      it = topics_.emplace(name, std::move(ts)).first;
      it->second.translator = std::make_unique<Translator>(&it->second, d_.resolver,
                                                           d_.dead_letters, d_.clock);
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
void TopicSet::WarnMissingTopics(const std::map<std::string, int>& existing) {
  const int64_t now = d_.clock->monotonic_ms();
  for (const auto& entry : d_.config->topics) {
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
Status TopicSet::LoadPositions(const std::string& topic, TopicState& ts) {
  if (!ts.Active()) return Status::OK();
  LogScope log = ts.LogAbout();
  auto loaded = d_.committer->Load(ts.ident);
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
    Status formats = d_.committer->EnsureFormats(ts.ident, FormatsProperty(ts.settings));
    if (!formats.ok()) return TableFault(topic, ts, formats);
    // Recovery (ARCHITECTURE.md §2): Floe snapshots committed to Iceberg but not yet to
    // Delta (a crash in between) are replayed into Delta before reading on.
    if (WantsDelta(ts.settings)) d_.commits->SyncDelta(ts);
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
    Status dl = d_.dead_letters->Load(ts);
    if (!dl.ok()) return TableFault(topic, ts, dl);
  }
  const std::map<int32_t, int64_t>* recorded = nullptr;
  if (ts.table.positions) {
    auto it = ts.table.positions->find(topic);
    if (it != ts.table.positions->end()) recorded = &it->second;
  }
  for (int32_t p = 0; p < ts.partition_count; ++p) {
    if (ts.partitions.count(p) || ts.elsewhere.count(p)) continue;
    FLOE_ASSIGN_OR_RAISE(auto wm,
                         d_.source->QueryWatermarks({topic, p}, kMetadataTimeoutMs));
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
      ps.start = wm.low;  // a new table (or partition) starts at the beginning of the log
    }
    ts.partitions[p] = ps;
  }
  return Status::OK();
}

Status TopicSet::Reassign() {
  std::map<kafka::TopicPartition, int64_t> assignment;
  for (auto& [topic, ts] : topics_) {
    if (!ts.Active()) continue;
    for (auto& [p, ps] : ts.partitions) {
      assignment[{topic, p}] = ps.ReadPosition();
    }
  }
  FLOE_RETURN_NOT_OK(d_.source->Assign(assignment));
  ++reassignments_;
  return Status::OK();
}

Status TopicSet::SuspendTopic(const std::string& topic, TopicState& ts,
                              const std::string& reason, const kafka::Record* r,
                              int schema_id) {
  LogScope log = ts.LogAbout(r != nullptr ? r->partition : -1);
  ts.suspended = true;
  ts.resuming = false;
  ts.suspend_reason = reason;
  ts.suspension =
      Suspension{reason, schema_id, -1, -1, d_.clock->wall_ms(), r != nullptr};
  if (r != nullptr) {
    ts.suspension.partition = r->partition;
    ts.suspension.offset = r->offset;
  }
  FLOE_LOG_ERROR("topic {} suspended: {}", topic, reason);
  if (r != nullptr) (void)SaveTopicState(*d_.committer, topic, ts);  // it logs a failure
  return Status::OK();
}

// An operator's resume: the topic reads again from its table's positions, like a pause
// ending; with `skip`, the suspension's schema id (else its record) joins the skip set.
Status TopicSet::ResumeTopic(const std::string& topic, bool skip) {
  auto it = topics_.find(topic);
  if (it == topics_.end()) {
    return NotFound("topic " + topic + " is not ingested by this Floe (see floe status)");
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
  Status saved = ts.suspension.persist || skip ? SaveTopicState(*d_.committer, topic, ts)
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
  DiscardUncommitted(ts, d_.io);
  ts.last_commit_ms = d_.clock->monotonic_ms();  // running once a full interval went well
  Status loaded = LoadPositions(topic, ts);
  if (!loaded.ok()) {
    ts.partition_count = 0;  // the next discovery loads the partitions again
    FLOE_LOG_WARN("topic {}: {}; retried at the next discovery", topic, loaded.message());
  }
  return Reassign();
}

Status TopicSet::TableFault(const std::string& topic, TopicState& ts,
                            const Status& fault) {
  LogScope log = ts.LogAbout();
  DiscardUncommitted(ts, d_.io);
  if (KindOf(fault) == ErrorKind::kNotFound &&
      ts.settings.on_table_dropped == config::DroppedTablePolicy::kRecreate) {
    auto now = d_.committer->Load(ts.ident);
    if (now.ok() && !now->exists) return RecreateDropped(topic, ts, fault);
  }
  if (PausesTopic(fault)) {
    const int64_t pause = NextPauseMs(ts);
    ts.paused_until_ms = d_.clock->monotonic_ms() + pause;
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
Status TopicSet::RecreateDropped(const std::string& topic, TopicState& ts,
                                 const Status& why) {
  FLOE_LOG_WARN(
      "topic {}: {}; on.table.dropped is recreate: table {} is created again and "
      "filled from the beginning of the topic",
      topic, why.message(), ts.ident.ToString());
  ts.ResetForReread();
  ts.table_seen = false;
  FLOE_RETURN_NOT_OK(LoadPositionsOrPause(topic, ts));
  return Reassign();
}

Status TopicSet::ResumeDue() {
  const int64_t now = d_.clock->monotonic_ms();
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

void TopicSet::HandlePartitionError(const kafka::PartitionError& e) {
  auto it = topics_.find(e.tp.topic);
  if (it == topics_.end()) {
    FLOE_LOG_WARN("kafka: {}", e.message);
    return;
  }
  if (!it->second.Active()) return;
  LogScope log = it->second.LogAbout(e.tp.partition);
  if (e.out_of_range) {
    auto wm = d_.source->QueryWatermarks(e.tp, kMetadataTimeoutMs);
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

Status TopicSet::Refence(const std::string& topic, TopicState& ts, const Status& why) {
  FLOE_LOG_WARN("table {}: {}; re-reading from the table's positions",
                ts.ident.ToString(), why.message());
  DiscardUncommitted(ts, d_.io);
  FLOE_RETURN_NOT_OK(LoadPositionsOrPause(topic, ts));
  return Reassign();
}

// LoadPositions after a fence or a pause. What it returns is Kafka's (a table's faults
// are handled inside it): a watermark query that timed out while the broker or this
// process was stalled, an assignment refused. It pauses the topic with backoff, like a
// table fault (a kind that would suspend is retried too: Kafka's errors here are the
// cluster's state, not the table's); the daemon goes on and the topic reads again from
// its table's positions. Only a configuration error ends the run.
Status TopicSet::LoadPositionsOrPause(const std::string& topic, TopicState& ts) {
  Status st = LoadPositions(topic, ts);
  if (st.ok() || KindOf(st) == ErrorKind::kInvalidConfig) return st;
  return TableFault(
      topic, ts,
      PausesTopic(st) ? WithContext(st, "kafka") : Retriable("kafka: " + st.message()));
}

Status TopicSet::Rebalanced(const kafka::Rebalance& rebalance) {
  std::set<std::string> moved;
  for (const auto& tp : rebalance.revoked) {
    auto it = topics_.find(tp.topic);
    if (it == topics_.end()) continue;
    TopicState& ts = it->second;
    LogScope log = ts.LogAbout(tp.partition);
    if (ts.partitions.count(tp.partition) && ts.Active()) {
      FLOE_LOG_INFO(
          "partition {} of topic {} was revoked: what was read and not "
          "committed is dropped, and read again by its next reader",
          tp.partition, tp.topic);
      DiscardUncommitted(ts, d_.io);
    }
    ts.partitions.erase(tp.partition);
    ts.elsewhere.insert(tp.partition);
    moved.insert(tp.topic);
  }
  for (const auto& tp : rebalance.assigned) {
    auto it = topics_.find(tp.topic);
    if (it == topics_.end()) continue;
    it->second.elsewhere.erase(tp.partition);
    moved.insert(tp.topic);
  }
  for (const auto& topic : moved) {
    TopicState& ts = topics_.at(topic);
    if (ts.Active()) FLOE_RETURN_NOT_OK(LoadPositionsOrPause(topic, ts));
  }
  return moved.empty() ? Status::OK() : Reassign();
}

std::pair<const std::string, TopicState>* TopicSet::LargestBuffer(int64_t* total) {
  *total = 0;
  std::pair<const std::string, TopicState>* largest = nullptr;
  int64_t largest_bytes = -1;
  for (auto& entry : topics_) {
    const TopicState& ts = entry.second;
    int64_t b = ts.writer ? ts.writer->MemoryBytes() : 0;
    if (ts.dead_letters.writer) b += ts.dead_letters.writer->MemoryBytes();
    if (b == 0) continue;
    *total += b;
    if (b > largest_bytes) {
      largest_bytes = b;
      largest = &entry;
    }
  }
  return largest;
}

void TopicSet::RetryDelta(bool all) {
  const int64_t now = d_.clock->monotonic_ms();
  for (auto& [topic, ts] : topics_) {
    if (ts.delta_retry_at_ms < 0) continue;
    if (all || (now >= ts.delta_retry_at_ms && !ts.suspended)) d_.commits->SyncDelta(ts);
  }
}

void TopicSet::RefreshJsonSubjects() {
  for (auto& [topic, ts] : topics_) {
    if (ts.settings.value_format == config::ValueFormat::kJson) {
      LogScope log = ts.LogAbout();
      (void)d_.resolver->CheckJsonSubject(ts, /*rate_limited=*/false);
    }
  }
}

void TopicSet::LogProgress(int64_t elapsed_ms) {
  for (auto& [topic, ts] : topics_) {
    LogScope log = ts.LogAbout();
    LogTopicProgress(topic, ts, elapsed_ms);
  }
}

void TopicSet::LogRunSummary(int64_t elapsed_ms) const {
  int64_t committed = 0;
  int64_t suspended = 0;
  for (const auto& [topic, ts] : topics_) {
    committed += ts.committed_records;
    suspended += ts.suspended ? 1 : 0;
  }
  const double seconds = static_cast<double>(std::max<int64_t>(1, elapsed_ms)) / 1000;
  FLOE_LOG_INFO(
      "this run: {} records committed to {} tables in {:.0f} s ({:.0f} records/s){}",
      committed, topics_.size(), seconds, committed / seconds,
      suspended > 0 ? fmt::format(", {} topics suspended", suspended) : "");
}

void TopicSet::Remove(const std::string& topic, bool restart) {
  auto it = topics_.find(topic);
  if (it == topics_.end()) return;
  if (restart) {
    TopicState& kept = restarted_counters_[topic];
    kept.ident = it->second.ident;
    CarryRunCounters(it->second, &kept);
  }
  topics_.erase(it);
}

}  // namespace floe::pipeline
