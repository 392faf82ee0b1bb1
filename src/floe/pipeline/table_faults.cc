#include "floe/pipeline/table_faults.h"

#include <algorithm>

#include "floe/common/log.h"
#include "floe/pipeline/topic_state.h"
#include "floe/storage/file_io.h"

namespace floe::pipeline {

bool PausesTopic(const Status& fault) {
  switch (KindOf(fault)) {
    case ErrorKind::kRetriable:
    case ErrorKind::kStateUnknown:
    case ErrorKind::kConflict:
      return true;
    default:
      return false;
  }
}

int64_t NextPauseMs(TopicState& ts) {
  ts.backoff_ms =
      ts.backoff_ms == 0 ? kFirstPauseMs : std::min(ts.backoff_ms * 2, kMaxPauseMs);
  return ts.backoff_ms;
}

void DeleteFiles(const std::vector<std::string>& paths, storage::FileIO* io) {
  for (const auto& path : paths) {
    Status st = io->Delete(path);
    if (!st.ok() && KindOf(st) != ErrorKind::kNotFound) {
      FLOE_LOG_WARN("could not delete unreferenced file {}: {}", path, st.message());
    }
  }
}

void DiscardUncommitted(TopicState& ts, storage::FileIO* io) {
  if (ts.writer) DeleteFiles(ts.writer->Abort(), io);
  if (ts.dead_letters.writer) DeleteFiles(ts.dead_letters.writer->Abort(), io);
  ts.dead_letters.writer.reset();
  ts.dead_letters.buffered = 0;
  ts.dead_letters.loaded = false;
  ts.ResetForReread();
}

}  // namespace floe::pipeline
