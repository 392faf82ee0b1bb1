// References: every file a table's metadata points at, in both formats: the current
// metadata file and the ones its metadata log names, every snapshot's manifest list,
// every manifest in them and every file in those manifests (entries of every status),
// any file URI in fields Floe keeps verbatim (statistics files), and the Delta log's
// live files and tombstones (DeltaLog::ReferencedPaths). What table maintenance must
// never delete.
//
// Threading: a function of its inputs; the FileIO is thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <set>
#include <string>

#include "floe/common/status.h"
#include "floe/iceberg/table_metadata.h"

namespace floe::storage {
class FileIO;
}

namespace floe::maintenance {

struct References {
  std::set<std::string> uris;  // canonical (CanonicalUri)
  int64_t snapshots = 0;
  int64_t manifests = 0;
  int64_t data_files = 0;   // distinct, over every snapshot
  int64_t delta_paths = 0;  // distinct paths in the Delta log
};

// One spelling per file, so that a reference written by another writer matches a
// listing: "/x", "file:/x", "file://x", "file://localhost/x" and "file:///x" are
// "file:///x" (runs of '/' in the path collapsed); "s3a://" and "s3n://" are "s3://".
// Other URIs are kept as they are.
std::string CanonicalUri(const std::string& uri);

// Walks the table whose current metadata is `metadata` (read from `metadata_location`).
// Any file that cannot be read (a manifest list, a manifest, the Delta log) is an error:
// without it the references are unknown, and nothing may be deleted.
// `cancel`, checked between manifests: once true the walk stops (kCancelled).
Result<References> CollectReferences(storage::FileIO& io,
                                     const std::string& metadata_location,
                                     const iceberg::TableMetadata& metadata,
                                     const std::atomic<bool>* cancel = nullptr);

}  // namespace floe::maintenance
