// References: every file a table's metadata points at, in both formats: the current
// metadata file and the ones its metadata log names, every snapshot's manifest list,
// every manifest in them and every file live in those manifests (ADDED or EXISTING), any
// file URI in fields Floe keeps verbatim (statistics files), and the Delta log's live
// files and young tombstones (DeltaLog::ReferencedPaths). What table maintenance must
// never delete.
//
// A DELETED entry references nothing: it records that its snapshot removed the file,
// which only that snapshot's ancestors read. While one of them is retained the file is
// live in its manifests; once none is, no reader of a retained snapshot opens the file
// (Iceberg's expire-snapshots reasons the same way). Counting DELETED entries would keep
// every file a compaction replaced for as long as its output manifest is carried.
//
// Threading: a function of its inputs; the FileIO is thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

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
// Delta tombstones count while younger than the table's retention at `now_ms`
// (iceberg::RetentionPolicyOf). Any file that cannot be read (a manifest list, a
// manifest, the Delta log) is an error: without it the references are unknown, and
// nothing may be deleted. `cancel`, checked between manifests: once true the walk stops
// (kCancelled).
Result<References> CollectReferences(storage::FileIO& io,
                                     const std::string& metadata_location,
                                     const iceberg::TableMetadata& metadata,
                                     int64_t now_ms,
                                     const std::atomic<bool>* cancel = nullptr);

// What `snapshots` reach, canonical: their manifest lists, their manifests and every
// file in those (entries of every status). Errors as CollectReferences.
// `seen_manifests` (optional, kept across calls): manifests in it are not read again
// (an earlier call returned their files); the ones read are added.
Result<std::set<std::string>> SnapshotFiles(
    storage::FileIO& io, const std::vector<const iceberg::Snapshot*>& snapshots,
    const std::atomic<bool>* cancel = nullptr,
    std::set<std::string>* seen_manifests = nullptr);

}  // namespace floe::maintenance
