#include "floe/pipeline/translator.h"

#include "floe/common/log.h"
#include "floe/pipeline/dead_letters.h"
#include "floe/pipeline/schema_resolver.h"
#include "floe/pipeline/table_faults.h"
#include "floe/pipeline/topic_state.h"

namespace floe::pipeline {
namespace {

// A schema id the registry answers "not found" for is retried this long before its
// records count as invalid: a registry restarting from its _schemas topic, or a replica
// that has not caught up yet, knows the id a few seconds later.
constexpr int64_t kUnknownSchemaWindowMs = 30000;
// An id found unknown after that window counts as unknown at once for this long, then is
// asked for again (it may have been registered meanwhile).
constexpr int64_t kUnknownSchemaMemoryMs = 300000;

Verdict Fault(Status st) {
  Verdict v;
  v.kind = Verdict::Kind::kFault;
  v.fault = std::move(st);
  return v;
}

Verdict Stop(Verdict::Kind kind, std::string reason, int schema_id = -1) {
  Verdict v;
  v.kind = kind;
  v.reason = std::move(reason);
  v.schema_id = schema_id;
  return v;
}

}  // namespace

Verdict Translator::Add(const kafka::Record& r) {
  TopicState& ts = *ts_;
  auto pit = ts.partitions.find(r.partition);
  if (pit == ts.partitions.end()) return {};
  PartitionState& ps = pit->second;
  if (r.offset < ps.ReadPosition()) return {};  // already covered (stale fetch)
  ts.read_records++;
  ts.read_bytes += static_cast<int64_t>(r.key_len + r.value_len);
  if (!ts.dead_letters.already_there.empty() &&
      ts.dead_letters.AlreadyThere(r.partition, r.offset)) {
    ps.next = r.offset + 1;  // committed as a dead letter before a crash or fault
    return {};
  }
  if (r.value == nullptr && ts.settings.value_format != config::ValueFormat::kBinary) {
    // A tombstone (compacted topics carry them routinely): counted, never a row.
    ts.tombstones++;
    ps.next = r.offset + 1;
    return {};
  }
  if (!ts.skip.empty() && InSkipSet(ts, r)) {
    ts.skipped++;
    FLOE_LOG_WARN(
        "skipped record at {} ({} skipped so far): skipped by an operator's "
        "resume with skip-incompatible",
        Where(r), ts.skipped);
    ps.next = r.offset + 1;
    return {};
  }

  // value.format json: a record its schema rejects makes Floe look for a newer version
  // of the subject once before the record counts as invalid.
  for (bool rechecked = false;; rechecked = true) {
    RowPlan plan;
    Status st = resolver_->Plan(ts, r, &plan);
    if (!st.ok()) {
      if (ts.evolution) return Stop(Verdict::Kind::kEvolve, "");
      ErrorKind kind = KindOf(st);
      if (kind == ErrorKind::kInvalidRecord) return Invalid(r, st, "decode");
      if (kind == ErrorKind::kNotFound) return UnknownSchema(r, st);
      if (kind == ErrorKind::kSuspend) {
        return Stop(Verdict::Kind::kSuspend, Where(r) + ": " + st.message(),
                    ValueSchemaId(ts, r));
      }
      // The registry, or the table's catalog or storage, is down: the topic waits.
      if (PausesTopic(st)) return Stop(Verdict::Kind::kPause, st.message());
      return Fault(WithContext(st, Where(r)));
    }
    // A value that fails to decode leaves nothing appended (its decoder sees to it);
    // the key was validated by Plan.
    st = ts.writer->AppendRow(
        [&](::arrow::ArrayBuilder* const* columns) {
          return resolver_->Fill(ts, r, plan, columns);
        },
        r);
    if (!st.ok()) {
      // Not the record's fault: writing the data file failed.
      if (KindOf(st) != ErrorKind::kInvalidRecord) {
        return Fault(WithContext(st, "table " + ts.ident.ToString()));
      }
      if (!rechecked && ts.settings.value_format == config::ValueFormat::kJson &&
          resolver_->CheckJsonSubject(ts, /*rate_limited=*/true)) {
        continue;
      }
      return Invalid(r, st, "decode");
    }
    ps.next = r.offset + 1;
    ts.unknown_schema_since_ms = -1;
    return {};
  }
}

// The registry does not know the record's schema id (or a schema it references). Within
// kUnknownSchemaWindowMs of the first such answer the topic waits and asks again; after
// it, the record is invalid.
Verdict Translator::UnknownSchema(const kafka::Record& r, const Status& why) {
  TopicState& ts = *ts_;
  const int64_t now = clock_->monotonic_ms();
  // An id that already went unknown for a whole window is not waited for again for a
  // while: a burst of records with an id nobody registered costs one window, not one
  // per record.
  const int id = ValueSchemaId(ts, r);
  auto gone = ts.unknown_schema_ids.find(id);
  if (gone != ts.unknown_schema_ids.end() &&
      now - gone->second < kUnknownSchemaMemoryMs) {
    return Invalid(r, why, "schema");
  }
  if (ts.unknown_schema_since_ms < 0) ts.unknown_schema_since_ms = now;
  if (now - ts.unknown_schema_since_ms < kUnknownSchemaWindowMs) {
    return Stop(Verdict::Kind::kPause,
                why.message() +
                    " (the registry may not know it yet: asking again for up to " +
                    std::to_string(kUnknownSchemaWindowMs / 1000) +
                    " s before the record counts as invalid)");
  }
  ts.unknown_schema_since_ms = -1;
  if (id >= 0) ts.unknown_schema_ids[id] = now;
  return Invalid(r, why, "schema");
}

// `stage` names where it failed, for the dead-letter table: "decode" or "schema".
Verdict Translator::Invalid(const kafka::Record& r, const Status& why,
                            const char* stage) {
  TopicState& ts = *ts_;
  std::string msg = Where(r) + ": " + why.message();
  if (ts.settings.on_invalid_record == config::InvalidRecordPolicy::kDlq) {
    Status st =
        dead_letters_->Add(ts, r, stage, msg, ValueSchemaId(ts, r), clock_->wall_ms());
    if (!st.ok()) return Fault(st);
    FLOE_LOG_DEBUG("dead-lettered {}", msg);
    ts.partitions[r.partition].next = r.offset + 1;
    return {};
  }
  if (ts.settings.on_invalid_record == config::InvalidRecordPolicy::kSkip) {
    ts.skipped++;
    FLOE_LOG_WARN("skipped invalid record ({} skipped so far): {}", ts.skipped, msg);
    ts.partitions[r.partition].next = r.offset + 1;
    return {};
  }
  // suspend: what came before this record is committed, then the topic stops here.
  return Stop(Verdict::Kind::kSuspend, "invalid record at " + msg);
}

Result<TranslatedRange> Translator::Take() {
  TopicState& ts = *ts_;
  TranslatedRange range;
  range.topic = ts.settings.topic;
  for (const auto& [p, ps] : ts.partitions) {
    if (ps.next < 0) continue;
    range.partitions[p] = PartitionRange{ps.start, ps.start_recorded, ps.next};
  }
  if (ts.writer) {
    range.newest_timestamp_ms = ts.writer->newest_timestamp_ms();
    FLOE_ASSIGN_OR_RAISE(range.files, ts.writer->TakeFiles());
  }
  for (const auto& f : range.files) range.records += f.record_count;
  return range;
}

void Translator::Committed(const TranslatedRange& range) {
  for (const auto& [p, part] : range.partitions) {
    auto it = ts_->partitions.find(p);
    if (it == ts_->partitions.end()) continue;
    PartitionState& ps = it->second;
    ps.start = part.end;
    ps.start_recorded = true;
    if (ps.next <= part.end) ps.next = -1;
  }
}

}  // namespace floe::pipeline
