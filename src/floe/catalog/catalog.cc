#include "floe/catalog/catalog.h"

#include <algorithm>
#include <set>
#include <string_view>
#include <utility>

#include "floe/catalog/references.h"
#include "floe/common/crash.h"
#include "floe/common/log.h"
#include "floe/common/util.h"
#include "floe/iceberg/manifest.h"
#include "floe/iceberg/metadata_io.h"
#include "floe/storage/file_io.h"

namespace floe::catalog {
namespace {

// Lost compare-and-swaps re-checked before giving up. Each retry re-validates the
// requirements against the new current metadata, so a stale base still fails with 409.
constexpr int kMaxSwapRetries = 10;

std::string NamespaceName(const Namespace& ns) {
  return TableIdent{ns, ""}.NamespaceString();
}

bool IsPrefix(const Namespace& prefix, const Namespace& ns) {
  return prefix.size() <= ns.size() &&
         std::equal(prefix.begin(), prefix.end(), ns.begin());
}

Status ValidateNamespace(const Namespace& ns) {
  if (ns.empty()) return InvalidInput("a namespace needs at least one level");
  // The table-name rules apply to every level (no '.', '/', '\\', control characters).
  return ValidateNamespaceLevels(ns);
}

// A failure to read the metadata file a table's pointer names. Storage faults keep their
// kind (a kRetriable outage is retried by the pipeline and is a 503 over REST); a missing
// or corrupt file is a broken table, a server-side fault: neither "no such table" (the
// committer would create the table again) nor a bad request.
Status MetadataReadError(const Status& st, const TableIdent& ident,
                         const std::string& location) {
  std::string context =
      "table " + ident.ToString() + ": cannot read its metadata " + location;
  ErrorKind kind = KindOf(st);
  if (kind == ErrorKind::kNotFound || kind == ErrorKind::kInvalidInput) {
    return Internal(context + ": " + st.message());
  }
  return WithContext(st, context);
}

bool MirrorsDelta(const iceberg::TableMetadata& md) {
  auto it = md.properties.find(kFormatsProperty);
  return it != md.properties.end() && it->second.find("delta") != std::string::npos;
}

// Updates that change what the table's data is, or Floe's bookkeeping of it.
std::optional<std::string> DataChange(const std::vector<iceberg::TableUpdate>& updates) {
  for (const auto& u : updates) {
    if (std::holds_alternative<iceberg::update::AddSnapshot>(u) ||
        std::holds_alternative<iceberg::update::RemoveSnapshots>(u) ||
        std::holds_alternative<iceberg::update::SetSnapshotRef>(u) ||
        std::holds_alternative<iceberg::update::RemoveSnapshotRef>(u) ||
        std::holds_alternative<iceberg::update::SetLocation>(u)) {
      return std::string(iceberg::UpdateAction(u));
    }
    if (const auto* p = std::get_if<iceberg::update::SetProperties>(&u)) {
      for (const auto& [k, v] : p->updates) {
        if (k.rfind("floe.", 0) == 0) return "set-properties " + k;
      }
    }
    if (const auto* p = std::get_if<iceberg::update::RemoveProperties>(&u)) {
      for (const auto& k : p->removals) {
        if (k.rfind("floe.", 0) == 0) return "remove-properties " + k;
      }
    }
  }
  return std::nullopt;
}

bool IsFloeKey(const std::string& key) { return key.rfind(kFloeKeyPrefix, 0) == 0; }

// The first change of a Floe-owned key in `updates` ("set-properties floe.x", ...) and
// the key, or nullopt. Floe's Kafka positions live in these keys: another writer that
// moved them would make Floe re-read (duplicates) or skip (loss) records.
std::optional<std::pair<std::string, std::string>> FloeKeyChange(
    const std::vector<iceberg::TableUpdate>& updates) {
  for (const auto& u : updates) {
    if (const auto* p = std::get_if<iceberg::update::SetProperties>(&u)) {
      for (const auto& [k, v] : p->updates) {
        if (IsFloeKey(k)) return std::pair{"set-properties " + k, k};
      }
    }
    if (const auto* p = std::get_if<iceberg::update::RemoveProperties>(&u)) {
      for (const auto& k : p->removals) {
        if (IsFloeKey(k)) return std::pair{"remove-properties " + k, k};
      }
    }
    if (const auto* p = std::get_if<iceberg::update::AddSnapshot>(&u)) {
      for (const auto& [k, v] : p->snapshot.summary) {
        if (IsFloeKey(k)) return std::pair{"add-snapshot with summary key " + k, k};
      }
    }
  }
  return std::nullopt;
}

Status FloeKeyForbidden(const TableIdent& ident, const std::string& change,
                        const std::string& key) {
  return Forbidden(
      "table " + ident.ToString() + ": '" + key +
      "' is owned by Floe and read-only to other writers (refused: " + change +
      "). Floe's Kafka positions move only by an operator action: `floe "
      "positions set " +
      ident.ToString() + " --topic T --partition P --offset N` (docs/security.md)");
}

bool SetsLocation(const std::vector<iceberg::TableUpdate>& updates) {
  return std::any_of(updates.begin(), updates.end(), [](const auto& u) {
    return std::holds_alternative<iceberg::update::SetLocation>(u);
  });
}

// One location belongs to one table: equal, inside or containing.
bool Overlaps(const std::string& a, const std::string& b) {
  return a == b || LiesUnder(a, b) || LiesUnder(b, a);
}

// The table location a metadata file that cannot be read most likely belongs to:
// ".../<table>/metadata/<file>" -> ".../<table>", else the file's directory.
std::string LocationFromMetadataPath(const std::string& metadata_location) {
  std::string dir = metadata_location.substr(0, metadata_location.rfind('/'));
  constexpr std::string_view kMeta = "/metadata";
  if (dir.size() > kMeta.size() &&
      dir.compare(dir.size() - kMeta.size(), kMeta.size(), kMeta) == 0) {
    dir.resize(dir.size() - kMeta.size());
  }
  return dir;
}

bool WantsCreate(const std::vector<iceberg::TableRequirement>& reqs) {
  return std::any_of(reqs.begin(), reqs.end(), [](const auto& r) {
    return std::holds_alternative<iceberg::requirement::AssertCreate>(r);
  });
}

}  // namespace

Namespace SplitNamespace(const std::string& joined, char separator) {
  Namespace out(1);
  for (char c : joined) {
    if (c == separator) {
      out.emplace_back();
    } else {
      out.back() += c;
    }
  }
  return out;
}

struct StoreCatalog::Prepared {
  bool create = false;
  std::string base_location;  // empty when creating
  std::string new_location;
  iceberg::TableMetadata metadata;
};

StoreCatalog::StoreCatalog(PointerStore* store, storage::FileIO* io,
                           std::string warehouse_uri, Clock clock)
    : store_(store),
      io_(io),
      warehouse_uri_(TrimTrailingSlashes(std::move(warehouse_uri))),
      clock_(clock ? std::move(clock) : Clock(NowMs)) {}

Status StoreCatalog::CheckLocation(const std::string& location) const {
  const std::string prefix = warehouse_uri_ + "/";
  bool inside =
      location.size() > prefix.size() && location.compare(0, prefix.size(), prefix) == 0;
  if (inside) {
    // No "." or ".." segments, no empty segments, no backslashes or control characters.
    std::string rest = location.substr(prefix.size());
    size_t start = 0;
    while (inside && start <= rest.size()) {
      size_t end = rest.find('/', start);
      if (end == std::string::npos) end = rest.size();
      std::string seg = rest.substr(start, end - start);
      if ((seg.empty() && end != rest.size()) || seg == "." || seg == "..")
        inside = false;
      for (unsigned char c : seg) {
        if (c < 0x20 || c == 0x7f || c == '\\' || c == '%') inside = false;
      }
      start = end + 1;
    }
  }
  if (!inside) {
    return InvalidInput("location '" + location + "' is not under the warehouse " +
                        warehouse_uri_ + " (or has '.', '..', '%' or empty segments)");
  }
  return Status::OK();
}

bool StoreCatalog::IsProtected(const std::string& uri) const {
  return std::find(protected_files_.begin(), protected_files_.end(), uri) !=
         protected_files_.end();
}

Result<std::vector<std::pair<TableIdent, std::string>>> StoreCatalog::TableLocations() {
  std::vector<std::pair<TableIdent, std::string>> out;
  FLOE_ASSIGN_OR_RAISE(auto namespaces, store_->ListNamespaces());
  for (const auto& ns : namespaces) {
    FLOE_ASSIGN_OR_RAISE(auto tables, store_->ListTables(ns));
    for (auto& ident : tables) {
      auto pointer = store_->Get(ident);
      if (!pointer.ok()) {
        if (KindOf(pointer.status()) == ErrorKind::kNotFound) continue;  // just dropped
        return pointer.status();
      }
      std::string location;
      {
        std::lock_guard lock(cache_mu_);
        auto it = location_of_metadata_.find(*pointer);
        if (it != location_of_metadata_.end()) location = it->second;
      }
      if (location.empty()) {
        auto md = iceberg::ReadTableMetadata(*io_, *pointer);
        if (md.ok()) {
          location = TrimTrailingSlashes(md->location);
          std::lock_guard lock(cache_mu_);
          // Metadata files never change, so entries never go stale; the bound only caps
          // memory (a cleared cache costs one read per table on the next check).
          if (location_of_metadata_.size() >= 100000) location_of_metadata_.clear();
          location_of_metadata_[*pointer] = location;
        } else if (Unreadable(md.status())) {
          location = LocationFromMetadataPath(*pointer);  // broken table: guess, no cache
        } else {
          return WithContext(md.status(), "cannot read table " + ident.ToString() +
                                              "'s metadata to check locations");
        }
      }
      out.emplace_back(std::move(ident), std::move(location));
    }
  }
  return out;
}

Status StoreCatalog::CheckLocationFree(const TableIdent& self,
                                       const std::string& location) {
  for (const auto& f : protected_files_) {
    if (LiesUnder(f, location)) {
      return Conflict("location '" + location + "' contains the catalog's own file " + f +
                      "; choose another location");
    }
  }
  FLOE_ASSIGN_OR_RAISE(auto tables, TableLocations());
  for (const auto& [ident, other] : tables) {
    if (ident == self) continue;
    if (Overlaps(location, other)) {
      const char* how = location == other            ? "is the location of"
                        : LiesUnder(location, other) ? "lies inside the location of"
                                                     : "contains the location of";
      return Conflict("location '" + location + "' " + how + " table " +
                      ident.ToString() + " (" + other +
                      "): one location belongs to one table; choose another location");
    }
  }
  return Status::OK();
}

// --- namespaces ------------------------------------------------------------------------

Result<std::vector<Namespace>> StoreCatalog::ListNamespaces(const Namespace& parent) {
  if (!parent.empty()) {
    FLOE_RETURN_NOT_OK(ValidateNamespace(parent));
    FLOE_ASSIGN_OR_RAISE(bool exists, NamespaceExists(parent));
    if (!exists)
      return NotFound("namespace " + NamespaceName(parent) + " does not exist");
  }
  FLOE_ASSIGN_OR_RAISE(auto all, store_->ListNamespaces());
  std::set<Namespace> children;
  for (const auto& ns : all) {
    if (ns.size() > parent.size() && IsPrefix(parent, ns)) {
      children.insert(
          Namespace(ns.begin(), ns.begin() + static_cast<ptrdiff_t>(parent.size() + 1)));
    }
  }
  return std::vector<Namespace>(children.begin(), children.end());
}

Status StoreCatalog::CreateNamespace(const Namespace& ns,
                                     const std::map<std::string, std::string>& props) {
  FLOE_RETURN_NOT_OK(ValidateNamespace(ns));
  FLOE_ASSIGN_OR_RAISE(bool exists, NamespaceExists(ns));
  if (exists) return Conflict("namespace " + NamespaceName(ns) + " already exists");
  return store_->CreateNamespace(ns, props);
}

Result<bool> StoreCatalog::NamespaceExists(const Namespace& ns) {
  FLOE_RETURN_NOT_OK(ValidateNamespace(ns));
  FLOE_ASSIGN_OR_RAISE(bool has_row, store_->NamespaceExists(ns));
  if (has_row) return true;
  // A namespace that only holds tables (written by another SQL-catalog client) exists
  // too.
  FLOE_ASSIGN_OR_RAISE(auto all, store_->ListNamespaces());
  return std::any_of(all.begin(), all.end(),
                     [&](const Namespace& n) { return IsPrefix(ns, n); });
}

Result<std::map<std::string, std::string>> StoreCatalog::LoadNamespace(
    const Namespace& ns) {
  FLOE_ASSIGN_OR_RAISE(bool exists, NamespaceExists(ns));
  if (!exists) return NotFound("namespace " + NamespaceName(ns) + " does not exist");
  auto props = store_->NamespaceProperties(ns);
  if (!props.ok()) {
    if (KindOf(props.status()) == ErrorKind::kNotFound)
      return std::map<std::string, std::string>{};
    return props.status();
  }
  props->erase("exists");  // the SQL catalog's marker row, not a user property
  return props;
}

Status StoreCatalog::DropNamespace(const Namespace& ns) {
  FLOE_ASSIGN_OR_RAISE(bool exists, NamespaceExists(ns));
  if (!exists) return NotFound("namespace " + NamespaceName(ns) + " does not exist");
  FLOE_ASSIGN_OR_RAISE(auto tables, store_->ListTables(ns));
  if (!tables.empty()) {
    return Conflict("namespace " + NamespaceName(ns) + " is not empty: it holds " +
                    std::to_string(tables.size()) + " table(s), e.g. " + tables[0].name);
  }
  FLOE_ASSIGN_OR_RAISE(auto all, store_->ListNamespaces());
  for (const auto& n : all) {
    if (n.size() > ns.size() && IsPrefix(ns, n)) {
      return Conflict("namespace " + NamespaceName(ns) +
                      " is not empty: it holds namespace " + NamespaceName(n));
    }
  }
  Status st = store_->DropNamespace(ns);
  if (KindOf(st) == ErrorKind::kNotFound)
    return Status::OK();  // it had no properties row
  return st;
}

Result<NamespacePropertiesChange> StoreCatalog::UpdateNamespaceProperties(
    const Namespace& ns, const std::vector<std::string>& removals,
    const std::map<std::string, std::string>& updates) {
  for (const auto& key : removals) {
    if (updates.count(key)) {
      return InvalidInput("property '" + key + "' is both updated and removed");
    }
  }
  for (const auto& [k, v] : updates) {
    if (k.empty()) return InvalidInput("a namespace property key must not be empty");
  }
  FLOE_ASSIGN_OR_RAISE(auto current, LoadNamespace(ns));
  NamespacePropertiesChange change;
  std::vector<std::string> to_remove;
  for (const auto& key : removals) {
    if (current.count(key)) {
      change.removed.push_back(key);
      to_remove.push_back(key);
    } else {
      change.missing.push_back(key);
    }
  }
  std::map<std::string, std::string> to_set;
  for (const auto& [k, v] : updates) {
    if (k == "exists") continue;  // reserved by the SQL catalog layout
    change.updated.push_back(k);
    to_set[k] = v;
  }
  FLOE_RETURN_NOT_OK(store_->UpdateNamespaceProperties(ns, to_set, to_remove));
  return change;
}

// --- tables ----------------------------------------------------------------------------

Result<std::vector<TableIdent>> StoreCatalog::ListTables(const Namespace& ns) {
  FLOE_ASSIGN_OR_RAISE(bool exists, NamespaceExists(ns));
  if (!exists) return NotFound("namespace " + NamespaceName(ns) + " does not exist");
  return store_->ListTables(ns);
}

Result<LoadedTable> StoreCatalog::LoadTable(const TableIdent& ident) {
  FLOE_RETURN_NOT_OK(ValidateIdent(ident));
  FLOE_ASSIGN_OR_RAISE(std::string location, store_->Get(ident));
  auto md = iceberg::ReadTableMetadata(*io_, location);
  if (!md.ok()) return MetadataReadError(md.status(), ident, location);
  return LoadedTable{std::move(location), std::move(*md)};
}

Result<bool> StoreCatalog::TableExists(const TableIdent& ident) {
  FLOE_RETURN_NOT_OK(ValidateIdent(ident));
  auto loc = store_->Get(ident);
  if (loc.ok()) return true;
  if (KindOf(loc.status()) == ErrorKind::kNotFound) return false;
  return loc.status();
}

Result<LoadedTable> StoreCatalog::CreateTable(const CreateTableRequest& req) {
  FLOE_RETURN_NOT_OK(ValidateIdent(req.ident));
  FLOE_ASSIGN_OR_RAISE(bool ns_exists, NamespaceExists(req.ident.ns));
  if (!ns_exists) {
    return NotFound("namespace " + NamespaceName(req.ident.ns) + " does not exist");
  }
  FLOE_ASSIGN_OR_RAISE(bool exists, TableExists(req.ident));
  if (exists) return Conflict("table " + req.ident.ToString() + " already exists");
  if (req.writer == Writer::kExternal) {
    for (const auto& [k, v] : req.properties) {
      if (IsFloeKey(k))
        return FloeKeyForbidden(req.ident, "create with property " + k, k);
    }
  }

  // Location from validated names plus a uuid, never from raw input (ARCHITECTURE.md §3).
  std::string location;
  if (req.location) {
    location = TrimTrailingSlashes(*req.location);
    FLOE_RETURN_NOT_OK(CheckLocation(location));
  } else {
    location = warehouse_uri_;
    for (const auto& level : req.ident.ns) location += "/" + level;
    location += "/" + req.ident.name + "-" + NewUuid();
  }
  iceberg::Schema schema = req.schema;
  iceberg::PartitionSpec spec = req.partition_spec.value_or(iceberg::PartitionSpec{});
  iceberg::SortOrder order = req.sort_order.value_or(iceberg::SortOrder{});
  if (req.assign_fresh_ids) {
    std::map<int, int> ids;
    schema = iceberg::AssignFreshIds(req.schema, &ids);
    auto remap = [&](int& source_id, const char* what) -> Status {
      auto it = ids.find(source_id);
      if (it == ids.end()) {
        return InvalidInput(std::string(what) + " refers to field id " +
                            std::to_string(source_id) + ", which is not in the schema");
      }
      source_id = it->second;
      return Status::OK();
    };
    for (auto& f : spec.fields) FLOE_RETURN_NOT_OK(remap(f.source_id, "partition field"));
    for (auto& f : order.fields) FLOE_RETURN_NOT_OK(remap(f.source_id, "sort field"));
  }
  namespace u = iceberg::update;
  std::vector<iceberg::TableUpdate> updates;
  updates.push_back(u::AssignUuid{NewUuid()});
  updates.push_back(u::UpgradeFormatVersion{2});
  updates.push_back(u::AddSchema{std::move(schema), std::nullopt});
  updates.push_back(u::SetCurrentSchema{-1});
  updates.push_back(u::AddPartitionSpec{std::move(spec)});
  updates.push_back(u::SetDefaultSpec{-1});
  updates.push_back(u::AddSortOrder{std::move(order)});
  updates.push_back(u::SetDefaultSortOrder{-1});
  updates.push_back(u::SetLocation{location});
  if (!req.properties.empty()) updates.push_back(u::SetProperties{req.properties});
  FLOE_ASSIGN_OR_RAISE(auto md, iceberg::ApplyUpdates(nullptr, updates, clock_()));
  std::unique_lock location_lock(location_mu_);
  FLOE_RETURN_NOT_OK(CheckLocationFree(req.ident, location));
  if (req.stage_create) return LoadedTable{"", std::move(md)};

  FLOE_ASSIGN_OR_RAISE(auto written, iceberg::CreateTable(*io_, md));
  Status st = store_->Create(req.ident, written.metadata_location);
  if (!st.ok()) {
    // Only an unknown outcome may have registered the file.
    if (KindOf(st) != ErrorKind::kStateUnknown)
      (void)io_->Delete(written.metadata_location);
    return st;
  }
  FLOE_LOG_INFO("catalog: created table {} at {}", req.ident.ToString(), location);
  return LoadedTable{std::move(written.metadata_location), std::move(written.metadata)};
}

Result<StoreCatalog::Prepared> StoreCatalog::Prepare(const TableCommit& commit,
                                                     Writer writer) {
  FLOE_RETURN_NOT_OK(ValidateIdent(commit.ident));
  Prepared p;
  std::optional<iceberg::TableMetadata> base;
  auto loc = store_->Get(commit.ident);
  if (loc.ok()) {
    p.base_location = *loc;
    auto md = iceberg::ReadTableMetadata(*io_, p.base_location);
    if (!md.ok()) return MetadataReadError(md.status(), commit.ident, p.base_location);
    base = std::move(*md);
  } else if (KindOf(loc.status()) != ErrorKind::kNotFound) {
    return loc.status();
  } else if (!WantsCreate(commit.requirements)) {
    return NotFound("table " + commit.ident.ToString() + " does not exist");
  } else {
    FLOE_ASSIGN_OR_RAISE(bool ns_exists, NamespaceExists(commit.ident.ns));
    if (!ns_exists) {
      return NotFound("namespace " + NamespaceName(commit.ident.ns) + " does not exist");
    }
    p.create = true;
  }
  const iceberg::TableMetadata* base_ptr = base ? &*base : nullptr;
  FLOE_RETURN_NOT_OK(iceberg::CheckRequirements(base_ptr, commit.requirements));
  if (writer == Writer::kExternal) {
    if (auto change = FloeKeyChange(commit.updates)) {
      return FloeKeyForbidden(commit.ident, change->first, change->second);
    }
  }
  if (writer == Writer::kExternal && base && MirrorsDelta(*base)) {
    if (auto change = DataChange(commit.updates)) {
      return Forbidden(
          "table " + commit.ident.ToString() +
          " is mirrored to Delta; only Floe writes its data (refused: " + *change + ")");
    }
  }
  FLOE_ASSIGN_OR_RAISE(p.metadata, iceberg::ApplyUpdates(base_ptr, commit.updates,
                                                         clock_(), p.base_location));
  FLOE_RETURN_NOT_OK(CheckLocation(p.metadata.location));
  // The server never references (and purge never deletes) a file outside the table's own
  // location: every snapshot this commit adds keeps its manifest list inside it.
  const std::string root = TrimTrailingSlashes(p.metadata.location);
  for (const auto& u : commit.updates) {
    const auto* add = std::get_if<iceberg::update::AddSnapshot>(&u);
    if (add && !LiesUnder(add->snapshot.manifest_list, root)) {
      return InvalidInput("table " + commit.ident.ToString() + ": snapshot " +
                          std::to_string(add->snapshot.snapshot_id) +
                          "'s manifest list '" + add->snapshot.manifest_list +
                          "' is outside the table's location " + root +
                          "; write it under " + root + "/metadata/");
    }
  }
  if (p.create || SetsLocation(commit.updates)) {
    FLOE_RETURN_NOT_OK(CheckLocationFree(commit.ident, root));
  }
  if (writer == Writer::kExternal) {
    FLOE_RETURN_NOT_OK(CheckForeignReferences(commit, base_ptr, root));
  }
  int version = 0;
  if (!p.create)
    version = std::max(0, iceberg::ParseMetadataFileVersion(p.base_location) + 1);
  p.new_location = iceberg::NewMetadataFileLocation(p.metadata.location, version);
  FLOE_RETURN_NOT_OK(iceberg::WriteTableMetadata(*io_, p.new_location, p.metadata));
  CrashPoint("after-metadata-write");
  return p;
}

Status StoreCatalog::CheckForeignReferences(const TableCommit& commit,
                                            const iceberg::TableMetadata* base,
                                            const std::string& root) {
  FLOE_ASSIGN_OR_RAISE(auto foreign,
                       ForeignReferencesAdded(*io_, base, commit.updates, root));
  for (const auto& uri : foreign) {
    auto exists = io_->Exists(uri);
    if (!exists.ok()) return exists.status();
    if (!*exists) {
      return InvalidInput("table " + commit.ident.ToString() +
                          ": the commit references '" + uri +
                          "', outside the table's location " + root +
                          ", which does not exist (another table's purge may have "
                          "deleted it); nothing committed");
    }
  }
  return Status::OK();
}

Result<LoadedTable> StoreCatalog::CommitTable(const TableCommit& commit, Writer writer) {
  // A commit that claims a location holds the location lock until its pointer is set.
  std::unique_lock location_lock(location_mu_, std::defer_lock);
  if (WantsCreate(commit.requirements) || SetsLocation(commit.updates)) {
    location_lock.lock();
  }
  // Purge waits for an external commit (which may reference another table's files) to
  // land or fail, and such a commit waits for a purge to finish deleting.
  std::shared_lock purge_lock(purge_mu_, std::defer_lock);
  if (writer == Writer::kExternal) purge_lock.lock();
  for (int attempt = 0; attempt < kMaxSwapRetries; ++attempt) {
    FLOE_ASSIGN_OR_RAISE(Prepared p, Prepare(commit, writer));
    CrashPoint("before-pointer-swap");
    Status st = p.create ? store_->Create(commit.ident, p.new_location)
                         : store_->Swap(commit.ident, p.base_location, p.new_location);
    if (st.ok()) {
      CrashPoint("after-pointer-swap");
      return LoadedTable{std::move(p.new_location), std::move(p.metadata)};
    }
    const ErrorKind kind = KindOf(st);
    // Anything but an unknown outcome was definitely not applied: the new file is
    // garbage (a store that refuses writes must not leave one file per attempt).
    if (kind != ErrorKind::kStateUnknown) (void)io_->Delete(p.new_location);
    if (kind != ErrorKind::kConflict) return st;  // unknown: keep the file
    // Lost a race: re-check against the new base.
    FLOE_LOG_DEBUG("catalog: commit to {} lost a race ({}); re-checking (attempt {})",
                   commit.ident.ToString(), st.message(), attempt + 1);
  }
  return Conflict("commit to " + commit.ident.ToString() + " kept losing races after " +
                  std::to_string(kMaxSwapRetries) + " attempts");
}

Status StoreCatalog::CheckWritable() { return store_->CheckWritable(); }

Status StoreCatalog::CommitTransaction(const std::vector<TableCommit>& commits,
                                       Writer writer) {
  if (commits.empty()) {
    return InvalidInput("a transaction needs at least one table change");
  }
  std::set<TableIdent> seen;
  for (const auto& c : commits) {
    if (!seen.insert(c.ident).second) {
      return InvalidInput("table " + c.ident.ToString() +
                          " appears twice in the transaction");
    }
  }
  std::unique_lock location_lock(location_mu_, std::defer_lock);
  if (std::any_of(commits.begin(), commits.end(), [](const TableCommit& c) {
        return WantsCreate(c.requirements) || SetsLocation(c.updates);
      })) {
    location_lock.lock();
  }
  std::shared_lock purge_lock(purge_mu_, std::defer_lock);
  if (writer == Writer::kExternal) purge_lock.lock();
  for (int attempt = 0; attempt < kMaxSwapRetries; ++attempt) {
    std::vector<Prepared> prepared;
    auto discard = [&] {
      for (const auto& p : prepared) (void)io_->Delete(p.new_location);
    };
    for (const auto& c : commits) {
      auto p = Prepare(c, writer);
      if (!p.ok()) {
        discard();
        return p.status();
      }
      prepared.push_back(std::move(*p));
    }
    std::vector<PointerStore::SwapOp> ops;
    for (size_t i = 0; i < commits.size(); ++i) {
      ops.push_back({commits[i].ident,
                     prepared[i].create ? "" : prepared[i].base_location,
                     prepared[i].new_location});
    }
    CrashPoint("before-pointer-swap");
    Status st = store_->SwapAll(ops);
    if (st.ok()) return Status::OK();
    if (KindOf(st) == ErrorKind::kStateUnknown) return st;  // keep the files
    discard();
    if (KindOf(st) != ErrorKind::kConflict) return st;
  }
  return Conflict("transaction kept losing races after " +
                  std::to_string(kMaxSwapRetries) + " attempts");
}

Status StoreCatalog::DropTable(const TableIdent& ident, bool purge) {
  FLOE_RETURN_NOT_OK(ValidateIdent(ident));
  if (!purge) return store_->Drop(ident, "");
  std::lock_guard location_lock(location_mu_);
  std::unique_lock purge_lock(purge_mu_);
  // Floe's own commits do not take the purge lock: one that lands on this table while its
  // references are read makes the conditional drop fail, and the purge reads again.
  for (int attempt = 0; attempt < kMaxSwapRetries; ++attempt) {
    FLOE_ASSIGN_OR_RAISE(bool purged, PurgeOnce(ident));
    if (purged) return Status::OK();
  }
  return Conflict("purge of " + ident.ToString() +
                  " refused (nothing dropped): it kept " +
                  "changing while its references were read; stop its writers first");
}

Result<bool> StoreCatalog::PurgeOnce(const TableIdent& ident) {
  FLOE_ASSIGN_OR_RAISE(auto loaded, LoadTable(ident));
  const auto& md = loaded.metadata;
  if (MirrorsDelta(md)) {
    return Forbidden("table " + ident.ToString() +
                     " is mirrored to Delta: purging would break the Delta table; drop "
                     "it without purge");
  }
  // Purge deletes only files under the table's own location (a client may have named
  // any warehouse file in a snapshot) that no other registered table references. Both
  // are decided before the table is dropped, so a refused purge changes nothing.
  const std::string root = TrimTrailingSlashes(md.location);
  std::set<std::string> candidates;
  size_t skipped = 0;
  Status st = CollectReferences(*io_, md, root, &candidates, &skipped);
  if (!st.ok()) {
    return WithContext(st, "purge of " + ident.ToString() +
                               " refused (nothing dropped): cannot read its manifests");
  }
  candidates.insert(loaded.metadata_location);
  std::set<std::string> files;
  for (const auto& f : candidates) {
    if (LiesUnder(f, root) && !IsProtected(f)) {
      files.insert(f);
    } else {
      ++skipped;
    }
  }
  FLOE_ASSIGN_OR_RAISE(auto tables, TableLocations());
  size_t shared = 0;
  for (const auto& [other, other_location] : tables) {
    if (other == ident) continue;
    if (Overlaps(root, other_location)) {
      return Conflict("purge of " + ident.ToString() +
                      " refused (nothing dropped): table " + other.ToString() +
                      " shares its location (" + other_location +
                      "); drop it without purge");
    }
    auto pointer = store_->Get(other);
    if (!pointer.ok()) {
      if (KindOf(pointer.status()) == ErrorKind::kNotFound) continue;  // dropped since
      return pointer.status();
    }
    std::set<std::string> referenced{*pointer};
    auto other_md = iceberg::ReadTableMetadata(*io_, *pointer);
    if (other_md.ok()) {
      size_t ignored = 0;
      st = CollectReferences(*io_, *other_md, "", &referenced, &ignored);
    } else if (!Unreadable(other_md.status())) {
      st = other_md.status();  // a broken table references nothing readable; an outage
                               // hides what it references
    }
    if (!st.ok()) {
      return WithContext(st, "purge of " + ident.ToString() +
                                 " refused (nothing dropped): cannot read table " +
                                 other.ToString() +
                                 "'s manifests to check it references "
                                 "none of the files");
    }
    for (const auto& f : referenced) shared += files.erase(f);
  }
  st = store_->Drop(ident, loaded.metadata_location);
  if (KindOf(st) == ErrorKind::kConflict) return false;  // a commit landed: read again
  FLOE_RETURN_NOT_OK(st);
  // Failures are logged, not returned: the table is already gone from the catalog.
  size_t failed = 0;
  for (const auto& f : files) {
    if (!io_->Delete(f).ok()) ++failed;
  }
  FLOE_LOG_INFO(
      "catalog: purged table {} ({} files deleted, {} could not be deleted; {} kept as "
      "other tables reference them, {} references outside its location {} left alone)",
      ident.ToString(), files.size() - failed, failed, shared, skipped, root);
  return true;
}

Status StoreCatalog::RenameTable(const TableIdent& from, const TableIdent& to) {
  FLOE_RETURN_NOT_OK(ValidateIdent(from));
  FLOE_RETURN_NOT_OK(ValidateIdent(to));
  FLOE_ASSIGN_OR_RAISE(bool ns_exists, NamespaceExists(to.ns));
  if (!ns_exists)
    return NotFound("namespace " + NamespaceName(to.ns) + " does not exist");
  return store_->Rename(from, to);
}

Result<LoadedTable> StoreCatalog::RegisterTable(const TableIdent& ident,
                                                const std::string& metadata_location) {
  FLOE_RETURN_NOT_OK(ValidateIdent(ident));
  FLOE_RETURN_NOT_OK(CheckLocation(metadata_location));
  FLOE_ASSIGN_OR_RAISE(bool ns_exists, NamespaceExists(ident.ns));
  if (!ns_exists)
    return NotFound("namespace " + NamespaceName(ident.ns) + " does not exist");
  auto md = iceberg::ReadTableMetadata(*io_, metadata_location);
  // The client named this file: every failure keeps its kind (missing: the REST server
  // answers 400 once it knows the namespace exists; corrupt: 400; an outage: 503).
  if (!md.ok()) return WithContext(md.status(), "cannot register " + ident.ToString());
  FLOE_RETURN_NOT_OK(CheckLocation(md->location));
  const std::string root = TrimTrailingSlashes(md->location);
  if (!LiesUnder(metadata_location, root)) {
    return InvalidInput("cannot register " + ident.ToString() + ": metadata file '" +
                        metadata_location + "' is outside the table location " + root +
                        " it names");
  }
  std::lock_guard location_lock(location_mu_);
  FLOE_RETURN_NOT_OK(CheckLocationFree(ident, root));
  FLOE_RETURN_NOT_OK(store_->Create(ident, metadata_location));
  return LoadedTable{metadata_location, std::move(*md)};
}

}  // namespace floe::catalog
