#include "floe/catalog/references.h"

#include <string_view>
#include <variant>

#include "floe/iceberg/manifest.h"

namespace floe::catalog {

bool LiesUnder(const std::string& uri, const std::string& root) {
  if (root.empty() || uri.size() <= root.size() + 1) return false;
  if (uri.compare(0, root.size(), root) != 0 || uri[root.size()] != '/') return false;
  size_t start = root.size() + 1;
  while (start <= uri.size()) {
    size_t end = uri.find('/', start);
    if (end == std::string::npos) end = uri.size();
    std::string_view seg(uri.data() + start, end - start);
    if (seg.empty() || seg == "." || seg == "..") return false;
    start = end + 1;
  }
  return true;
}

bool Unreadable(const Status& st) {
  ErrorKind kind = KindOf(st);
  return kind == ErrorKind::kNotFound || kind == ErrorKind::kInvalidInput ||
         st.IsInvalid() || st.IsTypeError() || st.IsNotImplemented();
}

Status CollectReferences(storage::FileIO& io, const iceberg::TableMetadata& md,
                         const std::string& root, std::set<std::string>* out,
                         size_t* skipped) {
  for (const auto& entry : md.metadata_log) out->insert(entry.metadata_file);
  for (const auto& snap : md.snapshots) {
    out->insert(snap.manifest_list);
    if (!root.empty() && !LiesUnder(snap.manifest_list, root)) {
      ++*skipped;
      continue;
    }
    auto manifests = iceberg::ReadManifestList(io, snap.manifest_list);
    if (!manifests.ok()) {
      if (Unreadable(manifests.status())) continue;
      return manifests.status();
    }
    for (const auto& m : *manifests) {
      out->insert(m.manifest_path);
      if (!root.empty() && !LiesUnder(m.manifest_path, root)) {
        ++*skipped;
        continue;
      }
      auto entries = iceberg::ReadManifestEntries(io, m);
      if (!entries.ok()) {
        if (Unreadable(entries.status())) continue;
        return entries.status();
      }
      for (const auto& e : *entries) out->insert(e.data_file.file_path);
    }
  }
  return Status::OK();
}

namespace {

// The manifest paths of snapshot `id` in `base` (empty when it has none or they cannot be
// read: then every manifest of the new snapshot counts as new, which only costs reads).
Result<std::set<std::string>> ParentManifests(storage::FileIO& io,
                                              const iceberg::TableMetadata* base,
                                              std::optional<int64_t> id) {
  std::set<std::string> out;
  if (!base || !id) return out;
  const iceberg::Snapshot* parent = base->SnapshotById(*id);
  if (!parent) return out;
  auto manifests = iceberg::ReadManifestList(io, parent->manifest_list);
  if (!manifests.ok()) {
    if (Unreadable(manifests.status())) return out;
    return manifests.status();
  }
  for (const auto& m : *manifests) out.insert(m.manifest_path);
  return out;
}

}  // namespace

Result<std::vector<std::string>> ForeignReferencesAdded(
    storage::FileIO& io, const iceberg::TableMetadata* base,
    const std::vector<iceberg::TableUpdate>& updates, const std::string& root) {
  std::vector<std::string> out;
  for (const auto& u : updates) {
    const auto* add = std::get_if<iceberg::update::AddSnapshot>(&u);
    if (!add) continue;
    auto manifests = iceberg::ReadManifestList(io, add->snapshot.manifest_list);
    if (!manifests.ok()) {
      if (Unreadable(manifests.status())) continue;
      return manifests.status();
    }
    FLOE_ASSIGN_OR_RAISE(auto inherited,
                         ParentManifests(io, base, add->snapshot.parent_snapshot_id));
    for (const auto& m : *manifests) {
      if (inherited.count(m.manifest_path)) continue;
      if (!LiesUnder(m.manifest_path, root)) out.push_back(m.manifest_path);
      auto entries = iceberg::ReadManifestEntries(io, m);
      if (!entries.ok()) {
        if (Unreadable(entries.status())) continue;
        return entries.status();
      }
      for (const auto& e : *entries) {
        if (e.is_live() && !LiesUnder(e.data_file.file_path, root)) {
          out.push_back(e.data_file.file_path);
        }
      }
    }
  }
  return out;
}

}  // namespace floe::catalog
