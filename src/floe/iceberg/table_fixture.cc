// Test-only driver for tests/integration/test_iceberg_module.py: creates a table in a
// local warehouse (or continues one another writer made, --existing) and appends one
// existing Parquet file N times through FastAppend + UpdateTable, the way Floe's
// committer does, then prints the final metadata location.
//
//   floe_iceberg_table_fixture <warehouse dir> <parquet file under it> <schema json file
//   | ->
//       <record count> <appends> [--existing <metadata location>] [--expire]
//       [--max-age-ms N] [--min-keep N] [--max-manifests N]
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "floe/common/util.h"
#include "floe/iceberg/metadata_io.h"
#include "floe/iceberg/schema_json.h"
#include "floe/iceberg/snapshot_producer.h"

namespace {

using namespace floe::iceberg;  // NOLINT: test driver

int Fail(const floe::Status& st, const char* what) {
  std::cerr << what << ": " << st.ToString() << "\n";
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 6) {
    std::cerr << "usage: floe_iceberg_table_fixture <warehouse> <parquet> <schema.json> "
                 "<records> <appends> [--expire] [--max-age-ms N] [--min-keep N] "
                 "[--max-manifests N]\n";
    return 2;
  }
  const std::string warehouse = argv[1];
  const std::string parquet = argv[2];
  const int64_t records = std::atoll(argv[4]);
  const int appends = std::atoi(argv[5]);
  bool expire = false;
  std::string existing;
  int64_t max_age_ms = 3'600'000;
  int min_keep = 100;
  int max_manifests = 100;
  for (int i = 6; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--existing" && i + 1 < argc) {
      existing = argv[++i];
    } else if (arg == "--expire") {
      expire = true;
    } else if (arg == "--max-age-ms" && i + 1 < argc) {
      max_age_ms = std::atoll(argv[++i]);
    } else if (arg == "--min-keep" && i + 1 < argc) {
      min_keep = std::atoi(argv[++i]);
    } else if (arg == "--max-manifests" && i + 1 < argc) {
      max_manifests = std::atoi(argv[++i]);
    } else {
      std::cerr << "unknown argument " << arg << "\n";
      return 2;
    }
  }
  auto io = floe::storage::MakeLocalFileIO(warehouse);
  CommittedMetadata current;
  if (!existing.empty()) {
    auto loaded = ReadTableMetadata(*io, existing);
    if (!loaded.ok()) return Fail(loaded.status(), "load table");
    current = CommittedMetadata{std::move(loaded).ValueOrDie(), existing};
  } else {
    std::ifstream schema_in(argv[3]);
    std::stringstream schema_text;
    schema_text << schema_in.rdbuf();
    auto schema = SchemaFromJsonString(schema_text.str());
    if (!schema.ok()) return Fail(schema.status(), "schema");
    std::string location =
        floe::storage::PathToFileUri(warehouse) + "/ns/t-" + floe::NewUuid();
    auto created = NewTableMetadata(*schema, location, {{"owner", "floe-tests"}});
    if (!created.ok()) return Fail(created.status(), "new table");
    auto committed = CreateTable(*io, *created);
    if (!committed.ok()) return Fail(committed.status(), "create table");
    current = std::move(committed).ValueOrDie();
  }

  const std::string file_uri = floe::storage::PathToFileUri(parquet);
  auto size = io->Size(file_uri);
  if (!size.ok()) return Fail(size.status(), "parquet size");

  for (int i = 1; i <= appends; ++i) {
    DataFile f;
    f.file_path = file_uri;
    f.record_count = records;
    f.file_size_in_bytes = *size;
    FastAppendOptions options;
    options.max_manifests = max_manifests;
    const std::string offsets = "{\"topic\":{\"0\":" + std::to_string(i * records) + "}}";
    options.summary["floe.kafka.offsets"] = offsets;
    options.extra_updates.push_back(
        update::SetProperties{{{"floe.kafka.offsets", offsets}}});
    if (expire) {
      auto keep = NewestAncestorWithSummaryKey(current.metadata, "floe.kafka.offsets");
      auto removal = ExpireSnapshots(
          current.metadata, floe::NowMs(), max_age_ms, min_keep,
          [&](const Snapshot& s) { return keep && s.snapshot_id == *keep; });
      if (removal) options.extra_updates.push_back(*removal);
    }
    auto append = FastAppend::Make(io.get(), current.metadata, {f}, options);
    if (!append.ok()) return Fail(append.status(), "fast append");
    auto pending = (*append)->Prepare(current.metadata, floe::NowMs());
    if (!pending.ok()) return Fail(pending.status(), "prepare");
    auto next = UpdateTable(*io, &current.metadata, current.metadata_location,
                            pending->requirements, pending->updates, floe::NowMs());
    if (!next.ok()) return Fail(next.status(), "update table");
    current = std::move(next).ValueOrDie();
  }
  std::cout << current.metadata_location << std::endl;
  return 0;
}
