#include "floe/pipeline/topic_lifecycle.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "floe/common/json.h"
#include "floe/common/log.h"
#include "floe/kafka/consumer.h"
#include "floe/pipeline/topic_state.h"
#include "floe/registry/framing.h"
#include "floe/table/committer.h"
#include "floe/table/table_properties.h"

namespace floe::pipeline {
namespace {

using Json = ::nlohmann::json;

constexpr const char* kWhat = "topic state property";

Result<int64_t> IntMember(const Json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return int64_t{-1};
  if (!it->is_number_integer()) return json::WrongType(key, kWhat, "an integer");
  return it->get<int64_t>();
}

}  // namespace

std::string TopicStateToJson(const PersistedTopicState& state) {
  Json j = Json::object();
  if (state.suspension) {
    const Suspension& s = *state.suspension;
    j["state"] = "suspended";
    j["reason"] = s.reason;
    if (s.schema_id >= 0) j["schema-id"] = s.schema_id;
    if (s.HasRecord()) {
      j["partition"] = s.partition;
      j["offset"] = s.offset;
    }
    j["time-ms"] = s.time_ms;
  } else {
    j["state"] = "running";
  }
  Json ids = Json::array();
  for (int id : state.skip.schema_ids) ids.push_back(id);
  j["skip-schema-ids"] = std::move(ids);
  Json records = Json::array();
  for (const auto& [p, o] : state.skip.records) {
    records.push_back(Json{{"partition", p}, {"offset", o}});
  }
  j["skip-records"] = std::move(records);
  return json::Dump(j);
}

Result<PersistedTopicState> TopicStateFromJson(const std::string& text) {
  FLOE_ASSIGN_OR_RAISE(Json j, json::Parse<Json>(text, kWhat, 8));
  FLOE_RETURN_NOT_OK(json::CheckObject(j, kWhat));
  PersistedTopicState out;
  auto state = j.find("state");
  if (state == j.end() || !state->is_string()) {
    return json::WrongType("state", kWhat, "\"suspended\" or \"running\"");
  }
  if (*state == "suspended") {
    Suspension s;
    s.persist = true;
    auto reason = j.find("reason");
    if (reason != j.end() && reason->is_string()) s.reason = reason->get<std::string>();
    FLOE_ASSIGN_OR_RAISE(int64_t id, IntMember(j, "schema-id"));
    FLOE_ASSIGN_OR_RAISE(int64_t partition, IntMember(j, "partition"));
    FLOE_ASSIGN_OR_RAISE(s.offset, IntMember(j, "offset"));
    FLOE_ASSIGN_OR_RAISE(s.time_ms, IntMember(j, "time-ms"));
    s.schema_id = static_cast<int>(id);
    s.partition = static_cast<int32_t>(partition);
    out.suspension = std::move(s);
  } else if (*state != "running") {
    return json::WrongType("state", kWhat, "\"suspended\" or \"running\"");
  }
  auto ids = j.find("skip-schema-ids");
  if (ids != j.end() && ids->is_array()) {
    for (const auto& id : *ids) {
      if (!id.is_number_integer())
        return json::WrongType("skip-schema-ids", kWhat, "ints");
      out.skip.schema_ids.insert(id.get<int>());
    }
  }
  auto records = j.find("skip-records");
  if (records != j.end() && records->is_array()) {
    for (const auto& r : *records) {
      if (!r.is_object()) return json::WrongType("skip-records", kWhat, "objects");
      FLOE_ASSIGN_OR_RAISE(int64_t p, IntMember(r, "partition"));
      FLOE_ASSIGN_OR_RAISE(int64_t o, IntMember(r, "offset"));
      if (p < 0 || o < 0) return json::Missing("partition/offset", kWhat);
      out.skip.records.emplace(static_cast<int32_t>(p), o);
    }
  }
  return out;
}

int ValueSchemaId(const TopicState& ts, const kafka::Record& r) {
  if (ts.settings.value_format == config::ValueFormat::kJson) {
    return ts.schemas.json_schema_id;
  }
  if (ts.settings.value_format != config::ValueFormat::kRegistry || r.value == nullptr) {
    return -1;
  }
  kafka::Header h;
  const bool has_header = r.FindHeader(registry::kValueSchemaIdHeader, &h);
  auto framing = registry::DetectFraming(
      has_header ? h.value : nullptr, has_header ? h.value_len : 0, r.value, r.value_len);
  if (!framing.ok()) return -1;
  if (framing->source != registry::Framing::Source::kHeaderGuid) {
    return framing->schema_id;
  }
  auto it = ts.schemas.value_guids.find(framing->GuidString());
  return it == ts.schemas.value_guids.end() ? -1 : it->second;
}

bool InSkipSet(const TopicState& ts, const kafka::Record& r) {
  if (ts.skip.records.count({r.partition, r.offset})) return true;
  if (ts.skip.schema_ids.empty()) return false;
  const int id = ValueSchemaId(ts, r);
  return id >= 0 && ts.skip.schema_ids.count(id) > 0;
}

Result<SkipSet> SkipFor(const Suspension& s, const std::string& topic) {
  SkipSet out;
  if (s.schema_id >= 0) {
    out.schema_ids.insert(s.schema_id);
  } else if (s.HasRecord()) {
    out.records.emplace(s.partition, s.offset);
  } else {
    return InvalidInput("topic " + topic +
                        " was not suspended by a record, so there is nothing to skip (" +
                        s.reason +
                        "); fix the cause and resume without skip-incompatible");
  }
  return out;
}

const char* StateName(const TopicState& ts) {
  if (ts.suspended) return "suspended";
  if (ts.paused_until_ms >= 0) return ts.resuming ? "resuming" : "paused";
  return ts.resuming ? "resuming" : "running";
}

bool ApplyTableState(const std::string& topic, TopicState& ts) {
  ts.last_commit_wall_ms = std::max(ts.last_commit_wall_ms, ts.table.last_commit_ms);
  auto it = ts.table.topic_states.find(topic);
  if (it == ts.table.topic_states.end()) return false;
  auto state = TopicStateFromJson(it->second);
  if (!state.ok()) {
    // Only Floe writes floe.* properties; a damaged one must not unblock anything.
    ts.suspended = true;
    ts.suspend_reason = "table " + ts.ident.ToString() + " property " +
                        table::TopicStateKey(topic) + " cannot be read (" +
                        state.status().message() + "); resume the topic to overwrite it";
    ts.suspension = Suspension{ts.suspend_reason};
    ts.suspension.persist = true;  // so that a resume rewrites the property
    FLOE_LOG_ERROR("topic {} suspended: {}", topic, ts.suspend_reason);
    return true;
  }
  ts.skip.Merge(state->skip);
  if (!state->suspension) return false;
  ts.suspended = true;
  ts.resuming = false;
  ts.suspension = std::move(*state->suspension);
  ts.suspend_reason = ts.suspension.reason;
  FLOE_LOG_ERROR(
      "topic {} suspended: {} (saved in table {} before this start; `floe topics resume "
      "{}` resumes it)",
      topic, ts.suspend_reason, ts.ident.ToString(), topic);
  return true;
}

Status SaveTopicState(table::Committer& committer, const std::string& topic,
                      const TopicState& ts) {
  PersistedTopicState doc;
  if (ts.suspended && ts.suspension.persist) doc.suspension = ts.suspension;
  doc.skip = ts.skip;
  std::optional<std::string> text;
  if (doc.suspension || !doc.skip.empty()) text = TopicStateToJson(doc);
  Status st = committer.SetTopicState(ts.ident, topic, text);
  if (st.ok()) return st;
  FLOE_LOG_WARN("topic {}: state not saved in table {} ({}); kept in memory only", topic,
                ts.ident.ToString(), st.message());
  return KindOf(st) == ErrorKind::kNotFound ? Status::OK() : st;
}

TopicStatus StatusOf(const std::string& topic, const TopicState& ts) {
  TopicStatus s;
  s.topic = topic;
  s.table = ts.settings.QualifiedTable();
  s.state = StateName(ts);
  s.suspended = ts.suspended;
  s.paused = ts.paused_until_ms >= 0;
  s.reason = ts.suspended ? ts.suspend_reason : ts.pause_reason;
  if (ts.suspended) {
    s.schema_id = ts.suspension.schema_id;
    s.partition = ts.suspension.partition;
    s.offset = ts.suspension.offset;
    s.since_ms = ts.suspension.time_ms;
  }
  // Committed positions: the partitions being read, else (suspended or paused before
  // they were loaded) what the table records.
  const std::map<int32_t, int64_t>* recorded = nullptr;
  if (ts.table.positions) {
    auto it = ts.table.positions->find(topic);
    if (it != ts.table.positions->end()) recorded = &it->second;
  }
  for (int32_t p = 0; p < ts.partition_count; ++p) {
    PartitionStatus ps;
    ps.partition = p;
    auto it = ts.partitions.find(p);
    if (it != ts.partitions.end()) {
      if (it->second.start_recorded) ps.committed = it->second.start;
      if (ts.Active()) ps.consumed = it->second.ReadPosition();
    } else if (recorded != nullptr) {
      auto rit = recorded->find(p);
      if (rit != recorded->end()) ps.committed = rit->second;
    }
    auto hw = ts.high_watermarks.find(p);
    if (hw != ts.high_watermarks.end()) {
      // What was read lies below the high watermark, whenever that was last seen.
      ps.high_watermark = std::max(hw->second, ps.consumed);
      // A partition the table has no position for yet is read from its log start: its
      // lag is unknown here rather than guessed.
      if (ps.committed >= 0)
        ps.lag = std::max<int64_t>(0, ps.high_watermark - ps.committed);
      if (ps.consumed >= 0) ps.read_lag = ps.high_watermark - ps.consumed;
    }
    s.partitions.push_back(ps);
  }
  s.last_commit_ms = ts.last_commit_wall_ms;
  s.compatibility = ts.compatibility;
  s.skip_schema_ids.assign(ts.skip.schema_ids.begin(), ts.skip.schema_ids.end());
  s.skip_records.assign(ts.skip.records.begin(), ts.skip.records.end());
  s.committed_records = ts.committed_records;
  s.buffered_records = ts.writer ? ts.writer->buffered_rows() : 0;
  s.skipped_records = ts.skipped;
  s.dead_lettered_records = ts.dead_letters.committed;
  s.tombstones = ts.tombstones;
  s.read_records = ts.read_records;
  s.read_bytes = ts.read_bytes;
  s.newest_committed_timestamp_ms = ts.newest_committed_timestamp_ms;
  return s;
}

namespace {

// "42 s", "7 min", "3.2 h": an ETA an operator reads at a glance.
std::string RoughDuration(double seconds) {
  if (seconds < 90) return fmt::format("{:.0f} s", seconds);
  if (seconds < 90 * 60) return fmt::format("{:.0f} min", seconds / 60);
  return fmt::format("{:.1f} h", seconds / 3600);
}

}  // namespace

void LogTopicProgress(const std::string& topic, TopicState& ts, int64_t elapsed_ms) {
  if (ts.suspended) {
    FLOE_LOG_WARN("topic {}: SUSPENDED: {}", topic, ts.suspend_reason);
    return;
  }
  if (ts.paused_until_ms >= 0) {
    FLOE_LOG_WARN("topic {}: PAUSED: {}", topic, ts.pause_reason);
    return;
  }
  const int64_t done = ts.committed_records - ts.progress_mark;
  ts.progress_mark = ts.committed_records;
  const double rate = elapsed_ms > 0 ? static_cast<double>(done) * 1000 / elapsed_ms : 0;
  // The topic's lag: the sum over its partitions, unknown while any partition's is.
  int64_t lag = 0;
  for (const auto& p : StatusOf(topic, ts).partitions) {
    lag = (lag < 0 || p.lag < 0) ? -1 : lag + p.lag;
  }
  std::string pace = fmt::format("{:.0f} records/s, lag {}", rate,
                                 lag >= 0 ? std::to_string(lag) : "unknown");
  if (lag > 0 && rate > 0)
    pace += ", ETA " + RoughDuration(static_cast<double>(lag) / rate);
  FLOE_LOG_INFO(
      "topic {} → {}: {}; {} records committed this run, {} buffered, {} skipped{}{}",
      topic, ts.ident.ToString(), pace, ts.committed_records,
      ts.writer ? ts.writer->buffered_rows() : 0, ts.skipped,
      ts.dead_letters.committed > 0
          ? ", " + std::to_string(ts.dead_letters.committed) + " dead-lettered"
          : "",
      ts.tombstones > 0 ? ", " + std::to_string(ts.tombstones) + " tombstones" : "");
}

void TakeFetchedWatermarks(kafka::RecordSource* source, const std::string& topic,
                           TopicState& ts) {
  if (!ts.Active()) return;
  for (const auto& [p, range] : ts.partitions) {
    if (auto cached = source->CachedHighWatermark({topic, p}))
      ts.high_watermarks[p] = *cached;
  }
}

void RefreshWatermarks(kafka::RecordSource* source, const std::string& topic,
                       TopicState& ts, int timeout_ms) {
  // Partitions being read: what the last fetch response said; the others (a suspended
  // or paused topic, or no fetch yet) are asked.
  TakeFetchedWatermarks(source, topic, ts);
  for (int32_t p = 0; p < ts.partition_count; ++p) {
    if (ts.Active() && ts.partitions.count(p) &&
        source->CachedHighWatermark({topic, p})) {
      continue;
    }
    auto wm = source->QueryWatermarks({topic, p}, timeout_ms);
    if (wm.ok()) ts.high_watermarks[p] = wm->high;
  }
}

}  // namespace floe::pipeline
