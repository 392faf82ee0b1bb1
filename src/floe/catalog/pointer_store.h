// PointerStore: where each table's current metadata location lives, swapped with
// compare-and-swap. SQLite today (the Iceberg SQL catalog layout, so pyiceberg's SqlCatalog
// and Java's JdbcCatalog open it unchanged); PostgreSQL when several Floe processes share
// tables. Knows nothing of Kafka nor of metadata contents.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "floe/common/status.h"

namespace floe::catalog {

struct TableIdent {
  std::vector<std::string> ns;  // namespace levels; no level contains '.'
  std::string name;

  // "a.b" (the SQL catalog's namespace column) and "a.b.t".
  std::string NamespaceString() const;
  std::string ToString() const;
  bool operator<(const TableIdent& o) const {
    return std::tie(ns, name) < std::tie(o.ns, o.name);
  }
  bool operator==(const TableIdent& o) const { return ns == o.ns && name == o.name; }
};

// Rejects empty levels, '.', '/', '\\', control characters, "." / "..", and over-long names.
Status ValidateIdent(const TableIdent& ident);

class PointerStore {
 public:
  virtual ~PointerStore() = default;

  // Current metadata location, or kNotFound.
  virtual Result<std::string> Get(const TableIdent& ident) = 0;
  // Registers a new table; kConflict if it already exists.
  virtual Status Create(const TableIdent& ident, const std::string& location) = 0;
  // Swaps expected → desired atomically. kConflict: the pointer was not `expected` (definitely
  // not applied). kStateUnknown: the outcome cannot be known (caller reloads and checks).
  virtual Status Swap(const TableIdent& ident, const std::string& expected,
                      const std::string& desired) = 0;
  virtual Status Drop(const TableIdent& ident) = 0;
  virtual Result<std::vector<TableIdent>> ListTables(const std::vector<std::string>& ns) = 0;

  // Namespaces: a row `exists=true` marks a namespace (SQL catalog convention).
  virtual Status CreateNamespace(const std::vector<std::string>& ns,
                                 const std::map<std::string, std::string>& props) = 0;
  virtual Result<bool> NamespaceExists(const std::vector<std::string>& ns) = 0;
};

// Opens (creating if needed) a SQLite catalog file: WAL mode, busy timeout ≥ 5 s, tables in
// the layout pyiceberg 0.12 creates (schema v1 with iceberg_type).
Result<std::unique_ptr<PointerStore>> OpenSqliteStore(const std::string& path,
                                                      const std::string& catalog_name);

}  // namespace floe::catalog
