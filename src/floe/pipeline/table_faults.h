// TableFaults: what a fault of one table's storage or catalog does to its topic, so that
// one table's trouble never stops the daemon (ARCHITECTURE.md §2, "Faults"). A fault that
// time can fix (storage or catalog unavailable, disk full, read-only catalog, an unknown
// commit outcome) pauses the topic with exponential backoff; one that needs an operator
// (the table was dropped, its metadata is corrupt, its schema was changed beyond what
// Floe writes) suspends it. Either way the topic's uncommitted files are deleted (unless
// a commit may reference them) and, when it resumes, it reads again from the positions
// its table records: nothing is lost and nothing is written twice.
//
// Threading: used by the pipeline thread only.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "floe/common/status.h"

namespace floe::storage {
class FileIO;
}

namespace floe::pipeline {

struct TopicState;

// First pause after a fault, and the cap the doubling stops at.
inline constexpr int64_t kFirstPauseMs = 500;
inline constexpr int64_t kMaxPauseMs = 30000;

// True when waiting can fix the fault (retriable, unknown outcome, lost races).
bool PausesTopic(const Status& fault);

// The next pause for the topic (kFirstPauseMs, doubling up to kMaxPauseMs).
int64_t NextPauseMs(TopicState& ts);

// Drops the topic's writer, deleting every file it wrote that no commit took (the
// partial file of a failed write included), and forgets the table and positions so they
// are loaded again from the table.
void DiscardUncommitted(TopicState& ts, storage::FileIO* io);

}  // namespace floe::pipeline
