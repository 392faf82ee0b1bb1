// floe_maintenance_soak: thousands of small commits through the production Committer and
// DeltaMirror with an injected clock (one second per commit), table maintenance
// (MaintainTable: compaction, expiry, orphan cleanup) every --maintain-every commits, on
// a local warehouse and SQLite catalog that independent readers open afterwards. Used by
// tests/integration/test_maintenance.py (issue 20's 3,000-commit acceptance): the binary
// would need a second per commit.
//
// After each maintenance it prints one JSON line ({"commits", "records", "live_files",
// "max_live_files", "metadata", "expired", "deleted"}) and, with --pause, waits for a
// line on stdin, so that the readers can check the table at that point. Exit 0 when done.
#include <arrow/json/from_string.h>
#include <arrow/record_batch.h>
#include <arrow/type.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>

#include "floe/catalog/catalog.h"
#include "floe/catalog/pointer_store.h"
#include "floe/common/util.h"
#include "floe/iceberg/schema_json.h"
#include "floe/maintenance/maintain.h"
#include "floe/parquet/writer.h"
#include "floe/schema/arrow.h"
#include "floe/schema/table_schema.h"
#include "floe/storage/file_io.h"
#include "floe/table/committer.h"
#include "floe/table/delta_mirror.h"

namespace floe {
namespace {

struct Args {
  std::string warehouse;  // absolute directory
  std::string catalog;    // SQLite file
  int commits = 3000;
  int records = 3;           // per commit
  int maintain_every = 100;  // 0: never
  int64_t retention_ms = 120'000;
  bool pause = false;
};

int Fail(const Status& st, const char* what) {
  std::fprintf(stderr, "floe_maintenance_soak: %s: %s\n", what, st.ToString().c_str());
  return 1;
}

int Run(const Args& a) {
  const std::string warehouse = storage::PathToFileUri(a.warehouse);
  auto store = catalog::OpenSqliteStore(a.catalog, "floe");
  if (!store.ok()) return Fail(store.status(), "catalog");
  auto io = storage::MakeLocalFileIO(warehouse);
  int64_t now = NowMs();
  auto clock = [&now] { return now; };
  catalog::StoreCatalog cat(store->get(), io.get(), warehouse, clock);
  table::Committer committer(&cat, io.get(), clock);
  table::DeltaMirror mirror(&cat, io.get(), clock);

  const catalog::TableIdent ident{{"kafka"}, "soak"};
  int last = 0;
  auto schema = schema::BuildTableSchema(
      {{0, "id", true, iceberg::Type::Primitive(iceberg::TypeId::kLong), {}}}, nullptr,
      &last);
  if (!schema.ok()) return Fail(schema.status(), "schema");
  auto state = committer.CreateIfAbsent(ident, *schema, "iceberg,delta");
  if (!state.ok()) return Fail(state.status(), "create");
  auto arrow_schema = schema::ToArrowSchema(*schema);
  if (!arrow_schema.ok()) return Fail(arrow_schema.status(), "arrow schema");
  const std::string schema_json = iceberg::SchemaToJsonString(*schema);

  config::MaintenanceSettings settings;
  settings.orphan_min_age_ms = int64_t{24} * 3600 * 1000;
  settings.max_deletes_per_run = 10000;
  settings.compaction_enabled = true;  // the table's own compaction settings: defaults

  int64_t max_live = 0;
  int64_t expired = 0;
  int64_t deleted = 0;
  for (int i = 0; i < a.commits; ++i) {
    now += 1000;
    // One small file of `records` rows: ids and offsets i*records ...
    std::string rows = "[";
    for (int j = 0; j < a.records; ++j) {
      const int64_t id = int64_t{i} * a.records + j;
      rows += (j ? "," : "") + std::string("{\"id\": ") + std::to_string(id) +
              ", \"_kafka\": {\"partition\": 0, \"offset\": " + std::to_string(id) +
              ", \"timestamp\": " + std::to_string(now * 1000) + "}}";
    }
    rows += "]";
    auto array = ::arrow::json::ArrayFromJSONString(
        ::arrow::struct_((*arrow_schema)->fields()), rows);
    if (!array.ok()) return Fail(array.status(), "rows");
    auto batch = ::arrow::RecordBatch::FromStructArray(*array);
    if (!batch.ok()) return Fail(batch.status(), "rows");
    auto full = ::arrow::RecordBatch::Make(*arrow_schema, (*batch)->num_rows(),
                                           (*batch)->columns());
    const std::string uri = state->location + "/data/soak-" + std::to_string(i) + "-" +
                            NewUuid() + ".parquet";
    auto out = io->OpenOutputStream(uri);
    if (!out.ok()) return Fail(out.status(), "open");
    auto writer =
        parquet::DataFileWriter::Open(*out, uri, *arrow_schema, *schema, schema_json);
    if (!writer.ok()) return Fail(writer.status(), "writer");
    if (Status st = (*writer)->Write(*full); !st.ok()) return Fail(st, "write");
    auto file = (*writer)->Close();
    if (!file.ok()) return Fail(file.status(), "close");

    table::CommitRequest req;
    req.ident = ident;
    req.files = {*file};
    req.expected["soak"][0] =
        i == 0 ? std::nullopt : std::optional<int64_t>(int64_t{i} * a.records);
    req.new_positions["soak"][0] = int64_t{i + 1} * a.records;
    req.cluster_id = "soak";
    req.retention = iceberg::RetentionPolicy{a.retention_ms, 10};
    req.expire_age_factor = 4;
    if (Status st = committer.Commit(req); !st.ok()) return Fail(st, "commit");
    if (auto v = mirror.Sync(ident); !v.ok()) return Fail(v.status(), "delta");

    auto loaded = cat.LoadTable(ident);
    if (!loaded.ok()) return Fail(loaded.status(), "load");
    const auto* snap = loaded->metadata.CurrentSnapshot();
    const int64_t live = std::stoll(snap->summary.at("total-data-files"));
    max_live = std::max(max_live, live);
    if (a.maintain_every == 0 || (i + 1) % a.maintain_every != 0) continue;

    auto r = maintenance::MaintainTable(cat, *io, ident, settings, now, false);
    if (!r.ok()) return Fail(r.status(), "maintain");
    if (!r->compaction_error.empty()) {
      return Fail(Internal(r->compaction_error), "compaction");
    }
    if (auto v = mirror.Sync(ident); !v.ok()) return Fail(v.status(), "delta");
    expired += r->expiry.expired;
    deleted += r->expiry.deleted;
    loaded = cat.LoadTable(ident);
    if (!loaded.ok()) return Fail(loaded.status(), "load");
    std::cout << "{\"commits\": " << i + 1
              << ", \"records\": " << int64_t{i + 1} * a.records << ", \"live_files\": "
              << loaded->metadata.CurrentSnapshot()->summary.at("total-data-files")
              << ", \"max_live_files\": " << max_live << ", \"metadata\": \""
              << loaded->metadata_location << "\", \"expired\": " << expired
              << ", \"deleted\": " << deleted << "}" << std::endl;
    if (a.pause) {
      std::string line;
      if (!std::getline(std::cin, line)) return 0;  // the reader went away
    }
  }
  return 0;
}

}  // namespace
}  // namespace floe

int main(int argc, char** argv) {
  floe::Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "floe_maintenance_soak: %s needs a value\n", arg.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (arg == "--warehouse") {
      a.warehouse = value();
    } else if (arg == "--catalog") {
      a.catalog = value();
    } else if (arg == "--commits") {
      a.commits = std::stoi(value());
    } else if (arg == "--records") {
      a.records = std::stoi(value());
    } else if (arg == "--maintain-every") {
      a.maintain_every = std::stoi(value());
    } else if (arg == "--retention-ms") {
      a.retention_ms = std::stoll(value());
    } else if (arg == "--pause") {
      a.pause = true;
    } else {
      std::fprintf(stderr,
                   "usage: floe_maintenance_soak --warehouse DIR --catalog FILE "
                   "[--commits N] [--records N] [--maintain-every N (0: never)] "
                   "[--retention-ms N] [--pause]\n");
      return 2;
    }
  }
  if (a.warehouse.empty() || a.catalog.empty() || a.maintain_every < 0 ||
      a.retention_ms <= 0) {
    std::fprintf(stderr,
                 "floe_maintenance_soak: --warehouse and --catalog are required\n");
    return 2;
  }
  return floe::Run(a);
}
