// Metadata-path microbenchmarks (issue 6, item 2), Google Benchmark:
//
//   BM_EncodeManifest/N   a v2 manifest of N data-file entries encoded in memory
//   BM_WriteManifest/N    the same, written put-if-absent to the local warehouse
//   BM_Commit/N           one Committer::Commit of N new data files: the production path
//                         (load the table, check the position fence, write manifest,
//                         manifest list and metadata JSON, swap the SQLite catalog
//                         pointer). The table starts with 200 commits of history, so each
//                         timed commit pays for a steady-state table (manifest merging
//                         and snapshot expiry included).
//
// Entries carry the metrics Floe writes for W1 (bench/run.py): per-column sizes, value
// and null counts and bounds on a 20-leaf schema. items/s counts data files; bytes/s
// counts the manifest bytes produced. No assertions: benchmarks measure, tests check.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "floe/catalog/catalog.h"
#include "floe/catalog/pointer_store.h"
#include "floe/common/log.h"
#include "floe/common/util.h"
#include "floe/iceberg/manifest.h"
#include "floe/iceberg/schema.h"
#include "floe/schema/table_schema.h"
#include "floe/storage/file_io.h"
#include "floe/table/committer.h"

namespace floe::table {
namespace {

using iceberg::NestedField;
using iceberg::Type;
using iceberg::TypeId;

template <typename T>
T Check(Result<T> r, const char* what) {
  if (!r.ok()) {
    fprintf(stderr, "%s: %s\n", what, r.status().message().c_str());
    std::exit(1);
  }
  return std::move(*r);
}

void Check(const Status& st, const char* what) {
  if (!st.ok()) {
    fprintf(stderr, "%s: %s\n", what, st.message().c_str());
    std::exit(1);
  }
}

// The W1 order record as a table schema (with Floe's `_kafka` struct).
iceberg::Schema W1Schema(int* last_column_id) {
  int id = 0;
  auto prim = [&](const char* name, TypeId t, bool required = true) {
    return NestedField{++id, name, required, Type::Primitive(t), {}};
  };
  std::vector<NestedField> fields = {
      prim("order_id", TypeId::kLong),
      prim("customer_id", TypeId::kLong),
      prim("customer", TypeId::kString),
      prim("email", TypeId::kString),
      prim("status", TypeId::kString),
      NestedField{++id, "amount", true, Type::Decimal(12, 2), {}},
      prim("currency", TypeId::kString),
      prim("created_at", TypeId::kTimestampTz),
      prim("note", TypeId::kString, false),
      prim("score", TypeId::kDouble),
  };
  int address_id = ++id;
  std::vector<NestedField> address = {
      prim("street", TypeId::kString), prim("city", TypeId::kString),
      prim("zip", TypeId::kString), prim("country", TypeId::kString)};
  fields.push_back(NestedField{address_id, "address", true, Type::Struct(address), {}});
  int items_id = ++id;
  int element_id = ++id;
  fields.push_back(
      NestedField{items_id,
                  "items",
                  true,
                  Type::List(element_id, true, Type::Primitive(TypeId::kString)),
                  {}});
  *last_column_id = 0;
  return Check(schema::BuildTableSchema(fields, nullptr, last_column_id), "schema");
}

// A data file as Floe records one: metrics for every leaf id, 8-byte bounds.
iceberg::DataFile MakeFile(const std::string& location, int64_t n, int leaves) {
  iceberg::DataFile f;
  f.file_path = location + "/data/00000-" + std::to_string(n) +
                "-0b6c1f7e-4f0e-4c1e-9d55-6a1f3f0a8e21.parquet";
  f.record_count = 250'000;
  f.file_size_in_bytes = 9'500'000 + n;
  for (int id = 1; id <= leaves; ++id) {
    f.column_sizes[id] = 400'000 + id;
    f.value_counts[id] = 250'000;
    f.null_value_counts[id] = id % 3 == 0 ? 50'000 : 0;
    f.lower_bounds[id] = std::string("\x01\x02\x03\x04\x05\x06\x07\x08", 8);
    f.upper_bounds[id] = std::string("\xf1\xf2\xf3\xf4\xf5\xf6\xf7\xf8", 8);
  }
  f.split_offsets = {4, 4'000'000};
  return f;
}

struct Warehouse {
  Warehouse() {
    root = std::filesystem::temp_directory_path() /
           ("floe-commit-bench-" + std::to_string(::getpid()));
    std::filesystem::remove_all(root);
    std::filesystem::create_directories(root);
    io = storage::MakeLocalFileIO(storage::PathToFileUri(root.string()));
  }
  ~Warehouse() { std::filesystem::remove_all(root); }
  std::filesystem::path root;
  std::unique_ptr<storage::FileIO> io;
};

std::vector<iceberg::ManifestEntry> Entries(int n, int leaves) {
  std::vector<iceberg::ManifestEntry> entries(n);
  for (int i = 0; i < n; ++i) entries[i].data_file = MakeFile("file:///w/t", i, leaves);
  return entries;
}

void BM_EncodeManifest(benchmark::State& state) {
  int last = 0;
  auto schema = W1Schema(&last);
  auto entries = Entries(static_cast<int>(state.range(0)), last);
  iceberg::PartitionSpec spec;
  int64_t bytes = 0;
  for (auto _ : state) {
    auto encoded = Check(
        iceberg::EncodeManifest(schema, spec, iceberg::ManifestContent::kData, entries),
        "encode");
    bytes += static_cast<int64_t>(encoded.size());
    benchmark::DoNotOptimize(encoded);
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
  state.SetBytesProcessed(bytes);
}
BENCHMARK(BM_EncodeManifest)->Arg(1)->Arg(16)->Arg(256);

void BM_WriteManifest(benchmark::State& state) {
  Warehouse wh;
  int last = 0;
  auto schema = W1Schema(&last);
  auto entries = Entries(static_cast<int>(state.range(0)), last);
  iceberg::PartitionSpec spec;
  std::string base = storage::PathToFileUri(wh.root.string()) + "/m-";
  int64_t n = 0;
  int64_t bytes = 0;
  for (auto _ : state) {
    auto written =
        Check(iceberg::WriteManifest(*wh.io, base + std::to_string(n++) + ".avro", schema,
                                     spec, 1, entries),
              "write manifest");
    bytes += written.manifest_length;
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
  state.SetBytesProcessed(bytes);
}
BENCHMARK(BM_WriteManifest)->Arg(1)->Arg(16)->Arg(256);

void BM_Commit(benchmark::State& state) {
  Warehouse wh;
  auto store = Check(catalog::OpenSqliteStore((wh.root / "catalog.db").string(), "floe"),
                     "open catalog");
  std::string warehouse_uri = storage::PathToFileUri(wh.root.string());
  catalog::StoreCatalog cat(store.get(), wh.io.get(), warehouse_uri);
  Committer committer(&cat, wh.io.get());
  int last = 0;
  auto schema = W1Schema(&last);
  catalog::TableIdent ident{{"kafka"}, "w1"};
  auto table = Check(committer.CreateIfAbsent(ident, schema), "create table");
  const int files = static_cast<int>(state.range(0));
  int64_t position = 0;
  int64_t n = 0;
  auto next = [&] {
    CommitRequest req;
    req.ident = ident;
    for (int i = 0; i < files; ++i)
      req.files.push_back(MakeFile(table.location, n++, last));
    req.expected["w1"][0] =
        position == 0 ? std::nullopt : std::optional<int64_t>(position);
    position += 250'000;
    req.new_positions["w1"][0] = position;
    req.cluster_id = "bench";
    return req;
  };
  for (int i = 0; i < 200; ++i) Check(committer.Commit(next()), "history commit");
  for (auto _ : state) {
    state.PauseTiming();
    CommitRequest req = next();
    state.ResumeTiming();
    Check(committer.Commit(req), "commit");
  }
  state.SetItemsProcessed(state.iterations() * files);
  state.counters["commits_per_s"] = benchmark::Counter(
      static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Commit)->Arg(1)->Arg(16)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace floe::table

int main(int argc, char** argv) {
  floe::InitLogging("warn");
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
