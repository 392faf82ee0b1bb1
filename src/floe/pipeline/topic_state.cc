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

void CarryRunCounters(const TopicState& from, TopicState* to) {
  to->read_records = from.read_records;
  to->read_bytes = from.read_bytes;
  to->committed_records = from.committed_records;
  to->progress_mark = from.progress_mark;
  to->skipped = from.skipped;
  to->tombstones = from.tombstones;
  to->dead_letters.committed = from.dead_letters.committed;
  to->newest_committed_timestamp_ms = from.newest_committed_timestamp_ms;
  to->last_commit_wall_ms = from.last_commit_wall_ms;
}

std::string Where(const kafka::Record& r) {
  return "topic " + *r.topic + " partition " + std::to_string(r.partition) + " offset " +
         std::to_string(r.offset);
}

}  // namespace floe::pipeline
