// Test-only driver for tests/integration/test_delta_log.py (not shipped).
//
//   floe_delta_fixture write <table dir> <input.parquet> <iceberg schema.json> <appends>
//                      <app id> [--uuid U]
//     Creates a Delta table at <table dir> (version 0: protocol + metaData), then appends
//     <appends> data files, one per version: each rewrites <input.parquet> (whose columns
//     carry PARQUET:field_id) through floe::parquet's DataFileWriter into
//     data/<n>.parquet — the real Iceberg metrics — and commits its add (with stats) and
//     txn(<app id>, 100 * n) through DeltaLog::CommitNext, which checkpoints every 10
//     versions. Prints the final snapshot as JSON.
//   floe_delta_fixture read <table dir>
//     Prints the snapshot DeltaLog::ReadSnapshot reconstructs (a table another writer
//     made, e.g. delta-rs with its own checkpoint).
#include <arrow/api.h>
#include <arrow/io/file.h>
#include <parquet/arrow/reader.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "floe/common/util.h"
#include "floe/delta/log.h"
#include "floe/iceberg/schema_json.h"
#include "floe/parquet/writer.h"
#include "floe/storage/file_io.h"

namespace {

using json = nlohmann::json;

int Fail(const ::arrow::Status& st, const char* what) {
  std::cerr << what << ": " << st.ToString() << "\n";
  return 1;
}

json SnapshotJson(const floe::delta::Snapshot& s) {
  json files = json::object();
  for (const auto& [path, add] : s.files) {
    files[path] = {{"size", add.size},
                   {"stats", add.stats ? json::parse(*add.stats) : json(nullptr)}};
  }
  json txns = json::object();
  for (const auto& [app, txn] : s.txns) txns[app] = txn.version;
  json out = {{"version", s.version},
              {"checkpoint_version", s.checkpoint_version},
              {"files", files},
              {"txns", txns}};
  if (s.metadata) {
    out["schema_string"] = s.metadata->schema_string;
    out["configuration"] = s.metadata->configuration;
  }
  if (s.protocol) {
    out["protocol"] = {{"minReaderVersion", s.protocol->min_reader_version},
                       {"minWriterVersion", s.protocol->min_writer_version}};
  }
  return out;
}

int Read(const std::string& dir) {
  auto io = floe::storage::MakeLocalFileIO(floe::storage::PathToFileUri(dir));
  floe::delta::DeltaLog log(io.get(), floe::storage::PathToFileUri(dir));
  auto s = log.ReadSnapshot();
  if (!s.ok()) return Fail(s.status(), "ReadSnapshot");
  std::cout << SnapshotJson(*s).dump() << "\n";
  return 0;
}

int Write(const std::string& dir, const std::string& input,
          const std::string& schema_file, int appends, const std::string& app_id,
          const std::string& uuid) {
  std::ifstream in(schema_file);
  std::stringstream buf;
  buf << in.rdbuf();
  const std::string schema_json = buf.str();
  auto schema = floe::iceberg::SchemaFromJsonString(schema_json);
  if (!schema.ok()) return Fail(schema.status(), "schema");

  auto file = ::arrow::io::ReadableFile::Open(input);
  if (!file.ok()) return Fail(file.status(), "open input");
  auto reader = ::parquet::arrow::OpenFile(*file, ::arrow::default_memory_pool());
  if (!reader.ok()) return Fail(reader.status(), "read input");
  auto table = (*reader)->ReadTable();
  if (!table.ok()) return Fail(table.status(), "read input");
  auto batch = (*table)->CombineChunksToBatch();
  if (!batch.ok()) return Fail(batch.status(), "combine");

  const std::string root = floe::storage::PathToFileUri(dir);
  auto io = floe::storage::MakeLocalFileIO(root);
  floe::delta::DeltaLog log(io.get(), root);
  auto snapshot = log.ReadSnapshot();
  if (!snapshot.ok()) return Fail(snapshot.status(), "ReadSnapshot");
  const int64_t now = floe::NowMs();
  if (snapshot->version < 0) {
    auto protocol = floe::delta::ProtocolFor(*schema);
    if (!protocol.ok()) return Fail(protocol.status(), "protocol");
    auto meta = floe::delta::MakeMetadata(uuid, *schema, now);
    if (!meta.ok()) return Fail(meta.status(), "metadata");
    auto v =
        log.CommitNext(&*snapshot,
                       {floe::delta::MakeCommitInfo("CREATE TABLE", {}, "floe/test", now),
                        *protocol, *meta},
                       now);
    if (!v.ok()) return Fail(v.status(), "create");
  }
  for (int n = 1; n <= appends; ++n) {
    const std::string name =
        "data/" + floe::NewUuid() + "-" + std::to_string(n) + ".parquet";
    const std::string uri = root + "/" + name;
    auto path = io->LocalPath(uri);
    if (!path.ok()) return Fail(path.status(), "path");
    std::filesystem::create_directories(std::filesystem::path(*path).parent_path());
    auto out = ::arrow::io::FileOutputStream::Open(*path);
    if (!out.ok()) return Fail(out.status(), "create data file");
    auto writer = floe::parquet::DataFileWriter::Open(*out, uri, (*batch)->schema(),
                                                      *schema, schema_json);
    if (!writer.ok()) return Fail(writer.status(), "DataFileWriter");
    if (auto st = (*writer)->Write(**batch); !st.ok()) return Fail(st, "write");
    auto df = (*writer)->Close();
    if (!df.ok()) return Fail(df.status(), "close");
    auto add = floe::delta::MakeAddFile(*df, root, *schema, now);
    if (!add.ok()) return Fail(add.status(), "add");
    const int64_t position = int64_t{100} * (snapshot->version + 1);
    auto v = log.CommitNext(
        &*snapshot,
        {floe::delta::MakeCommitInfo("STREAMING UPDATE", {{"outputMode", "Append"}},
                                     "floe/test", now),
         *add, floe::delta::MakeTxn(app_id, position, now)},
        now);
    if (!v.ok()) return Fail(v.status(), "commit");
  }
  std::cout << SnapshotJson(*snapshot).dump() << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "read" && argc == 3) return Read(argv[2]);
  if (mode == "write" && argc >= 7) {
    std::string uuid = "6a1f3c2e-5b4d-4e8f-9a0b-1c2d3e4f5a6b";
    for (int i = 7; i + 1 < argc; i += 2) {
      if (std::string(argv[i]) == "--uuid") uuid = argv[i + 1];
    }
    return Write(argv[2], argv[3], argv[4], std::atoi(argv[5]), argv[6], uuid);
  }
  std::cerr
      << "usage: floe_delta_fixture write <dir> <input.parquet> <schema.json> <appends> "
         "<app id> [--uuid U]\n       floe_delta_fixture read <dir>\n";
  return 2;
}
