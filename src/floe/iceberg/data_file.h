// A written data file as Iceberg's manifest `data_file` struct records it (spec "Manifests"):
// produced by floe/parquet after a file is closed, consumed by the manifest writer.
#pragma once

#include <cstdint>
#include <map>
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
};

}  // namespace floe::iceberg
