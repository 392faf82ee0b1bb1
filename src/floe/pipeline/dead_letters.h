// DeadLetters: the dead-letter table of a topic under `on.invalid.record: dlq`
// (docs/operations.md, "Dead letters"). A record that cannot be decoded, or does not fit
// its table, is kept with its raw value (its key, headers, partition, offset and
// timestamp are in `_kafka`, as in every Floe table) and the error (stage, reason,
// schema id, time) in `<namespace>.<table>__dlq`, in the topic's formats.
//
// Exactly once without a multi-table transaction: the dead-letter table records its own
// Kafka positions (floe.kafka.offsets, the same property and fence as the main table),
// and a batch's dead letters are committed before the main table's batch, with the
// batch's end positions. After a crash between the two commits the dead-letter table is
// ahead: the topic reads again from the main table's positions, and the offsets the
// dead-letter table holds at or past them (read from its files at load) are passed
// over, whatever they decode to now (a registry or config change in between cannot
// move a record into the other table as well). Dead letters are committed only when a
// batch has some, so otherwise the dead-letter table's positions lag the main table's.
//
// Records that fail for systemic reasons (registry, catalog or storage down) never come
// here: the topic pauses and retries them (pipeline.cc).
//
// Threading: the pipeline thread.
#pragma once

#include <arrow/type_fwd.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "floe/catalog/catalog.h"
#include "floe/common/status.h"
#include "floe/config/config.h"
#include "floe/iceberg/schema.h"
#include "floe/iceberg/table_metadata.h"
#include "floe/kafka/consumer.h"
#include "floe/table/positions.h"

namespace floe::storage {
class FileIO;
}

namespace floe::table {
class Committer;
class DeltaMirror;
}  // namespace floe::table
namespace floe::pipeline {

// A dead-letter table's rows as records (views into `table`, which must outlive them),
// with their raw value, key, headers, partition, offset and timestamp.
struct DeadLetterRows {
  std::shared_ptr<::arrow::Table> table;
  std::vector<kafka::Record> records;
  std::vector<std::vector<kafka::Header>> headers;  // per record
};
// The data files of the table's current snapshot.
Result<std::vector<std::string>> LiveFiles(storage::FileIO& io,
                                           const iceberg::TableMetadata& md);
// One dead-letter data file's rows; `topic` becomes every record's topic.
Result<DeadLetterRows> ReadDeadLetters(storage::FileIO& io, const std::string& path,
                                       const std::string* topic);

struct TopicState;

// The dead-letter table's name (`<table>__dlq`): config's, which checks that no two
// topics' tables collide, dead-letter tables included.
using config::DeadLetterTableName;

// The dead-letter table's columns before `_kafka`: `value` (optional binary, the raw
// value) and `error` (required struct<stage: string, reason: string, schema_id: optional
// int, time: timestamptz>).
std::vector<iceberg::NestedField> DeadLetterFields();

class DeadLetters {
 public:
  DeadLetters(catalog::Catalog* catalog, table::Committer* committer, storage::FileIO* io,
              table::DeltaMirror* delta)
      : catalog_(catalog), committer_(committer), io_(io), delta_(delta) {}

  // Loads the topic's dead-letter table (if it exists yet) and its positions; called
  // whenever the topic loads its own (a start, a resume, a fence). Catalog and storage
  // errors as the Committer reports them.
  Status Load(TopicState& ts);
  // Buffers `r` as a dead letter (`stage`: "decode", "schema"; `schema_id` -1: none).
  // The caller passes over the records DeadLetterState::AlreadyThere names first.
  // Creates the table at the first dead letter. Storage and catalog errors only.
  Status Add(TopicState& ts, const kafka::Record& r, std::string_view stage,
             const std::string& reason, int schema_id, int64_t now_ms);
  // Commits what Add buffered, recording `batch_end` (the main table's positions after
  // the batch) as the dead-letter table's positions. Nothing to do when nothing is
  // buffered. kConflict when another writer moved the dead-letter table's positions.
  Status Commit(TopicState& ts, const table::Positions& batch_end,
                const std::string& cluster_id);
  // Drops what is buffered (its files deleted), for a batch that is discarded.
  void Discard(TopicState& ts);

 private:
  Status OpenWriter(TopicState& ts);
  // Fills DeadLetterState::already_there when the dead-letter table is ahead of the
  // table (reads its files; only after a crash or fault between the two commits).
  Status FindAlreadyThere(TopicState& ts);

  catalog::Catalog* catalog_;
  table::Committer* committer_;
  storage::FileIO* io_;
  table::DeltaMirror* delta_;
};

}  // namespace floe::pipeline
