// Reading and writing table metadata files through FileIO, and the commit helper that
// turns (requirements, updates) on a base metadata into a new metadata file. Swapping the
// catalog pointer to the new file is the catalog's job (compare-and-swap), not this
// module's.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "floe/common/status.h"
#include "floe/iceberg/table_metadata.h"
#include "floe/iceberg/table_update.h"
#include "floe/storage/file_io.h"

namespace floe::iceberg {

// Version of a metadata file from its name: "00042-<uuid>.metadata.json" -> 42, also
// "v42.metadata.json" and the ".gz.metadata.json" forms; -1 when the name has no version.
int ParseMetadataFileVersion(const std::string& metadata_location);

// "<table location>/metadata/<%05d version>-<uuid>.metadata.json" (ARCHITECTURE.md §3).
std::string NewMetadataFileLocation(const std::string& table_location, int version);

Result<TableMetadata> ReadTableMetadata(storage::FileIO& io, const std::string& location);

// Validates and writes `metadata` as a new file (put-if-absent) at `location`.
Status WriteTableMetadata(storage::FileIO& io, const std::string& location,
                          const TableMetadata& metadata);

struct CommittedMetadata {
  TableMetadata metadata;
  std::string metadata_location;
};

// One commit attempt: CheckRequirements(base) (kConflict if one fails), ApplyUpdates with
// `base_location` appended to the metadata-log, then writes the result as version
// ParseMetadataFileVersion(base_location) + 1 (0 when `base` is null: a new table) under
// the new metadata's location. Returns the new metadata and its file location.
Result<CommittedMetadata> UpdateTable(storage::FileIO& io, const TableMetadata* base,
                                      const std::string& base_location,
                                      const std::vector<TableRequirement>& requirements,
                                      const std::vector<TableUpdate>& updates,
                                      int64_t now_ms);

// Writes version 0 of a new table (e.g. from NewTableMetadata).
Result<CommittedMetadata> CreateTable(storage::FileIO& io, const TableMetadata& metadata);

}  // namespace floe::iceberg
