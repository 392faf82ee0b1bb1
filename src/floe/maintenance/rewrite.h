// Rewriting data files (compaction): reads a table's Parquet files, whatever schema of
// the table each was written in, and writes their rows into new files in the table's
// current schema, near a target size. Columns are matched by Iceberg field id at every
// depth (structs, lists, maps), so renames are followed; a field a file lacks (added
// since) is null; a primitive widened since (int→long, float→double, a decimal's
// precision) is converted. The new files carry the current field ids, the table's
// Parquet column names (floe.parquet.column-names: a renamed field keeps its column, as
// Delta's column mapping reads it) and their Iceberg metrics, like every file Floe
// writes. Rows keep their order within each new file, in the inputs' order, unless a
// sort order is given (copied inputs go to files of their own, below).
//
// A file whose row groups are large (copy_row_group_bytes) and already in the current
// Parquet schema, with nothing to sort or drop, is not decoded: its row groups are copied
// byte for byte into files of their own (floe/parquet/row_group_copy.h), at a small
// fraction of the CPU a decode and re-encode takes.
//
// Threading: a function of its inputs; the FileIO is thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "floe/common/status.h"
#include "floe/iceberg/data_file.h"
#include "floe/iceberg/schema.h"
#include "floe/iceberg/table_metadata.h"

namespace floe::storage {
class FileIO;
}

namespace floe::maintenance {

struct RewriteOptions {
  int64_t target_file_bytes = int64_t{128}
                              << 20;  // a file is closed once it reaches this
  int zstd_level = 1;
  // Field id → Parquet column name, for fields not written under their own name.
  std::map<int, std::string> column_names;
  // New files are `<table_location>/data/<name_prefix>-<n>.parquet`; one prefix per
  // attempt keeps names unique.
  std::string name_prefix;
  // Checked between batches: once true the rewrite stops (kCancelled), deleting its
  // files.
  const std::atomic<bool>* cancel = nullptr;
  // Row retention: rows whose `_kafka.timestamp` is below this (µs since the epoch) are
  // left out; rows without a timestamp are kept. Unset: every row is kept.
  std::optional<int64_t> keep_from_timestamp_us;
  // Rows are sorted by this order (its source ids in `schema`), within runs of at most
  // `sort_buffer_bytes` of Arrow memory (and the target size): each file is one sorted
  // run and carries the order's id. Unsorted (the default): rows keep their order.
  iceberg::SortOrder sort_order;
  int64_t sort_buffer_bytes = int64_t{64} << 20;
  // An unsorted rewrite without row retention copies the row groups of an input in the
  // current Parquet schema whose row groups average at least this many bytes, instead of
  // decoding them (0: never). Below it, row groups are re-encoded into larger ones.
  int64_t copy_row_group_bytes = int64_t{4} << 20;
};

struct RewriteResult {
  std::vector<iceberg::DataFile> files;  // the new files, complete and closed
  int64_t rows = 0;                      // written
  int64_t rows_dropped = 0;              // left out by keep_from_timestamp_us
  int64_t bytes_read = 0;                // the inputs' sizes
  int64_t files_copied = 0;              // inputs whose row groups were copied
  // CheckedRewrite only: why nothing may be committed (no files then).
  std::string gave_up;
};

// Options for rewriting a table's files: its target file size, zstd level and Parquet
// column names (from its properties), new files named `<prefix>-<uuid>-<n>.parquet`;
// unsorted (the caller sets the order, sort_order.h).
Result<RewriteOptions> RewriteOptionsFor(const iceberg::TableMetadata& metadata,
                                         const std::string& prefix,
                                         const std::atomic<bool>* cancel);

// Errors: a file that cannot be read, or a column whose type cannot become the current
// one (kInvalidInput, naming the file and field). On any error the files written so far
// are deleted (best effort); none is ever referenced by anything.
Result<RewriteResult> RewriteFiles(storage::FileIO& io,
                                   const std::vector<iceberg::DataFile>& inputs,
                                   const iceberg::Schema& schema,
                                   const std::string& table_location,
                                   const RewriteOptions& options);

// RewriteFiles, checked before anything of it may be committed: the rows written and
// dropped add up to the inputs' record counts (else kInternal naming `what`), and it
// finished within `max_duration_ms`. Orphan cleanup deletes unreferenced files older
// than maintenance.orphan.min.age.ms, so a rewrite slower than half of that must not be
// committed: it comes back with `gave_up` saying so. Either way its files are deleted.
Result<RewriteResult> CheckedRewrite(storage::FileIO& io,
                                     const std::vector<iceberg::DataFile>& inputs,
                                     const iceberg::Schema& schema,
                                     const std::string& table_location,
                                     const RewriteOptions& options,
                                     const std::string& what, int64_t max_duration_ms);

}  // namespace floe::maintenance
