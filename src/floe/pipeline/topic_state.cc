#include "floe/pipeline/topic_state.h"

#include <algorithm>

namespace floe::pipeline {

bool WantsDelta(const config::TopicSettings& settings) {
  return std::find(settings.formats.begin(), settings.formats.end(),
                   config::TableFormat::kDelta) != settings.formats.end();
}

std::string FormatsProperty(const config::TopicSettings& settings) {
  return WantsDelta(settings) ? "iceberg,delta" : "iceberg";
}

std::string Where(const kafka::Record& r) {
  return "topic " + *r.topic + " partition " + std::to_string(r.partition) + " offset " +
         std::to_string(r.offset);
}

}  // namespace floe::pipeline
