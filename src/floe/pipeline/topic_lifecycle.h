// Topic lifecycle (docs/architecture.md, "Topic lifecycle"): a topic is `running`,
// `paused` (a table fault time can fix, TableFaults), `suspended` (it needs an operator)
// or `resuming` (an operator resumed it; `running` again once it committed or proved it
// can read on). This unit holds what a suspension records (reason, schema id, partition,
// offset, time), what the operator chose to skip, and their persisted form: the table
// property `floe.topic-state.<topic>`, a small JSON document written as a property-only
// commit, so a restart reports the suspension and stays suspended.
//
// Pure functions and plain structs; the pipeline thread owns every instance.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "floe/common/status.h"
#include "floe/pipeline/pipeline.h"

namespace floe::kafka {
struct Record;
class RecordSource;
}  // namespace floe::kafka

namespace floe::table {
class Committer;
}
namespace floe::pipeline {

struct TopicState;

// Why and where a topic was suspended.
struct Suspension {
  std::string reason;
  int schema_id = -1;      // the value schema that caused it (-1: not a schema's fault)
  int32_t partition = -1;  // the record it stopped at (-1: not a record's fault)
  int64_t offset = -1;
  int64_t time_ms = 0;  // wall clock
  // Persisted in the table: a record-level suspension (an invalid record, a schema the
  // table cannot take). Faults of the table or of the positions are found again by every
  // start, so they are kept in memory only.
  bool persist = false;

  bool HasRecord() const { return partition >= 0 && offset >= 0; }
};

// What the operator chose to skip (`resume?skip-incompatible=true`): records whose value
// has one of these schema ids, and single records by (partition, offset).
struct SkipSet {
  std::set<int> schema_ids;
  std::set<std::pair<int32_t, int64_t>> records;

  bool empty() const { return schema_ids.empty() && records.empty(); }
  void Merge(const SkipSet& other) {
    schema_ids.insert(other.schema_ids.begin(), other.schema_ids.end());
    records.insert(other.records.begin(), other.records.end());
  }
};

// The persisted document: {"state": "suspended"|"running", "reason", "schema-id",
// "partition", "offset", "time-ms", "skip-schema-ids": [..], "skip-records":
// [{"partition", "offset"}]}.
struct PersistedTopicState {
  std::optional<Suspension> suspension;  // absent: running
  SkipSet skip;
};

std::string TopicStateToJson(const PersistedTopicState& state);
// kInvalidInput when the text is not the document above.
Result<PersistedTopicState> TopicStateFromJson(const std::string& text);

// The schema id of the record's value as the topic resolves it: the id in the header or
// the 5-byte prefix, the id a GUID was registered under, or value.format json's subject
// version; -1 when unframed or unknown.
int ValueSchemaId(const TopicState& ts, const kafka::Record& r);

// Whether the operator's skip set takes this record (called only when it is not empty).
bool InSkipSet(const TopicState& ts, const kafka::Record& r);

// What skip-incompatible adds for the topic's current suspension: its schema id, else
// exactly its record. kInvalidInput when the suspension was not caused by a record.
Result<SkipSet> SkipFor(const Suspension& s, const std::string& topic);

// "running", "paused", "suspended", "resuming".
const char* StateName(const TopicState& ts);

// After the topic's table was (re)loaded into ts.table: its floe.topic-state.<topic>
// property is adopted (the skip set joins the topic's; a persisted suspension suspends
// it) and its newest commit time noted. True when the topic is now suspended.
bool ApplyTableState(const std::string& topic, TopicState& ts);

// Writes floe.topic-state.<topic> for the topic as it is now (its persisted suspension
// and its skip set), or removes it when there is neither; a property-only commit. A table
// that does not exist yet keeps the state in memory only (logged, OK); other failures are
// logged and returned.
Status SaveTopicState(table::Committer& committer, const std::string& topic,
                      const TopicState& ts);

// The topic as an operator sees it (Pipeline::Topics, the admin routes).
TopicStatus StatusOf(const std::string& topic, const TopicState& ts);

// One line on the topic's state and counts, every 10 s and at shutdown: the records per
// second committed over the last `elapsed_ms`, the lag and, while a backlog drains, the
// time left at that pace.
void LogTopicProgress(const std::string& topic, TopicState& ts, int64_t elapsed_ms);

// The high watermark of each partition being read as the consumer's latest fetch response
// gave it: no broker round trip, so it runs before every status snapshot and the lag
// shows what waits for the next commit.
void TakeFetchedWatermarks(kafka::RecordSource* source, const std::string& topic,
                           TopicState& ts);

// The high watermark of each of the topic's partitions: for partitions being read, the
// one the consumer last saw in a fetch response (no round trip); for the others, or when
// it has none yet, a broker round trip per partition (called every few seconds, never
// per record or per request). A partition whose answer fails keeps its last known value.
void RefreshWatermarks(kafka::RecordSource* source, const std::string& topic,
                       TopicState& ts, int timeout_ms);

}  // namespace floe::pipeline
