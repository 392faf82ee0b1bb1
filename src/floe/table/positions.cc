#include "floe/table/positions.h"

#include <nlohmann/json.hpp>

#include "floe/common/log.h"
#include "floe/iceberg/table_metadata.h"

namespace floe::table {

std::string PositionsToJson(const Positions& p) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [topic, parts] : p) {
    nlohmann::json t = nlohmann::json::object();
    for (const auto& [part, pos] : parts) t[std::to_string(part)] = pos;
    j[topic] = t;
  }
  return j.dump();
}

Result<Positions> PositionsFromJson(const std::string& json) {
  auto j = nlohmann::json::parse(json, nullptr, false);
  if (!j.is_object())
    return Status::Invalid(kOffsetsKey, " is not a JSON object: ", json);
  Positions out;
  for (const auto& [topic, parts] : j.items()) {
    if (!parts.is_object())
      return Status::Invalid(kOffsetsKey, ": topic ", topic, " is not an object");
    for (const auto& [part, pos] : parts.items()) {
      if (!pos.is_number_integer())
        return Status::Invalid(kOffsetsKey, ": bad position for ", topic, "/", part);
      char* end = nullptr;
      long p = std::strtol(part.c_str(), &end, 10);
      if (end == part.c_str() || *end != '\0' || p < 0 || p > INT32_MAX) {
        return Status::Invalid(kOffsetsKey, ": bad partition '", part, "' for ", topic);
      }
      out[topic][static_cast<int32_t>(p)] = pos.get<int64_t>();
    }
  }
  return out;
}

std::optional<Positions> SnapshotPositions(const iceberg::Snapshot& snapshot) {
  auto it = snapshot.summary.find(kOffsetsKey);
  if (it == snapshot.summary.end()) return std::nullopt;
  auto p = PositionsFromJson(it->second);
  if (!p.ok()) return std::nullopt;
  return *p;
}

std::optional<Positions> RecordedPositions(const iceberg::TableMetadata& md) {
  auto it = md.properties.find(kOffsetsKey);
  if (it != md.properties.end()) {
    auto p = PositionsFromJson(it->second);
    if (p.ok()) return *p;
    FLOE_LOG_WARN("table {}: unreadable {} property: {}", md.location, kOffsetsKey,
                  p.status().message());
  }
  for (const iceberg::Snapshot* s = md.CurrentSnapshot(); s != nullptr;
       s = s->parent_snapshot_id ? md.SnapshotById(*s->parent_snapshot_id) : nullptr) {
    if (auto p = SnapshotPositions(*s)) return p;
  }
  return std::nullopt;
}

}  // namespace floe::table
