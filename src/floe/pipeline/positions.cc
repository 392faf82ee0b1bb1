#include "floe/pipeline/positions.h"

#include <nlohmann/json.hpp>

namespace floe::pipeline {

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
  if (!j.is_object()) return Status::Invalid(kOffsetsKey, " is not a JSON object: ", json);
  Positions out;
  for (const auto& [topic, parts] : j.items()) {
    if (!parts.is_object()) return Status::Invalid(kOffsetsKey, ": topic ", topic, " is not an object");
    for (const auto& [part, pos] : parts.items()) {
      if (!pos.is_number_integer()) return Status::Invalid(kOffsetsKey, ": bad position for ", topic, "/", part);
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

}  // namespace floe::pipeline
