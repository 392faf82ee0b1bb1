#include "floe/iceberg/metadata_io.h"

#include <cstdio>

#include "floe/common/util.h"

namespace floe::iceberg {

namespace {

int ParseDigits(const std::string& s) {
  if (s.empty() || s.size() > 9) return -1;
  int v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return -1;
    v = v * 10 + (c - '0');
  }
  return v;
}

}  // namespace

int ParseMetadataFileVersion(const std::string& metadata_location) {
  std::string name = metadata_location.substr(metadata_location.find_last_of('/') + 1);
  static constexpr std::string_view kSuffix = ".metadata.json";
  if (name.size() <= kSuffix.size() ||
      name.compare(name.size() - kSuffix.size(), kSuffix.size(), kSuffix) != 0) {
    return -1;
  }
  std::string stem = name.substr(0, name.size() - kSuffix.size());
  if (stem.size() > 3 && stem.compare(stem.size() - 3, 3, ".gz") == 0) {
    stem.resize(stem.size() - 3);
  }
  if (!stem.empty() && stem[0] == 'v')
    return ParseDigits(stem.substr(1));  // Hadoop tables
  return ParseDigits(stem.substr(0, stem.find('-')));
}

std::string NewMetadataFileLocation(const std::string& table_location, int version) {
  char prefix[16];
  std::snprintf(prefix, sizeof(prefix), "%05d", version);
  return TrimTrailingSlashes(table_location) + "/metadata/" + prefix + "-" + NewUuid() +
         ".metadata.json";
}

Result<TableMetadata> ReadTableMetadata(storage::FileIO& io,
                                        const std::string& location) {
  FLOE_ASSIGN_OR_RAISE(std::string text, io.Read(location));
  auto parsed = TableMetadataFromJsonString(text);
  if (!parsed.ok()) {
    return parsed.status().WithMessage(parsed.status().message(), " (in ", location, ")");
  }
  return parsed;
}

Status WriteTableMetadata(storage::FileIO& io, const std::string& location,
                          const TableMetadata& metadata) {
  FLOE_RETURN_NOT_OK(ValidateTableMetadata(metadata));
  return io.WriteNew(location, TableMetadataToJsonString(metadata));
}

Result<CommittedMetadata> UpdateTable(storage::FileIO& io, const TableMetadata* base,
                                      const std::string& base_location,
                                      const std::vector<TableRequirement>& requirements,
                                      const std::vector<TableUpdate>& updates,
                                      int64_t now_ms) {
  FLOE_RETURN_NOT_OK(CheckRequirements(base, requirements));
  FLOE_ASSIGN_OR_RAISE(TableMetadata next,
                       ApplyUpdates(base, updates, now_ms, base ? base_location : ""));
  int version = base ? ParseMetadataFileVersion(base_location) + 1 : 0;
  if (version < 0) version = 0;
  CommittedMetadata out;
  out.metadata_location = NewMetadataFileLocation(next.location, version);
  FLOE_RETURN_NOT_OK(WriteTableMetadata(io, out.metadata_location, next));
  out.metadata = std::move(next);
  return out;
}

Result<CommittedMetadata> CreateTable(storage::FileIO& io,
                                      const TableMetadata& metadata) {
  CommittedMetadata out;
  out.metadata = metadata;
  out.metadata_location = NewMetadataFileLocation(metadata.location, 0);
  FLOE_RETURN_NOT_OK(WriteTableMetadata(io, out.metadata_location, out.metadata));
  return out;
}

}  // namespace floe::iceberg
