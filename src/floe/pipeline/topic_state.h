// TopicState: what the pipeline knows about one enabled topic and its table: the
// settings, the table as loaded or created, its writer and key/value column helpers, the
// compiled decoders, each partition's batch range [start, next), and whether the topic is
// suspended.
//
// Threading: owned and used by the pipeline thread only.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "floe/catalog/table_ident.h"
#include "floe/common/log.h"
#include "floe/config/config.h"
#include "floe/decode/raw_decoder.h"
#include "floe/iceberg/schema.h"
#include "floe/kafka/consumer.h"
#include "floe/pipeline/schema_resolver.h"
#include "floe/pipeline/table_writer.h"
#include "floe/pipeline/topic_lifecycle.h"
#include "floe/pipeline/translator.h"
#include "floe/schema/evolution.h"
#include "floe/table/committer.h"

namespace floe::metrics {
struct TableInstruments;
}  // namespace floe::metrics

namespace floe::pipeline {

// One partition's batch: the half-open range [start, next) of ARCHITECTURE.md §2.
struct PartitionState {
  int64_t start = 0;  // a: where this batch started (seek position or previous b)
  bool start_recorded = false;  // false: the table had no position for this partition
  int64_t next = -1;            // last processed offset + 1 (-1: nothing processed yet)

  // Where reading goes on: the end of what was processed, else the batch's start.
  int64_t ReadPosition() const { return next >= 0 ? next : start; }
};

// The dead-letter table of a topic under on.invalid.record: dlq (dead_letters.h).
struct DeadLetterState {
  catalog::TableIdent ident;
  bool loaded = false;  // `table` and `recorded` are current
  table::TableState table;
  std::unique_ptr<TableWriter> writer;
  std::map<int32_t, int64_t> recorded;  // the table's positions for this topic
  // After a crash between a batch's dead-letter commit and its main commit: exactly the
  // offsets the dead-letter table holds at or past the main table's positions. Read
  // again, they are passed over (whatever they decode to now); every other record there
  // goes where it belongs.
  std::map<int32_t, std::set<int64_t>> already_there;
  int64_t buffered = 0;   // dead letters not committed yet
  int64_t committed = 0;  // this run

  // Whether `r` is a dead letter committed before the main table's position moved.
  bool AlreadyThere(int32_t partition, int64_t offset) const {
    auto it = already_there.find(partition);
    return it != already_there.end() && it->second.count(offset) > 0;
  }
};

struct TopicState {
  config::TopicSettings settings;
  catalog::TableIdent ident;
  std::string table_name;  // "namespace.table", for log lines

  // The structured log's context for work on this topic (`partition` -1: all of it).
  LogScope LogAbout(int32_t partition = -1) const {
    return LogScope(&settings.topic, &table_name, partition);
  }

  // The table (TableSetup): as loaded or created, and the writer that buffers its rows.
  table::TableState table;
  std::unique_ptr<TableWriter> writer;
  // What the last writer learned, for the next (kept across ResetForReread: a schema
  // change replaces the writer; only the cost of writing depends on it).
  WriterHints writer_hints;
  std::optional<decode::RawValueDecoder> raw_value;     // value.format: binary
  std::optional<decode::KeyColumnAppender> key_column;  // key.format: string
  // key.format: registry: the table's `key` column (a struct of the key schema's fields,
  // or a primitive for an Avro primitive key), its position and, for a struct, its
  // children.
  std::optional<iceberg::NestedField> key_field;
  int key_index = -1;
  std::vector<::arrow::ArrayBuilder*> key_children;

  // The decoders compiled for this topic (SchemaResolver).
  TopicSchemas schemas;
  // A compatible schema change TableSetup found for a writer schema (`evolution_what`
  // names it), applied by the pipeline before the record that brought it.
  std::optional<schema::Evolution> evolution;
  std::string evolution_what;
  // The value subject's compatibility level as last read from the registry ("" when it
  // has none); re-read for every new schema id.
  std::string compatibility;
  std::string key_compatibility;  // the same for `<topic>-key` (key.format: registry)

  // Kafka side.
  std::map<int32_t, PartitionState> partitions;
  int partition_count = 0;
  // Partitions the consumer group gave to another reader (not loaded or read here).
  std::set<int32_t> elsewhere;

  // Lifecycle (topic_lifecycle.h) and counters.
  bool suspended = false;
  std::string suspend_reason;
  Suspension suspension;  // where and why, while suspended
  SkipSet skip;           // what the operator chose to skip (persisted with the state)
  bool resuming = false;  // resumed by an operator, not yet proven to read on
  int64_t last_commit_wall_ms = 0;             // the table's newest commit; 0: none seen
  std::map<int32_t, int64_t> high_watermarks;  // refreshed on a cadence (admin status)
  // Paused (TableFaults): not read until then; the table and its positions are loaded
  // again when it resumes. -1: not paused.
  int64_t paused_until_ms = -1;
  int64_t backoff_ms = 0;    // the next pause's length (doubles, reset by a commit)
  std::string pause_reason;  // the fault that paused it
  // The Delta log is behind the Iceberg table (a Delta sync failed): synced again at
  // this time, with its own backoff, whether or not more records come. -1: in step.
  int64_t delta_retry_at_ms = -1;
  int64_t delta_backoff_ms = 0;
  bool table_seen = false;  // the table existed during this run (a drop is noticed)
  int64_t unknown_schema_since_ms = -1;  // a schema id the registry did not know, since
  // Ids the registry did not know for a whole window, and when that was decided.
  std::map<int, int64_t> unknown_schema_ids;
  int64_t last_commit_ms = 0;
  int64_t skipped = 0;
  int64_t tombstones = 0;
  int64_t committed_records = 0;
  int64_t progress_mark = 0;  // committed_records at the last progress line
  int64_t read_records = 0;   // taken from Kafka this run (re-reads after a fault too)
  int64_t read_bytes = 0;     // their keys and values
  // The newest Kafka timestamp among the committed records (-1: none yet): freshness.
  int64_t newest_committed_timestamp_ms = -1;
  metrics::TableInstruments* instruments = nullptr;  // this table's commit metrics
  DeadLetterState dead_letters;                      // on.invalid.record: dlq
  // The record path over this state (set once the state has its place in the
  // pipeline's map: it keeps a pointer to it).
  std::unique_ptr<Translator> translator;

  // Read, decoded and committed: neither suspended nor paused.
  bool Active() const { return !suspended && paused_until_ms < 0; }

  // After a lost fence (another writer moved the table's positions): forget the table,
  // the decoders and the partitions' ranges; they are loaded again from the table.
  void ResetForReread() {
    table = table::TableState{};
    if (writer) writer_hints = writer->hints();
    writer.reset();
    raw_value.reset();
    key_column.reset();
    key_field.reset();
    key_index = -1;
    key_children.clear();
    schemas = TopicSchemas{};
    evolution.reset();
    partitions.clear();
  }
};

// The counters a topic keeps for the whole run (read, committed, skipped, dead-lettered,
// tombstones, freshness), copied from the state a reload stopped to the one that starts
// the topic again, so the metrics' totals never go back while the process runs.
void CarryRunCounters(const TopicState& from, TopicState* to);

// Whether the topic's table has a Delta log besides Iceberg.
bool WantsDelta(const config::TopicSettings& settings);
// The floe.formats table property: Iceberg is always kept (it is the primary record).
std::string FormatsProperty(const config::TopicSettings& settings);
// "topic t partition p offset o", for messages.
std::string Where(const kafka::Record& r);

}  // namespace floe::pipeline
