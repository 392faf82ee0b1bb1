// A written data file as Iceberg's manifest `data_file` struct records it (spec
// "Manifests"): produced by floe/parquet after a file is closed, consumed by the manifest
// writer.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace floe::iceberg {

struct DataFile {
  std::string file_path;  // absolute URI, e.g. file:///warehouse/ns/t-uuid/data/x.parquet
  std::string file_format = "PARQUET";
  int64_t record_count = 0;
  int64_t file_size_in_bytes = 0;  // exact size on storage
  // Metrics keyed by leaf field id; a key is absent when the metric is unknown.
  std::map<int, int64_t> column_sizes;
  std::map<int, int64_t> value_counts;
  std::map<int, int64_t> null_value_counts;
  std::map<int, int64_t> nan_value_counts;
  // Bounds in Iceberg single-value binary encoding (spec Appendix D).
  std::map<int, std::string> lower_bounds;
  std::map<int, std::string> upper_bounds;
  std::vector<int64_t> split_offsets;  // ascending row-group start offsets

  // Fields Floe leaves at their defaults for its own files but keeps for files other
  // writers added, so rewriting their manifest entries (merge) loses nothing.
  int content = 0;  // 134: 0 data, 1 position deletes, 2 equality deletes
  // 102: the partition tuple, one value per field of the manifest's partition spec, each
  // in single-value binary encoding (Appendix D); nullopt is a null value. Empty when
  // unpartitioned.
  std::vector<std::optional<std::string>> partition;
  std::optional<std::string> key_metadata;          // 131
  std::vector<int> equality_ids;                    // 135
  std::optional<int> sort_order_id;                 // 140
  std::optional<std::string> referenced_data_file;  // 143
};

}  // namespace floe::iceberg
