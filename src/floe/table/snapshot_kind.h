// What a Floe snapshot did, known from the snapshot alone: whoever reads the table later
// (the Delta mirror, maintenance, a restart) learns it from the summary, whoever wrote
// it. Every SnapshotUpdate names its kind (SnapshotUpdate::mark); the commit driver
// records it in the snapshot's summary, one key per kind, its value a note for people.
#pragma once

#include <map>
#include <string>

namespace floe::iceberg {
struct Snapshot;
}

namespace floe::table {

enum class SnapshotKind {
  kAppend,        // ingested records; moves the Kafka positions
  kReplay,        // dead letters replayed into the table (replay.h)
  kCompaction,    // files rewritten into fewer, the same rows (maintenance/compaction.h)
  kRowRetention,  // rows past the retention removed (maintenance/row_retention.h)
};

struct SnapshotMark {
  SnapshotKind kind = SnapshotKind::kAppend;
  std::string note;  // "12 files", the retention's cutoff: for people reading history
};

// Records `mark` in a snapshot's summary (an append needs no key).
void MarkSummary(const SnapshotMark& mark, std::map<std::string, std::string>* summary);
// The kind a snapshot's summary records (kAppend when it records none).
SnapshotKind SnapshotKindOf(const iceberg::Snapshot& snapshot);

// A snapshot of every kind but kAppend records its parent's positions: Delta has it when
// it has its files.
inline bool MovesPositions(SnapshotKind kind) { return kind == SnapshotKind::kAppend; }
// Compaction and row retention remove files as well as add them.
inline bool RewritesFiles(SnapshotKind kind) {
  return kind == SnapshotKind::kCompaction || kind == SnapshotKind::kRowRetention;
}

}  // namespace floe::table
