// Checkpoint Parquet encoding and decoding (PROTOCOL.md "Checkpoints", "Checkpoint
// Schema"). The only Arrow/Parquet code of floe/delta: the headers stay out of log.cc.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "floe/common/status.h"
#include "floe/delta/actions.h"

namespace floe::delta {
struct Snapshot;
}  // namespace floe::delta

namespace floe::delta::internal {

struct EncodedCheckpoint {
  std::string bytes;
  int64_t rows = 0;
  int64_t num_adds = 0;
};

// One row per action: protocol, metaData, every txn, every live add, every remove whose
// deletionTimestamp is within `tombstone_retention_ms` of `now_ms` (or unknown).
// Columns (structs, each null except in its own rows), following delta-kernel's
// checkpoint schema: txn{appId, version, lastUpdated}; add{path, partitionValues, size,
// modificationTime, dataChange, stats, tags}; remove{path, deletionTimestamp, dataChange,
// extendedFileMetadata, partitionValues, size}; metaData{id, name, description,
// format{provider, options}, schemaString, partitionColumns, createdTime, configuration};
// protocol{minReaderVersion, minWriterVersion, readerFeatures, writerFeatures}.
Result<EncodedCheckpoint> EncodeCheckpoint(const Snapshot& snapshot, int64_t now_ms,
                                           int64_t tombstone_retention_ms);

// Every modelled action of a V1 checkpoint written by any Delta writer (unknown columns
// such as domainMetadata, stats_parsed or partitionValues_parsed are ignored). `what`
// names the file in errors (kInvalidInput).
Result<std::vector<Action>> DecodeCheckpoint(std::string_view bytes,
                                             const std::string& what);

}  // namespace floe::delta::internal
