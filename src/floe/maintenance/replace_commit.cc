#include "floe/maintenance/replace_commit.h"

#include "floe/common/crash.h"
#include "floe/common/log.h"
#include "floe/iceberg/replace_files.h"
#include "floe/table/delta_mirror.h"
#include "floe/table/positions.h"

namespace floe::maintenance {
namespace {

constexpr int kMaxAttempts = 10;

}  // namespace

std::string RewriteBlocker(const iceberg::TableMetadata& md) {
  const iceberg::Snapshot* current = md.CurrentSnapshot();
  if (current == nullptr || md.CurrentSchema() == nullptr) return "no snapshot yet";
  auto deletes = current->summary.find("total-delete-files");
  if (deletes != current->summary.end() && deletes->second != "0") {
    return "the table has delete files";
  }
  return "";
}

void DeleteAll(storage::FileIO& io, const std::vector<std::string>& uris) {
  for (const auto& uri : uris) {
    Status st = io.Delete(uri);
    if (!st.ok()) FLOE_LOG_WARN("could not delete {}: {}", uri, st.message());
  }
}

void CopyParentPositions(const iceberg::TableMetadata& base,
                         std::vector<iceberg::TableUpdate>* updates) {
  const iceberg::Snapshot* parent = base.CurrentSnapshot();
  if (parent == nullptr) return;
  auto it = parent->summary.find(table::kOffsetsKey);
  if (it == parent->summary.end()) return;
  for (auto& u : *updates) {
    if (auto* add = std::get_if<iceberg::update::AddSnapshot>(&u)) {
      add->snapshot.summary[table::kOffsetsKey] = it->second;
    }
  }
}

Result<ReplaceOutcome> CommitReplace(catalog::Catalog& catalog, storage::FileIO& io,
                                     const ReplaceRequest& req, int64_t now_ms,
                                     std::vector<std::string> written) {
  ReplaceOutcome out;
  auto made =
      iceberg::ReplaceFiles::Make(&io, req.base, req.removed, req.added, req.summary);
  if (!made.ok()) {
    DeleteAll(io, written);
    return made.status();
  }
  auto& replace = *made;
  for (const auto& f : replace->written_files()) written.push_back(f);
  iceberg::TableMetadata base = req.base;
  bool unknown = false;  // an attempt's outcome was unknown: its files may be referenced
  for (;;) {
    ++out.attempts;
    auto pending = replace->Prepare(base, now_ms);
    if (!pending.ok()) {
      if (!unknown) DeleteAll(io, written);
      if (KindOf(pending.status()) == ErrorKind::kConflict) {
        out.gave_up = "its input changed: " + pending.status().message();
        return out;
      }
      return pending.status();
    }
    CopyParentPositions(base, &pending->updates);
    CrashPoint(req.before_commit);
    auto committed = catalog.CommitTable(
        {req.ident, pending->requirements, pending->updates}, catalog::Writer::kFloe);
    if (committed.ok()) {
      out.snapshot_id = replace->snapshot_id();
      break;
    }
    const ErrorKind kind = KindOf(committed.status());
    unknown |= kind == ErrorKind::kStateUnknown;
    auto reloaded = catalog.LoadTable(req.ident);
    if (!reloaded.ok()) return reloaded.status();  // files left: orphans at worst
    if (replace->IsCommittedIn(reloaded->metadata)) {
      out.snapshot_id = replace->snapshot_id();
      break;
    }
    if (kind != ErrorKind::kStateUnknown) DeleteAll(io, pending->written_files);
    if ((kind != ErrorKind::kConflict && kind != ErrorKind::kStateUnknown) ||
        out.attempts >= kMaxAttempts) {
      if (!unknown) DeleteAll(io, written);
      return committed.status();
    }
    base = std::move(reloaded->metadata);
  }
  CrashPoint(req.after_commit);
  auto formats = req.base.properties.find(catalog::kFormatsProperty);
  if (formats != req.base.properties.end() &&
      formats->second.find("delta") != std::string::npos) {
    table::DeltaMirror mirror(&catalog, &io);
    auto synced = mirror.Sync(req.ident);
    if (!synced.ok()) out.delta_error = synced.status().message();
  }
  return out;
}

}  // namespace floe::maintenance
