// Committer: the one commit path per table (ARCHITECTURE.md §1, §2). It loads a table's
// current state, checks the position fence, writes the Iceberg snapshot and swaps the
// catalog pointer with compare-and-swap, retrying on conflict and resolving unknown
// outcomes by looking for its own positions.
//
// Threading: an instance is used by one thread at a time (the pipeline thread, `floe dlq
// replay`, the maintenance soak driver); instances on other threads are independent.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "floe/catalog/catalog.h"
#include "floe/common/status.h"
#include "floe/iceberg/data_file.h"
#include "floe/iceberg/schema.h"
#include "floe/iceberg/snapshot_producer.h"
#include "floe/schema/rename_hints.h"
#include "floe/table/positions.h"
#include "floe/table/snapshot_kind.h"

namespace floe::storage {
class FileIO;
}

namespace floe::table {

// What the pipeline needs to know about a table when it starts reading a topic.
struct TableState {
  bool exists = false;
  std::string location;  // file:///.../<table>-<uuid>
  // The current schema, its fields annotated with their former names and Protobuf field
  // numbers (schema/rename_hints.h).
  std::optional<iceberg::Schema> schema;
  // The Parquet column names of renamed fields (floe.parquet.column-names).
  schema::ColumnNames column_names;
  int last_column_id = 0;
  // Recorded positions: the property, else the newest ancestor's summary.
  std::optional<Positions> positions;
  std::string cluster_id;       // floe.kafka.cluster-id, empty if never set
  bool has_data_files = false;  // any snapshot at all
  int64_t last_commit_ms = 0;   // the current snapshot's timestamp (0: none)
  // floe.topic-state.<topic> properties (topic_lifecycle.h), by topic.
  std::map<std::string, std::string> topic_states;
};

struct CommitRequest {
  catalog::TableIdent ident;
  std::vector<iceberg::DataFile> files;
  // The fence: for each partition in this batch, the position the batch started at
  // (absent = the table must have no position for it).
  std::map<std::string, std::map<int32_t, std::optional<int64_t>>> expected;
  Positions new_positions;  // positions after this batch (merged into the table's)
  std::string cluster_id;
  // Optional: table properties set by the same commit, computed against each attempt's
  // base metadata (a conflict reloads and asks again); an error fails the commit.
  std::function<Result<std::map<std::string, std::string>>(const iceberg::TableMetadata&)>
      properties;
  // What the snapshot is (snapshot_kind.h): an append of ingested records unless said.
  SnapshotMark mark;
  // Optional: the table's snapshot retention (TopicSettings snapshot.*), recorded in its
  // history.expire.* properties, which table maintenance follows. Unset: the table's
  // own properties stand.
  std::optional<iceberg::RetentionPolicy> retention;
  // Optional: table properties recording the topic's settings for table maintenance
  // (table_properties.h).
  std::map<std::string, std::string> settings_properties;
  // The commit itself expires snapshots older than this many times the retention
  // (metadata only: their files stay). 1 when nothing else expires snapshots; more when
  // background maintenance does (its expiry also deletes the files only they referenced,
  // docs/maintenance.md), so that the commit's expiry is only a backstop bounding the
  // metadata should maintenance fall behind.
  int expire_age_factor = 1;
};

class Committer {
 public:
  using Clock = std::function<int64_t()>;
  // `clock` gives wall time in ms (snapshot timestamps, expiry); tests inject their own.
  // Commits go through `catalog`, the same code that serves REST commits.
  Committer(catalog::Catalog* catalog, storage::FileIO* io, Clock clock = {});

  Result<TableState> Load(const catalog::TableIdent& ident);
  // kRetriable when the catalog cannot take commits now (read-only).
  Status CheckWritable() { return catalog_->CheckWritable(); }
  // Creates the table (namespace too) with this schema if it does not exist yet (with
  // its rename hints as properties); returns the table's location either way. `formats`:
  // the table property floe.formats
  // ("iceberg", "iceberg,delta").
  Result<TableState> CreateIfAbsent(const catalog::TableIdent& ident,
                                    const iceberg::Schema& schema,
                                    const std::string& formats = "iceberg");
  // Sets the table property floe.formats to `formats` if it differs (formats switched in
  // the config). Goes through the same commit path.
  Status EnsureFormats(const catalog::TableIdent& ident, const std::string& formats);
  // kConflict when the fence fails (another writer moved the positions): the batch must
  // be discarded and the partitions re-read from the table's positions.
  Status Commit(const CommitRequest& request);
  // A schema-only commit (schema evolution): `schema` becomes the current schema, with
  // `last_column_id`, if the table's current schema is still `base_schema_id`; kConflict
  // otherwise (the caller reloads and evolves again). The same commit records the
  // schema's former names and Protobuf field numbers and the Parquet column names of
  // renamed fields (schema/rename_hints.h).
  Status CommitSchema(const catalog::TableIdent& ident, int base_schema_id,
                      const iceberg::Schema& schema, int last_column_id);
  // A property-only commit of the topic's lifecycle state (topic_lifecycle.h):
  // floe.topic-state.<topic> set to `state_json`, or removed when it is nullopt.
  // kNotFound when the table does not exist.
  Status SetTopicState(const catalog::TableIdent& ident, const std::string& topic,
                       const std::optional<std::string>& state_json);

  // `floe positions set`: the next position to read of one partition, as a
  // property-only commit that asserts `main` did not move since the table was read (a
  // concurrent Floe commit is never overwritten with stale positions of other
  // partitions: the move is prepared again on the new table). The position it replaces
  // (nullopt: none) and the table's positions after.
  struct PositionMove {
    std::optional<int64_t> before;
    Positions after;
  };
  Result<PositionMove> SetPosition(const catalog::TableIdent& ident,
                                   const std::string& topic, int32_t partition,
                                   int64_t offset);

 private:
  catalog::Catalog* catalog_;
  storage::FileIO* io_;
  Clock clock_;
};

}  // namespace floe::table
