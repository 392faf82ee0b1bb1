// Catalog: the server-side catalog operations, named after the Iceberg REST Catalog's
// (rest-catalog-open-api.yaml), over a PointerStore and a FileIO. It is the one commit
// path: Floe's pipeline and other writers (through the REST server) both commit with
// CommitTable — requirements checked against the current metadata, all updates applied,
// the new metadata file written put-if-absent, the pointer swapped with compare-and-swap.
//
// Threading: thread-safe (the REST server calls it from its worker threads while the
// pipeline commits); concurrent commits to one table are serialized by the pointer CAS.
// Knows nothing of Kafka.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <vector>

#include "floe/catalog/pointer_store.h"
#include "floe/common/status.h"
#include "floe/iceberg/table_metadata.h"
#include "floe/iceberg/table_update.h"

namespace floe::storage {
class FileIO;
}

namespace floe::catalog {

// Table property naming the formats Floe materializes a table in ("iceberg",
// "iceberg,delta",
// ...). While it contains "delta", only Floe may change the table's data (ARCHITECTURE.md
// §2).
inline constexpr const char* kFormatsProperty = "floe.formats";

using Namespace = std::vector<std::string>;

struct LoadedTable {
  std::string metadata_location;  // empty for a staged (not yet committed) table
  iceberg::TableMetadata metadata;
};

// Prefix of the table properties and snapshot-summary keys Floe owns (Kafka positions,
// cluster id, writer, formats). Only Writer::kFloe may set or remove them, on every
// table.
inline constexpr const char* kFloeKeyPrefix = "floe.";

// Who commits. Floe's pipeline (and the operator's `floe positions set`) may change
// Floe-owned keys and a Delta-mirrored table's data; others (REST clients) may not.
enum class Writer { kFloe, kExternal };

struct CreateTableRequest {
  TableIdent ident;
  iceberg::Schema schema;
  std::optional<iceberg::PartitionSpec> partition_spec;
  std::optional<iceberg::SortOrder> sort_order;
  std::optional<std::string> location;  // must lie under the warehouse
  std::map<std::string, std::string> properties;
  // Build the metadata without creating the table (REST stage-create): the client later
  // commits it with an assert-create requirement.
  bool stage_create = false;
  // Renumber the schema's field ids 1..n (iceberg::AssignFreshIds), as REST servers do on
  // create; Floe's own tables keep the ids the pipeline assigned.
  bool assign_fresh_ids = true;
  // kExternal may not set Floe-owned (floe.*) properties.
  Writer writer = Writer::kFloe;
};

struct TableCommit {
  TableIdent ident;
  std::vector<iceberg::TableRequirement> requirements;
  std::vector<iceberg::TableUpdate> updates;
};

struct NamespacePropertiesChange {
  std::vector<std::string> updated;
  std::vector<std::string> removed;
  std::vector<std::string> missing;  // removals that were not set
};

// The catalog operations every caller uses: a StoreCatalog over Floe's own pointer store
// (SQLite, PostgreSQL), or a client of an external Iceberg REST catalog
// (floe/rest_client). Implementations are thread-safe.
class Catalog {
 public:
  virtual ~Catalog() = default;

  // Namespaces. `parent` empty: the top level. Returns direct children only.
  virtual Result<std::vector<Namespace>> ListNamespaces(const Namespace& parent) = 0;
  // kConflict if it exists.
  virtual Status CreateNamespace(const Namespace& ns,
                                 const std::map<std::string, std::string>& props) = 0;
  // kNotFound if absent.
  virtual Result<std::map<std::string, std::string>> LoadNamespace(
      const Namespace& ns) = 0;
  virtual Result<bool> NamespaceExists(const Namespace& ns) = 0;
  // kNotFound if absent; kConflict if it still holds tables or namespaces.
  virtual Status DropNamespace(const Namespace& ns) = 0;
  // InvalidInput if a key is both updated and removed.
  virtual Result<NamespacePropertiesChange> UpdateNamespaceProperties(
      const Namespace& ns, const std::vector<std::string>& removals,
      const std::map<std::string, std::string>& updates) = 0;

  // Tables. kNotFound when the namespace does not exist.
  virtual Result<std::vector<TableIdent>> ListTables(const Namespace& ns) = 0;
  virtual Result<LoadedTable> LoadTable(const TableIdent& ident) = 0;
  virtual Result<bool> TableExists(const TableIdent& ident) = 0;
  // Location: the request's (checked to lie under the warehouse) or
  // <warehouse>/<ns levels>/<name>-<uuid>. kConflict if the table exists, or if the
  // location equals, lies inside or contains another registered table's location (one
  // location belongs to one table); kNotFound if the namespace does not exist.
  virtual Result<LoadedTable> CreateTable(const CreateTableRequest& request) = 0;
  // One table's commit. A table that does not exist is created when the requirements
  // include assert-create (REST create transactions). On a lost CAS the commit is
  // re-checked against the new current metadata and retried; a failed requirement is
  // kConflict (HTTP 409), an update that cannot apply InvalidInput (400), an added
  // snapshot whose manifest list lies outside the table's location InvalidInput (400), a
  // new location that overlaps another table's kConflict (409), a change of Floe-owned
  // keys (floe.* properties, floe.* snapshot-summary keys) by kExternal kForbidden (403),
  // a data-changing commit by kExternal to a Delta-mirrored table kForbidden (403), an
  // unknowable outcome kStateUnknown (5xx).
  virtual Result<LoadedTable> CommitTable(const TableCommit& commit, Writer writer) = 0;
  // Several tables at once, all or nothing (REST transactions/commit).
  virtual Status CommitTransaction(const std::vector<TableCommit>& commits,
                                   Writer writer) = 0;
  // `purge`: also delete the table's metadata, manifests and data files, but only those
  // under the table's own location that no other registered table references (every
  // other table's metadata, manifest lists and manifests are read to check: purge costs
  // a scan of the catalog). kConflict (nothing dropped) if another table's location
  // overlaps this one's; kForbidden for a Delta-mirrored table.
  virtual Status DropTable(const TableIdent& ident, bool purge) = 0;
  // kNotFound if `from` or `to`'s namespace is absent; kConflict if `to` exists.
  virtual Status RenameTable(const TableIdent& from, const TableIdent& to) = 0;
  // kRetriable naming the pointer store when it cannot take commits now (read-only).
  virtual Status CheckWritable() = 0;
  // Registers an existing metadata file as a new table. The file must lie under the
  // table location it names (InvalidInput otherwise), and that location must not overlap
  // another registered table's (kConflict).
  virtual Result<LoadedTable> RegisterTable(const TableIdent& ident,
                                            const std::string& metadata_location) = 0;
};

// The server-side catalog over a PointerStore and a FileIO: checks requirements, applies
// updates, writes the metadata file and swaps the pointer.
class StoreCatalog final : public Catalog {
 public:
  using Clock = std::function<int64_t()>;  // wall time in ms; tests inject their own

  // `warehouse_uri`: the root every table location must lie under (file:///...).
  StoreCatalog(PointerStore* store, storage::FileIO* io, std::string warehouse_uri,
               Clock clock = {});

  const std::string& warehouse_uri() const { return warehouse_uri_; }

  // Files the catalog itself lives in when they sit under the warehouse (the SQLite file
  // and its -wal/-shm/-journal): no table location may contain them and purge never
  // deletes them. Call before serving.
  void ProtectFiles(std::vector<std::string> uris) { protected_files_ = std::move(uris); }

  // Catalog (the semantics above).
  Result<std::vector<Namespace>> ListNamespaces(const Namespace& parent) override;
  Status CreateNamespace(const Namespace& ns,
                         const std::map<std::string, std::string>& props) override;
  Result<std::map<std::string, std::string>> LoadNamespace(const Namespace& ns) override;
  Result<bool> NamespaceExists(const Namespace& ns) override;
  Status DropNamespace(const Namespace& ns) override;
  Result<NamespacePropertiesChange> UpdateNamespaceProperties(
      const Namespace& ns, const std::vector<std::string>& removals,
      const std::map<std::string, std::string>& updates) override;

  Result<std::vector<TableIdent>> ListTables(const Namespace& ns) override;
  Result<LoadedTable> LoadTable(const TableIdent& ident) override;
  Result<bool> TableExists(const TableIdent& ident) override;
  Result<LoadedTable> CreateTable(const CreateTableRequest& request) override;
  Result<LoadedTable> CommitTable(const TableCommit& commit, Writer writer) override;
  Status CommitTransaction(const std::vector<TableCommit>& commits,
                           Writer writer) override;
  Status DropTable(const TableIdent& ident, bool purge) override;
  Status RenameTable(const TableIdent& from, const TableIdent& to) override;
  Status CheckWritable() override;
  Result<LoadedTable> RegisterTable(const TableIdent& ident,
                                    const std::string& metadata_location) override;

 private:
  struct Prepared;
  Result<Prepared> Prepare(const TableCommit& commit, Writer writer);
  // InvalidInput when an external commit references a file outside its table's `root`
  // that no longer exists (see ForeignReferencesAdded).
  Status CheckForeignReferences(const TableCommit& commit,
                                const iceberg::TableMetadata* base,
                                const std::string& root);
  // One purge attempt (DropTable): false when a commit landed on the table while its
  // references were read (nothing dropped).
  Result<bool> PurgeOnce(const TableIdent& ident);
  Status CheckLocation(const std::string& location) const;
  // kConflict if `location` equals, lies inside or contains the location of a registered
  // table other than `self`, or contains a protected file.
  Status CheckLocationFree(const TableIdent& self, const std::string& location);
  // Every registered table and its location (from a cache keyed by the immutable
  // metadata file name, so each metadata file is read once).
  Result<std::vector<std::pair<TableIdent, std::string>>> TableLocations();
  bool IsProtected(const std::string& uri) const;

  PointerStore* store_;
  storage::FileIO* io_;
  std::string warehouse_uri_;
  Clock clock_;
  std::vector<std::string> protected_files_;
  // Serializes the location check with the pointer change of creates, registers,
  // set-location commits and purges, so two tables cannot claim overlapping locations
  // through this process (writers to the SQLite file itself bypass it).
  std::mutex location_mu_;
  // Purge (exclusive) against external commits (shared): a commit that starts
  // referencing a table's files either lands before the purge reads the references, or
  // finds them gone and is refused. Taken after location_mu_. Covers this process only
  // (docs/security.md).
  std::shared_mutex purge_mu_;
  std::mutex cache_mu_;
  std::map<std::string, std::string> location_of_metadata_;  // under cache_mu_
};

// "a\x1Fb" <-> {"a","b"} (the REST path encoding of a multi-level namespace).
Namespace SplitNamespace(const std::string& joined, char separator = '\x1F');

}  // namespace floe::catalog
