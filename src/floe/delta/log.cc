#include "floe/delta/log.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <set>

#include "floe/common/log.h"
#include "floe/delta/checkpoint_internal.h"
#include "floe/delta/json_internal.h"
#include "floe/storage/file_io.h"

namespace floe::delta {

namespace {

constexpr char kLastCheckpoint[] = "_last_checkpoint";
constexpr std::string_view kJsonSuffix = ".json";
constexpr std::string_view kCheckpointSuffix = ".checkpoint.parquet";
constexpr std::string_view kCrcSuffix = ".crc";

std::string Padded(int64_t version) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%020" PRId64, version);
  return buf;
}

// "<20 digits><suffix>" -> version.
std::optional<int64_t> ParseVersioned(std::string_view name, std::string_view suffix) {
  if (name.size() != 20 + suffix.size() || name.substr(20) != suffix) return std::nullopt;
  int64_t v = 0;
  for (char c : name.substr(0, 20)) {
    if (c < '0' || c > '9') return std::nullopt;
    if (v > (INT64_MAX - (c - '0')) / 10) return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return v;
}

std::string_view BaseName(std::string_view uri) {
  size_t slash = uri.rfind('/');
  return slash == std::string_view::npos ? uri : uri.substr(slash + 1);
}

}  // namespace

// ---- Snapshot
// ---------------------------------------------------------------------------

std::optional<int64_t> Snapshot::TxnVersion(const std::string& app_id) const {
  auto it = txns.find(app_id);
  if (it == txns.end()) return std::nullopt;
  return it->second.version;
}

void Snapshot::Apply(int64_t new_version, const std::vector<Action>& actions) {
  for (const Action& a : actions) {
    if (const auto* p = std::get_if<Protocol>(&a)) {
      protocol = *p;
    } else if (const auto* m = std::get_if<Metadata>(&a)) {
      metadata = *m;
    } else if (const auto* t = std::get_if<Txn>(&a)) {
      txns[t->app_id] = *t;
    } else if (const auto* add = std::get_if<AddFile>(&a)) {
      tombstones.erase(add->path);
      files[add->path] = *add;
    } else if (const auto* rm = std::get_if<RemoveFile>(&a)) {
      files.erase(rm->path);
      tombstones[rm->path] = *rm;
    }
  }
  version = new_version;
}

// ---- DeltaLog
// ---------------------------------------------------------------------------

DeltaLog::DeltaLog(storage::FileIO* io, std::string table_root_uri,
                   DeltaLogOptions options)
    : io_(io), root_(std::move(table_root_uri)), options_(options) {
  while (root_.size() > 1 && root_.back() == '/') root_.pop_back();
  log_dir_ = root_ + "/_delta_log/";
  if (options_.checkpoint_interval <= 0) options_.checkpoint_interval = 10;
}

std::string DeltaLog::CommitUri(int64_t version) const {
  return log_dir_ + Padded(version) + std::string(kJsonSuffix);
}

std::string DeltaLog::CheckpointUri(int64_t version) const {
  return log_dir_ + Padded(version) + std::string(kCheckpointSuffix);
}

std::string DeltaLog::LastCheckpointUri() const { return log_dir_ + kLastCheckpoint; }

bool DeltaLog::CheckpointDue(int64_t version) const {
  return version > 0 && version % options_.checkpoint_interval == 0;
}

Result<std::optional<int64_t>> DeltaLog::ReadLastCheckpointVersion() const {
  auto text = io_->Read(LastCheckpointUri());
  if (!text.ok()) {
    if (KindOf(text.status()) == ErrorKind::kNotFound) return std::optional<int64_t>();
    return text.status();
  }
  const std::string what = LastCheckpointUri();
  FLOE_ASSIGN_OR_RAISE(auto j, internal::Parse(*text, what));
  FLOE_ASSIGN_OR_RAISE(int64_t version, json::GetInt64(j, "version", what.c_str()));
  if (json::Find(j, "parts")) {
    return InvalidInput(what +
                        " names a multi-part checkpoint, which Floe does not read");
  }
  return std::optional<int64_t>(version);
}

Result<std::optional<int64_t>> DeltaLog::FindCheckpoint() const {
  FLOE_ASSIGN_OR_RAISE(auto hinted, ReadLastCheckpointVersion());
  if (hinted) {
    FLOE_ASSIGN_OR_RAISE(bool exists, io_->Exists(CheckpointUri(*hinted)));
    if (exists) return hinted;
  }
  // No hint (or a stale one): the newest classic checkpoint in a listing, if we can list.
  auto listing = io_->List(log_dir_);
  if (!listing.ok()) {
    if (listing.status().IsNotImplemented()) return std::optional<int64_t>();
    return listing.status();
  }
  std::optional<int64_t> newest;
  for (const auto& f : *listing) {
    if (auto v = ParseVersioned(BaseName(f.uri), kCheckpointSuffix)) {
      if (!newest || *v > *newest) newest = v;
    }
  }
  return newest;
}

Result<Snapshot> DeltaLog::ReadSnapshot() const {
  Snapshot s;
  FLOE_ASSIGN_OR_RAISE(auto checkpoint, FindCheckpoint());
  int64_t next = 0;
  if (checkpoint) {
    const std::string uri = CheckpointUri(*checkpoint);
    FLOE_ASSIGN_OR_RAISE(std::string bytes, io_->Read(uri));
    FLOE_ASSIGN_OR_RAISE(auto actions, internal::DecodeCheckpoint(bytes, uri));
    s.Apply(*checkpoint, actions);
    s.checkpoint_version = *checkpoint;
    next = *checkpoint + 1;
  }
  while (true) {
    const std::string uri = CommitUri(next);
    auto text = io_->Read(uri);
    if (!text.ok()) {
      if (KindOf(text.status()) == ErrorKind::kNotFound) break;
      return text.status();
    }
    auto actions = DecodeActions(*text);
    if (!actions.ok()) return WithContext(actions.status(), uri);
    s.Apply(next, *actions);
    ++next;
  }
  if (s.version < 0) {
    // No version 0 and no checkpoint: a new table, unless files show that the start of
    // the log was cleaned up while _last_checkpoint was being replaced.
    auto listing = io_->List(log_dir_);
    if (listing.ok()) {
      for (const auto& f : *listing) {
        std::string_view name = BaseName(f.uri);
        if (ParseVersioned(name, kJsonSuffix) ||
            ParseVersioned(name, kCheckpointSuffix)) {
          return InvalidInput("Delta log " + log_dir_ + " has " + std::string(name) +
                              " but neither version 0 nor a checkpoint to start from");
        }
      }
    } else if (!listing.status().IsNotImplemented()) {
      return listing.status();
    }
    return s;
  }
  if (!s.protocol || !s.metadata) {
    return InvalidInput("Delta log " + log_dir_ + " at version " +
                        std::to_string(s.version) + " has no protocol or metaData");
  }
  return s;
}

Status DeltaLog::Commit(int64_t version, const std::vector<Action>& actions) const {
  const std::string uri = CommitUri(version);
  if (version < 0) return Status::Invalid("Delta version must be >= 0, got ", version);
  int protocols = 0, metadatas = 0;
  std::set<std::string> app_ids, adds, removes;
  for (const Action& a : actions) {
    if (std::holds_alternative<Protocol>(a)) ++protocols;
    if (std::holds_alternative<Metadata>(a)) ++metadatas;
    if (const auto* t = std::get_if<Txn>(&a); t && !app_ids.insert(t->app_id).second) {
      return Status::Invalid(uri, ": two txn actions for appId ", t->app_id);
    }
    if (const auto* f = std::get_if<AddFile>(&a); f && !adds.insert(f->path).second) {
      return Status::Invalid(uri, ": two add actions for ", f->path);
    }
    if (const auto* f = std::get_if<RemoveFile>(&a);
        f && !removes.insert(f->path).second) {
      return Status::Invalid(uri, ": two remove actions for ", f->path);
    }
  }
  if (protocols > 1 || metadatas > 1) {
    return Status::Invalid(uri, ": at most one protocol and one metaData per version");
  }
  if (version == 0 && (protocols != 1 || metadatas != 1)) {
    return Status::Invalid(uri, ": version 0 needs a protocol and a metaData action");
  }
  Status st = io_->WriteNew(uri, EncodeActions(actions));
  if (KindOf(st) == ErrorKind::kConflict) {
    return Conflict(
        "Delta version " + std::to_string(version) + " of " + root_ +
        " already exists (another writer committed it): re-read the log, check "
        "the txn versions, retry at the next version");
  }
  return st;
}

Status DeltaLog::UpdateLastCheckpoint(int64_t version, int64_t rows, int64_t bytes,
                                      int64_t num_adds) const {
  internal::Json j = internal::Json::object();
  j["version"] = version;
  j["size"] = rows;
  j["sizeInBytes"] = bytes;
  j["numOfAddFiles"] = num_adds;
  const std::string text = internal::Dump(j);
  FLOE_ASSIGN_OR_RAISE(auto current, ReadLastCheckpointVersion());
  if (current && *current >= version) return Status::OK();  // never move it backwards
  // A hint, replaced whole: readers see the old or the new one. Two checkpointers racing
  // may leave the older version named; readers then replay a few more entries.
  return io_->Overwrite(LastCheckpointUri(), text);
}

Status DeltaLog::WriteCheckpoint(const Snapshot& snapshot, int64_t now_ms) const {
  if (snapshot.version < 0)
    return Status::Invalid("cannot checkpoint a table with no version");
  FLOE_ASSIGN_OR_RAISE(
      auto encoded,
      internal::EncodeCheckpoint(snapshot, now_ms, options_.tombstone_retention_ms));
  const std::string uri = CheckpointUri(snapshot.version);
  Status st = io_->WriteNew(uri, encoded.bytes);
  if (!st.ok() && KindOf(st) != ErrorKind::kConflict) return st;
  int64_t size = static_cast<int64_t>(encoded.bytes.size());
  if (!st.ok()) {
    // Already checkpointed (a retry, or a racing writer): same state, keep that file.
    FLOE_ASSIGN_OR_RAISE(size, io_->Size(uri));
  }
  return UpdateLastCheckpoint(snapshot.version, encoded.rows, size, encoded.num_adds);
}

Result<int64_t> DeltaLog::CommitNext(Snapshot* snapshot,
                                     const std::vector<Action>& actions,
                                     int64_t now_ms) const {
  const int64_t version = snapshot->version + 1;
  FLOE_RETURN_NOT_OK(Commit(version, actions));
  snapshot->Apply(version, actions);
  if (CheckpointDue(version)) {
    Status st = WriteCheckpoint(*snapshot, now_ms);
    if (!st.ok()) {
      FLOE_LOG_WARN(
          "Delta checkpoint of {} at version {} failed (the commit stands; the "
          "next due version checkpoints again): {}",
          root_, version, st.ToString());
    }
  }
  return version;
}

Result<std::set<std::string>> DeltaLog::ReferencedPaths(int64_t now_ms) const {
  FLOE_ASSIGN_OR_RAISE(auto listing, io_->List(log_dir_));
  for (const auto& f : listing) {
    std::string_view name = BaseName(f.uri);
    if (!ParseVersioned(name, kCheckpointSuffix) &&
        (name.find(".checkpoint") != std::string_view::npos ||
         name.ends_with(".parquet"))) {
      return InvalidInput("Delta log " + log_dir_ + " has " + std::string(name) +
                          ", a checkpoint kind Floe does not read: its references are "
                          "unknown");
    }
  }
  FLOE_ASSIGN_OR_RAISE(Snapshot snap, ReadSnapshot());
  std::set<std::string> paths;
  for (const auto& [path, add] : snap.files) paths.insert(path);
  const int64_t cutoff = now_ms - options_.tombstone_retention_ms;
  for (const auto& [path, remove] : snap.tombstones) {
    if (!remove.deletion_timestamp || *remove.deletion_timestamp >= cutoff) {
      paths.insert(path);
    }
  }
  return paths;
}

Result<CleanupResult> DeltaLog::Cleanup(int64_t retention_ms, int64_t now_ms) const {
  CleanupResult result;
  FLOE_ASSIGN_OR_RAISE(auto listing, io_->List(log_dir_));
  std::map<int64_t, storage::FileInfo> commits, checkpoints, crcs;
  for (auto& f : listing) {
    std::string_view name = BaseName(f.uri);
    if (auto v = ParseVersioned(name, kJsonSuffix)) {
      commits[*v] = f;
    } else if (auto c = ParseVersioned(name, kCheckpointSuffix)) {
      checkpoints[*c] = f;
    } else if (auto r = ParseVersioned(name, kCrcSuffix)) {
      crcs[*r] = f;
    }
  }
  const int64_t cutoff = now_ms - retention_ms;
  std::optional<int64_t> cutoff_commit;
  for (const auto& [v, f] : commits) {
    if (f.mtime_ms <= cutoff) cutoff_commit = v;  // ascending: the newest wins
  }
  if (!cutoff_commit) return result;
  // Readers follow _last_checkpoint: never delete the checkpoint it names.
  FLOE_ASSIGN_OR_RAISE(auto last, ReadLastCheckpointVersion());
  if (!last) return result;
  const int64_t bound = std::min(*cutoff_commit, *last);
  std::optional<int64_t> keep;
  for (const auto& [v, f] : checkpoints) {
    if (v <= bound) keep = v;
  }
  if (!keep) return result;
  result.oldest_kept_version = *keep;
  // Oldest first, a version's checkpoint before its JSON: an interrupted cleanup never
  // leaves a checkpoint whose following versions are gone.
  struct Doomed {
    int64_t version;
    int order;  // 0 checkpoint, 1 crc, 2 commit
    const storage::FileInfo* file;
  };
  std::vector<Doomed> doomed;
  for (int order = 0; order < 3; ++order) {
    const auto& files = order == 0 ? checkpoints : order == 1 ? crcs : commits;
    for (const auto& [v, f] : files) {
      if (v >= *keep) break;
      if (f.mtime_ms <= cutoff) doomed.push_back({v, order, &f});
    }
  }
  std::sort(doomed.begin(), doomed.end(), [](const Doomed& a, const Doomed& b) {
    return a.version != b.version ? a.version < b.version : a.order < b.order;
  });
  for (const Doomed& d : doomed) {
    FLOE_RETURN_NOT_OK(io_->Delete(d.file->uri));
    if (d.order == 0) ++result.deleted_checkpoints;
    if (d.order == 2) ++result.deleted_commits;
  }
  return result;
}

}  // namespace floe::delta
