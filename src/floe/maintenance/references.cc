#include "floe/maintenance/references.h"

#include <nlohmann/json.hpp>

#include "floe/common/util.h"
#include "floe/delta/log.h"
#include "floe/iceberg/manifest.h"
#include "floe/iceberg/snapshot_producer.h"
#include "floe/storage/file_io.h"

namespace floe::maintenance {
namespace {

// Every string in a JSON text that looks like a file URI (statistics files and whatever
// else another writer recorded in fields Floe does not model).
void CollectUris(const nlohmann::json& j, std::set<std::string>* out) {
  if (j.is_string()) {
    const auto& s = j.get_ref<const std::string&>();
    if (s.find("://") != std::string::npos || s.starts_with("file:")) {
      out->insert(CanonicalUri(s));
    }
  } else if (j.is_structured()) {
    for (const auto& item : j) CollectUris(item, out);
  }
}

void CollectExtra(const iceberg::ExtraFields& extra, std::set<std::string>* out) {
  for (const auto& [name, text] : extra) {
    auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (!j.is_discarded()) CollectUris(j, out);
  }
}

}  // namespace

std::string CanonicalUri(const std::string& uri) {
  if (uri.starts_with("/")) return CanonicalUri("file://" + uri);  // a bare local path
  if (uri.starts_with("file://localhost/")) {
    return CanonicalUri("file:///" + uri.substr(17));
  }
  if (uri.starts_with("file:")) {
    std::string path = "/";
    for (char c : std::string_view(uri).substr(5)) {
      if (c == '/' && path.back() == '/') continue;
      path.push_back(c);
    }
    return "file://" + path;
  }
  for (std::string_view scheme : {"s3a://", "s3n://"}) {
    if (uri.starts_with(scheme)) return "s3://" + uri.substr(scheme.size());
  }
  return uri;
}

namespace {

// Adds what `snapshots` reach to refs->uris and counts them: their manifest lists, the
// manifests in those and the files in those, and URIs in their verbatim fields.
// `live_only`: files of DELETED entries are left out (see References).
Status WalkSnapshots(storage::FileIO& io,
                     const std::vector<const iceberg::Snapshot*>& snapshots,
                     bool live_only, const std::atomic<bool>* cancel,
                     std::set<std::string>* seen, References* refs) {
  auto add = [&](const std::string& uri) { refs->uris.insert(CanonicalUri(uri)); };
  std::set<std::string> own_seen;
  std::set<std::string>& manifests_seen = seen != nullptr ? *seen : own_seen;
  std::set<std::string> data_files;
  for (const iceberg::Snapshot* snapshot : snapshots) {
    ++refs->snapshots;
    CollectExtra(snapshot->extra_fields, &refs->uris);
    if (snapshot->manifest_list.empty()) {
      return InvalidInput("snapshot " + std::to_string(snapshot->snapshot_id) +
                          " has no manifest list (a v1 inline manifests list): its files "
                          "are unknown, nothing is deleted");
    }
    add(snapshot->manifest_list);
    auto manifests = iceberg::ReadManifestList(io, snapshot->manifest_list);
    if (!manifests.ok()) {
      return WithContext(manifests.status(), "manifest list of snapshot " +
                                                 std::to_string(snapshot->snapshot_id));
    }
    for (const auto& manifest : *manifests) {
      if (!manifests_seen.insert(manifest.manifest_path).second) continue;
      if (cancel != nullptr && cancel->load()) {
        return Status::Cancelled("reading references stopped (floe is stopping)");
      }
      add(manifest.manifest_path);
      FLOE_ASSIGN_OR_RAISE(auto entries, iceberg::ReadManifestEntries(io, manifest));
      for (const auto& entry : entries) {
        if (live_only && !entry.is_live()) continue;
        const std::string uri = CanonicalUri(entry.data_file.file_path);
        if (data_files.insert(uri).second) refs->uris.insert(uri);
      }
    }
  }
  refs->manifests = static_cast<int64_t>(manifests_seen.size());
  refs->data_files = static_cast<int64_t>(data_files.size());
  return Status::OK();
}

}  // namespace

Result<std::set<std::string>> SnapshotFiles(
    storage::FileIO& io, const std::vector<const iceberg::Snapshot*>& snapshots,
    const std::atomic<bool>* cancel, std::set<std::string>* seen_manifests) {
  References refs;
  FLOE_RETURN_NOT_OK(
      WalkSnapshots(io, snapshots, /*live_only=*/false, cancel, seen_manifests, &refs));
  return std::move(refs.uris);
}

Result<References> CollectReferences(storage::FileIO& io,
                                     const std::string& metadata_location,
                                     const iceberg::TableMetadata& metadata,
                                     int64_t now_ms, const std::atomic<bool>* cancel) {
  References refs;
  auto add = [&](const std::string& uri) { refs.uris.insert(CanonicalUri(uri)); };
  add(metadata_location);
  for (const auto& entry : metadata.metadata_log) add(entry.metadata_file);
  CollectExtra(metadata.extra_fields, &refs.uris);
  std::vector<const iceberg::Snapshot*> snapshots;
  for (const auto& snapshot : metadata.snapshots) snapshots.push_back(&snapshot);
  FLOE_RETURN_NOT_OK(
      WalkSnapshots(io, snapshots, /*live_only=*/true, cancel, nullptr, &refs));

  // The same files serve Delta: its log may still name files Iceberg no longer does
  // (time travel inside Delta's retention).
  const std::string root = TrimTrailingSlashes(metadata.location);
  delta::DeltaLogOptions options;
  options.tombstone_retention_ms = iceberg::RetentionPolicyOf(metadata).max_age_ms;
  delta::DeltaLog log(&io, root, options);
  FLOE_ASSIGN_OR_RAISE(auto delta_paths, log.ReferencedPaths(now_ms));
  refs.delta_paths = static_cast<int64_t>(delta_paths.size());
  for (const auto& path : delta_paths) {
    auto decoded = PercentDecode(path);
    if (!decoded) {
      return InvalidInput("Delta log of " + root + " names the file '" + path +
                          "', which is not percent-encoded correctly");
    }
    const bool absolute =
        decoded->find("://") != std::string::npos || decoded->starts_with("file:");
    add(absolute ? *decoded : root + "/" + *decoded);
  }
  return refs;
}

}  // namespace floe::maintenance
