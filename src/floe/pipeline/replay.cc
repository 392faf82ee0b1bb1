#include "floe/pipeline/replay.h"

#include <arrow/array.h>
#include <arrow/table.h>
#include <parquet/arrow/reader.h>

#include <algorithm>
#include <map>
#include <set>

#include "floe/common/json.h"
#include "floe/common/log.h"
#include "floe/common/util.h"
#include "floe/iceberg/manifest.h"
#include "floe/kafka/consumer.h"
#include "floe/pipeline/dead_letters.h"
#include "floe/pipeline/schema_resolver.h"
#include "floe/pipeline/table_faults.h"
#include "floe/pipeline/table_setup.h"
#include "floe/pipeline/topic_state.h"
#include "floe/schema/table_schema.h"
#include "floe/storage/file_io.h"
#include "floe/table/commit_driver.h"
#include "floe/table/committer.h"
#include "floe/table/delta_mirror.h"

namespace floe::pipeline {
namespace {

using Json = nlohmann::json;
// partition → offsets
using OffsetSet = std::map<int32_t, std::set<int64_t>>;

// At most this many replayed offsets are read back from the property (each becomes a
// set entry): a damaged or forged property must not exhaust memory.
constexpr int64_t kMaxReplayedOffsets = 10'000'000;

// {"0": [[10, 12], [40, 40]], ...}: inclusive ranges, sorted.
Result<OffsetSet> ParseReplayed(const std::string& text, const std::string& key) {
  FLOE_ASSIGN_OR_RAISE(Json j, json::Parse<Json>(text, key));
  OffsetSet out;
  int64_t total = 0;
  if (!j.is_object()) return InvalidInput(key + ": not an object");
  for (const auto& [p, ranges] : j.items()) {
    if (!ranges.is_array()) return InvalidInput(key + ": partition " + p + " not a list");
    auto& set = out[std::stoi(p)];
    for (const auto& r : ranges) {
      if (!r.is_array() || r.size() != 2 || !r[0].is_number_integer() ||
          !r[1].is_number_integer() || r[1].get<int64_t>() < r[0].get<int64_t>() ||
          r[1].get<int64_t>() - r[0].get<int64_t>() > 100'000'000) {
        return InvalidInput(key + ": partition " + p + " has a bad range");
      }
      total += r[1].get<int64_t>() - r[0].get<int64_t>() + 1;
      if (total > kMaxReplayedOffsets) {
        return InvalidInput(key + ": more than " + std::to_string(kMaxReplayedOffsets) +
                            " replayed offsets; the property is damaged");
      }
      for (int64_t o = r[0].get<int64_t>(); o <= r[1].get<int64_t>(); ++o) set.insert(o);
    }
  }
  return out;
}

std::string DumpReplayed(const OffsetSet& set) {
  Json j = Json::object();
  for (const auto& [p, offsets] : set) {
    Json ranges = Json::array();
    for (auto it = offsets.begin(); it != offsets.end();) {
      int64_t first = *it;
      int64_t last = first;
      for (++it; it != offsets.end() && *it == last + 1; ++it) last = *it;
      ranges.push_back(Json::array({first, last}));
    }
    j[std::to_string(p)] = std::move(ranges);
  }
  return json::Dump(j);
}

Result<OffsetSet> ReplayedIn(const std::map<std::string, std::string>& properties,
                             const std::string& key) {
  auto it = properties.find(key);
  if (it == properties.end()) return OffsetSet{};
  return ParseReplayed(it->second, key);
}

}  // namespace

Result<ReplayResult> ReplayDeadLetters(const config::Config& config,
                                       const catalog::TableIdent& table,
                                       registry::SchemaSource* schemas,
                                       catalog::Catalog* catalog, storage::FileIO* io) {
  table::Committer committer(catalog, io);
  table::DeltaMirror delta(catalog, io);
  const catalog::TableIdent dlq{table.ns, DeadLetterTableName(table.name)};
  FLOE_ASSIGN_OR_RAISE(auto dead, catalog->LoadTable(dlq));
  const auto& dmd = dead.metadata;
  // The topic: the one whose positions the dead-letter table records.
  auto positions = dmd.properties.find(table::kOffsetsKey);
  if (positions == dmd.properties.end()) {
    return NotFound("dead-letter table " + dlq.ToString() + " records no topic yet");
  }
  FLOE_ASSIGN_OR_RAISE(Json pj, json::Parse<Json>(positions->second, table::kOffsetsKey));
  if (!pj.is_object() || pj.size() != 1) {
    return InvalidInput("dead-letter table " + dlq.ToString() + " records positions of " +
                        std::to_string(pj.size()) + " topics; replay needs exactly one");
  }
  ReplayResult result;
  result.topic = pj.begin().key();
  auto settings = config::ResolveTopic(config, result.topic);
  if (!settings || settings->NamespaceLevels() != table.ns ||
      settings->table != table.name) {
    return InvalidConfig(
        "topic " + result.topic + " (of " + dlq.ToString() +
        ") is not configured to write table " + table.ToString() +
        " in this config file; replay decodes with the topic's settings");
  }
  const std::string replayed_key = kReplayedKeyPrefix + result.topic;

  TopicState ts;
  ts.settings = *settings;
  ts.ident = table;
  ts.table_name = settings->QualifiedTable();
  FLOE_ASSIGN_OR_RAISE(ts.table, committer.Load(table));
  OffsetSet replayed;
  if (ts.table.exists) {
    FLOE_ASSIGN_OR_RAISE(auto loaded, catalog->LoadTable(table));
    FLOE_ASSIGN_OR_RAISE(replayed, ReplayedIn(loaded.metadata.properties, replayed_key));
  }
  TableSetup tables(&committer, io);
  SchemaResolver resolver(schemas, &tables, [] { return MonotonicMs(); });
  LogScope log = ts.LogAbout();

  FLOE_ASSIGN_OR_RAISE(auto files, LiveFiles(*io, dmd));
  OffsetSet now_replayed;
  for (const auto& path : files) {
    FLOE_ASSIGN_OR_RAISE(DeadLetterRows rows, ReadDeadLetters(*io, path, &result.topic));
    for (const kafka::Record& r : rows.records) {
      ++result.rows;
      auto done = replayed.find(r.partition);
      if (done != replayed.end() && done->second.count(r.offset)) {
        ++result.already;
        continue;
      }
      RowPlan plan;
      Status st = resolver.Plan(ts, r, &plan);
      if (st.ok()) {
        st = ts.writer->AppendRow(
            [&](::arrow::ArrayBuilder* const* columns) {
              return resolver.Fill(ts, r, plan, columns);
            },
            r);
      }
      if (!st.ok()) {
        const ErrorKind kind = KindOf(st);
        // Outages stop the replay; nothing is committed.
        if (kind == ErrorKind::kRetriable || kind == ErrorKind::kStateUnknown) {
          if (ts.writer) table::DeleteAll(*io, ts.writer->Abort());
          return st;
        }
        if (ts.evolution) {
          st = Suspend("its schema (" + ts.evolution_what +
                       ") changes the table; `floe run` applies schema changes: replay "
                       "again after the topic has taken that schema");
          ts.evolution.reset();
        }
        ++result.still_failing;
        if (result.example_error.empty())
          result.example_error = Where(r) + ": " + st.message();
        continue;
      }
      now_replayed[r.partition].insert(r.offset);
      ++result.replayed;
    }
  }
  // The Delta log follows (also when an earlier run committed and was killed before).
  auto sync_delta = [&] {
    if (!WantsDelta(ts.settings) || !ts.table.exists) return;
    auto version = delta.Sync(table);
    if (!version.ok()) {
      FLOE_LOG_WARN(
          "table {}: Delta log not updated yet ({}); the next floe run "
          "catches it up",
          table.ToString(), version.status().message());
    }
  };
  if (result.replayed == 0) {
    sync_delta();
    return result;
  }
  table::CommitRequest req;
  req.ident = table;
  req.cluster_id = ts.table.cluster_id;
  req.mark = table::SnapshotMark{table::SnapshotKind::kReplay, "dead letters"};
  FLOE_ASSIGN_OR_RAISE(req.files, ts.writer->TakeFiles());
  req.properties = [&](const iceberg::TableMetadata& base)
      -> Result<std::map<std::string, std::string>> {
    // Against the table as it is now: a replay that ran meanwhile must not overlap.
    FLOE_ASSIGN_OR_RAISE(OffsetSet merged, ReplayedIn(base.properties, replayed_key));
    for (const auto& [p, offsets] : now_replayed) {
      auto& into = merged[p];
      for (int64_t o : offsets) {
        if (!into.insert(o).second) {
          return Conflict("another replay of " + table.ToString() +
                          " appended the same dead letters meanwhile; run it again");
        }
      }
    }
    // Keep the cluster id the table has (the replay knows no broker).
    std::map<std::string, std::string> out = {{replayed_key, DumpReplayed(merged)}};
    auto cid = base.properties.find(table::kClusterIdKey);
    if (cid != base.properties.end()) out[table::kClusterIdKey] = cid->second;
    return out;
  };
  Status st = committer.Commit(req);
  if (!st.ok()) {
    return WithContext(st, "replay into " + table.ToString());
  }
  ts.table.exists = true;
  sync_delta();
  return result;
}

}  // namespace floe::pipeline
