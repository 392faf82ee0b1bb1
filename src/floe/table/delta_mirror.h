// DeltaMirror: keeps a table's Delta log in step with its Iceberg metadata
// (ARCHITECTURE.md §2 "Both formats"). Iceberg is primary: the Committer commits Iceberg
// first; Sync then writes Delta versions for the same Parquet files with the same
// positions, one Delta version per Floe snapshot not yet in Delta, in order. The same
// Sync repairs a crash between the Iceberg commit and the Delta entry on restart.
//
// How Delta's state is compared: each Delta version carries one `txn` per Kafka
// partition, appId `floe:<table-uuid>:<topic>:<partition>`, version = the position after
// the batch. A Floe snapshot is in Delta when every position in its `floe.kafka.offsets`
// summary is at or below Delta's txn for that partition.
//
// Threading: an instance is used by one thread at a time; the pipeline and the
// maintenance thread each build their own, and the Delta log's put-if-absent orders their
// versions.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "floe/catalog/catalog.h"
#include "floe/common/status.h"
#include "floe/delta/log.h"
#include "floe/iceberg/data_file.h"
#include "floe/iceberg/table_metadata.h"
#include "floe/table/positions.h"

namespace floe::storage {
class FileIO;
}

namespace floe::table {

// Data files an Iceberg snapshot added (entries ADDED by it), or every live data file of
// it.
Result<std::vector<iceberg::DataFile>> SnapshotFiles(storage::FileIO& io,
                                                     const iceberg::Snapshot& s,
                                                     bool only_added);

// Data files an Iceberg snapshot removed (entries it marked DELETED: a compaction's
// inputs).
Result<std::vector<iceberg::DataFile>> SnapshotRemovedFiles(storage::FileIO& io,
                                                            const iceberg::Snapshot& s);

// "floe:<table-uuid>:<topic>:<partition>".
std::string DeltaAppId(const std::string& table_uuid, const std::string& topic,
                       int32_t partition);

class DeltaMirror {
 public:
  using Clock = std::function<int64_t()>;
  DeltaMirror(catalog::Catalog* catalog, storage::FileIO* io, Clock clock = {});

  // Brings the Delta log of `ident` up to the Iceberg table's current state. A table with
  // no snapshot yet has no Delta log either. Returns the Delta version reached (-1:
  // none).
  Result<int64_t> Sync(const catalog::TableIdent& ident);

 private:
  struct Cached {
    std::string table_uuid;
    delta::Snapshot snapshot;
  };
  Result<int64_t> SyncOnce(const catalog::TableIdent& ident);

  catalog::Catalog* catalog_;
  storage::FileIO* io_;
  Clock clock_;
  std::map<std::string, Cached> cache_;  // by table location
};

}  // namespace floe::table
