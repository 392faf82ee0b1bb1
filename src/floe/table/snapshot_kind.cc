#include "floe/table/snapshot_kind.h"

#include "floe/iceberg/table_metadata.h"

namespace floe::table {
namespace {

// The summary keys: part of the table format Floe writes (tables written by earlier
// versions carry them), never renamed.
constexpr const char* kReplayKey = "floe.dlq-replay";
constexpr const char* kCompactionKey = "floe.compaction";
constexpr const char* kRowRetentionKey = "floe.row-retention";

const char* KeyOf(SnapshotKind kind) {
  switch (kind) {
    case SnapshotKind::kAppend:
      return nullptr;
    case SnapshotKind::kReplay:
      return kReplayKey;
    case SnapshotKind::kCompaction:
      return kCompactionKey;
    case SnapshotKind::kRowRetention:
      return kRowRetentionKey;
  }
  return nullptr;
}

}  // namespace

void MarkSummary(const SnapshotMark& mark, std::map<std::string, std::string>* summary) {
  const char* key = KeyOf(mark.kind);
  if (key != nullptr) (*summary)[key] = mark.note.empty() ? "true" : mark.note;
}

SnapshotKind SnapshotKindOf(const iceberg::Snapshot& snapshot) {
  for (SnapshotKind kind :
       {SnapshotKind::kRowRetention, SnapshotKind::kCompaction, SnapshotKind::kReplay}) {
    if (snapshot.summary.count(KeyOf(kind))) return kind;
  }
  return SnapshotKind::kAppend;
}

}  // namespace floe::table
