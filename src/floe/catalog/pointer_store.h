// PointerStore: where each table's current metadata location lives, swapped with
// compare-and-swap, in the Iceberg SQL catalog layout (pyiceberg's SqlCatalog and Java's
// JdbcCatalog open it unchanged): a SQLite file, or a PostgreSQL database when several
// Floe processes share tables. Knows nothing of Kafka nor of metadata contents.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "floe/catalog/table_ident.h"
#include "floe/common/status.h"

namespace floe::catalog {

// The answer of a Drop that removed nothing: kNotFound, or kConflict while the table
// `exists` (its pointer was not the expected one).
Status DropMissed(const TableIdent& ident, bool exists);

class PointerStore {
 public:
  virtual ~PointerStore() = default;

  // Current metadata location, or kNotFound.
  virtual Result<std::string> Get(const TableIdent& ident) = 0;
  // Registers a new table; kConflict if it already exists.
  virtual Status Create(const TableIdent& ident, const std::string& location) = 0;
  // Swaps expected → desired atomically. kConflict: the pointer was not `expected`
  // (definitely not applied). kStateUnknown: the outcome cannot be known (caller reloads
  // and checks).
  virtual Status Swap(const TableIdent& ident, const std::string& expected,
                      const std::string& desired) = 0;
  // Removes the table. With `expected` non-empty, only while the pointer is `expected`
  // (kConflict otherwise: a commit landed since the caller read it).
  // (DropMissed gives the answer.)
  virtual Status Drop(const TableIdent& ident, const std::string& expected) = 0;
  virtual Result<std::vector<TableIdent>> ListTables(
      const std::vector<std::string>& ns) = 0;

  // kNotFound if `from` is absent; kConflict if `to` exists.
  virtual Status Rename(const TableIdent& from, const TableIdent& to) = 0;

  struct SwapOp {
    TableIdent ident;
    std::string expected;  // empty: create the table (it must not exist)
    std::string desired;
  };
  // All swaps/creates or none, in one transaction. kConflict names the first that lost.
  virtual Status SwapAll(const std::vector<SwapOp>& ops) = 0;

  // Namespaces: a row `exists=true` marks a namespace (SQL catalog convention). Creating
  // a namespace that has that row is kConflict, decided by the insert itself: of
  // concurrent creators exactly one succeeds.
  virtual Status CreateNamespace(const std::vector<std::string>& ns,
                                 const std::map<std::string, std::string>& props) = 0;
  virtual Result<bool> NamespaceExists(const std::vector<std::string>& ns) = 0;
  // Every namespace with a properties row or a table, each as its levels.
  virtual Result<std::vector<std::vector<std::string>>> ListNamespaces() = 0;
  // kNotFound if the namespace has no properties row (tables alone do not make one).
  virtual Result<std::map<std::string, std::string>> NamespaceProperties(
      const std::vector<std::string>& ns) = 0;
  virtual Status UpdateNamespaceProperties(
      const std::vector<std::string>& ns,
      const std::map<std::string, std::string>& updates,
      const std::vector<std::string>& removals) = 0;
  // Removes the namespace's properties rows (the caller checks it is empty).
  virtual Status DropNamespace(const std::vector<std::string>& ns) = 0;

  // kRetriable naming the store when it cannot take writes now (a read-only catalog
  // file); a store that becomes writable again is picked up without a restart.
  virtual Status CheckWritable() { return Status::OK(); }
};

// Opens (creating if needed) a SQLite catalog file: WAL mode, busy timeout ≥ 5 s, tables
// in the layout pyiceberg 0.12 creates (schema v1 with iceberg_type).
Result<std::unique_ptr<PointerStore>> OpenSqliteStore(const std::string& path,
                                                      const std::string& catalog_name);

// A PostgreSQL database: the same tables and statements as the SQLite store, so
// pyiceberg's SqlCatalog and Java's JdbcCatalog open it unchanged, and several Floe
// processes can share it (each swap is one conditional UPDATE).
struct PostgresOptions {
  // A libpq connection URI or key=value string: "postgresql://floe@db:5432/lake?sslmode=
  // verify-full&sslrootcert=/etc/ca.pem". TLS and other connection options go here.
  std::string conninfo;
  std::string password;  // "": the URI's, PGPASSWORD or ~/.pgpass
  int pool_size = 4;     // connections at most, opened when needed
  int connect_timeout_s = 10;
};
// Connects once (an unreachable server is kRetriable naming it, a refused login
// kInvalidInput) and creates the tables when missing. Later a connection that broke is
// opened again on next use; a statement whose connection broke after it was sent is
// kStateUnknown when it writes, kRetriable when it reads.
Result<std::unique_ptr<PointerStore>> OpenPostgresStore(const PostgresOptions& options,
                                                        const std::string& catalog_name);

// A store held in process memory (unit tests of the layers above the catalog).
std::unique_ptr<PointerStore> MakeMemoryStore();

}  // namespace floe::catalog
