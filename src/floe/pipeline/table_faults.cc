#include "floe/pipeline/table_faults.h"

#include <algorithm>

#include "floe/common/log.h"
#include "floe/pipeline/topic_state.h"
#include "floe/storage/file_io.h"
#include "floe/table/commit_driver.h"

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

void DiscardUncommitted(TopicState& ts, storage::FileIO* io) {
  if (ts.writer) table::DeleteAll(*io, ts.writer->Abort());
  if (ts.dead_letters.writer) table::DeleteAll(*io, ts.dead_letters.writer->Abort());
  ts.dead_letters.writer.reset();
  ts.dead_letters.buffered = 0;
  ts.dead_letters.loaded = false;
  ts.ResetForReread();
}

}  // namespace floe::pipeline
