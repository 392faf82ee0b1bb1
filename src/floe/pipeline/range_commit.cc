#include "floe/pipeline/range_commit.h"

#include <algorithm>

#include "floe/common/crash.h"
#include "floe/common/log.h"
#include "floe/kafka/consumer.h"
#include "floe/pipeline/dead_letters.h"
#include "floe/pipeline/status_metrics.h"
#include "floe/pipeline/table_faults.h"
#include "floe/pipeline/topic_state.h"
#include "floe/table/delta_mirror.h"
#include "floe/table/table_properties.h"

namespace floe::pipeline {

table::CommitRequest RequestFor(const catalog::TableIdent& ident,
                                const std::vector<TranslatedRange>& ranges) {
  table::CommitRequest req;
  req.ident = ident;
  for (const auto& range : ranges) {
    req.files.insert(req.files.end(), range.files.begin(), range.files.end());
    for (const auto& [p, part] : range.partitions) {
      req.expected[range.topic][p] =
          part.start_recorded ? std::optional<int64_t>(part.start) : std::nullopt;
      req.new_positions[range.topic][p] = part.end;
    }
  }
  return req;
}

void RangeCommit::AdvanceToConsumer(TopicState& ts) {
  auto positions = source_->Positions();
  if (!positions.ok()) return;
  for (auto& [p, ps] : ts.partitions) {
    auto it = positions->find(kafka::TopicPartition{ts.settings.topic, p});
    if (it == positions->end() || it->second < 0) continue;
    if (it->second > ps.ReadPosition()) ps.next = it->second;
  }
}

Result<bool> RangeCommit::Commit(TopicState& ts, Translator& translator,
                                 const Options& options) {
  const std::string& topic = ts.settings.topic;
  if (options.batch_done) AdvanceToConsumer(ts);
  bool any = false;
  for (auto& [p, ps] : ts.partitions) any |= ps.next >= 0;
  if (!any) return false;
  // Dead letters first (dead_letters.h), even when no good record made a table yet.
  if (ts.dead_letters.buffered > 0) {
    table::Positions batch_end;
    for (auto& [p, ps] : ts.partitions) {
      if (ps.next >= 0) batch_end[topic][p] = ps.next;
    }
    Status dl = dead_letters_->Commit(ts, batch_end, options.cluster_id);
    if (!dl.ok()) {
      RecordCommitFailure(ts.instruments, dl);
      return dl;
    }
  }
  if (!ts.writer && !ts.table.exists) return false;  // nothing to record positions in
  const int64_t started_ms = clock_->monotonic_ms();
  auto range = translator.Take();
  if (!range.ok()) return WithContext(range.status(), "table " + ts.ident.ToString());
  std::vector<TranslatedRange> ranges;
  ranges.push_back(std::move(*range));
  table::CommitRequest req = RequestFor(ts.ident, ranges);
  req.cluster_id = options.cluster_id;
  req.retention =
      iceberg::RetentionPolicy{ts.settings.snapshot_retention_ms,
                               static_cast<int>(ts.settings.snapshot_min_count)};
  req.expire_age_factor = options.expire_age_factor;
  req.settings_properties = table::SettingsProperties(ts.settings);
  Status st = committer_->Commit(req);
  if (!st.ok()) {
    // Not committed (the committer deleted the files) or, kStateUnknown, perhaps
    // committed (the files stay). Either way the topic reads again from the positions
    // the table records.
    RecordCommitFailure(ts.instruments, st);
    return st;
  }
  const TranslatedRange& done = ranges.front();
  translator.Committed(done);
  std::map<kafka::TopicPartition, int64_t> group_offsets;
  for (const auto& [p, part] : done.partitions) group_offsets[{topic, p}] = part.end;
  Status group = source_->CommitForMonitoring(group_offsets);
  if (!group.ok()) {
    FLOE_LOG_WARN_EVERY(topic, 300000,
                        "topic {}: group offsets for monitoring not committed ({}); the "
                        "table's positions are unaffected",
                        topic, group.message());
  }
  ts.committed_records += done.records;
  ts.newest_committed_timestamp_ms =
      std::max(ts.newest_committed_timestamp_ms, done.newest_timestamp_ms);
  RecordCommit(ts.instruments, req.files,
               static_cast<double>(clock_->monotonic_ms() - started_ms) / 1000);
  ts.last_commit_wall_ms = clock_->wall_ms();
  ts.backoff_ms = 0;
  ts.table_seen = true;
  if (WantsDelta(ts.settings)) SyncDelta(ts);
  FLOE_LOG_DEBUG("table {}: committed {} records in {} files", ts.ident.ToString(),
                 done.records, req.files.size());
  return true;
}

Status RangeCommit::CommitSchema(TopicState& ts, const schema::Evolution& evolution,
                                 const std::string& where) {
  const int base_schema_id =
      ts.writer ? ts.writer->schema().schema_id : ts.table.schema->schema_id;
  CrashPoint("before-schema-commit");
  Status st = committer_->CommitSchema(ts.ident, base_schema_id, evolution.schema,
                                       evolution.last_column_id);
  if (KindOf(st) == ErrorKind::kConflict) return Status::OK();
  FLOE_RETURN_NOT_OK(st);
  // The Iceberg schema is in, the Delta metaData not yet (the next sync writes it).
  CrashPoint("after-schema-commit");
  std::string changes;
  for (const auto& c : evolution.changes) changes += (changes.empty() ? "" : "; ") + c;
  FLOE_LOG_INFO("table {}: schema evolved for {} at {}: {}", ts.ident.ToString(),
                ts.evolution_what, where, changes);
  return Status::OK();
}

Status RangeCommit::ReloadTable(TopicState& ts) {
  FLOE_ASSIGN_OR_RAISE(auto loaded, committer_->Load(ts.ident));
  auto partitions = std::move(ts.partitions);
  ts.ResetForReread();
  ts.partitions = std::move(partitions);
  ts.table = std::move(loaded);
  if (WantsDelta(ts.settings)) SyncDelta(ts);
  return Status::OK();
}

void RangeCommit::SyncDelta(TopicState& ts) {
  LogScope log = ts.LogAbout();
  auto version = delta_->Sync(ts.ident);
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
  ts.delta_retry_at_ms = clock_->monotonic_ms() + ts.delta_backoff_ms;
  FLOE_LOG_WARN("table {}: Delta log not updated yet ({}); trying again in {} ms",
                ts.ident.ToString(), version.status().message(), ts.delta_backoff_ms);
}

}  // namespace floe::pipeline
