// TableSetup: a topic's table and its writer. On the first schema it creates the table
// (the value's fields, the `key` column of key.format string/registry, then `_kafka`) or
// opens the existing one, checks that a later schema fits it or evolves it compatibly
// (schema::Evolve), and opens the TableWriter that writes data files through FileIO.
//
// Errors: kSuspend when the topic cannot be mapped (a value field collides with `key` or
// `_kafka`, a schema the table cannot take, a widening of a Delta table); kConflict with
// `ts.evolution` set when the schema evolves the table (the pipeline commits the change,
// then reads the record again); storage and catalog errors as the Committer reports
// them.
//
// Threading: used by the pipeline thread only.
#pragma once

#include <string>
#include <vector>

#include "floe/common/status.h"
#include "floe/config/config.h"
#include "floe/iceberg/schema.h"
#include "floe/pipeline/table_writer.h"
#include "floe/table/committer.h"

namespace floe::storage {
class FileIO;
}

namespace floe::table {
class Committer;
}
namespace floe::pipeline {

struct TopicState;

// A writer's options for a topic's table: its location and column names, the topic's
// file size and Parquet settings.
TableWriterOptions WriterOptionsFor(const config::TopicSettings& settings,
                                    const table::TableState& table, storage::FileIO* io);

class TableSetup {
 public:
  TableSetup(table::Committer* committer, storage::FileIO* io)
      : committer_(committer), io_(io) {}

  // The table for a value schema's fields (`what` names the schema in messages): created
  // on the first schema; a later schema must fit it, or evolve it as the value subject's
  // compatibility level (ts.compatibility) and Floe's rules allow. `protobuf`: the
  // fields come from a Protobuf message.
  Status PrepareTable(TopicState& ts, const std::string& what,
                      std::vector<iceberg::NestedField> fields, bool protobuf = false);
  // key.format: registry, a key schema once the table exists: the `key` column evolves
  // like a value schema's fields (`level`: the key subject's compatibility level).
  Status EvolveKey(TopicState& ts, const std::string& what, iceberg::NestedField key,
                   bool protobuf, const std::string& level);
  // value.format: binary: the table is `value` (binary) [+ `key`] + `_kafka`.
  Status EnsureRawTable(TopicState& ts);

 private:
  Status EvolveTo(TopicState& ts, const std::string& what,
                  const iceberg::Schema& existing,
                  const std::vector<iceberg::NestedField>& fields, bool protobuf,
                  const std::string& level);
  Status AddKeyField(const TopicState& ts, std::vector<iceberg::NestedField>* fields);
  Status OpenWriter(TopicState& ts, const iceberg::Schema& table_schema);

  table::Committer* committer_;
  storage::FileIO* io_;
};

}  // namespace floe::pipeline
