// TableIdent: a table's name in a catalog (namespace levels and a name), and the rules a
// name must follow, shared by the catalog, the pointer stores and every caller that
// names a table.
#pragma once

#include <string>
#include <tuple>
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

// Rejects empty levels, '.', '/', '\\', control characters, "." / "..", and over-long
// names.
Status ValidateIdent(const TableIdent& ident);
Status ValidateNamespaceLevels(const std::vector<std::string>& ns);
// "a.b" → {"a", "b"} (the SQL catalog's namespace column).
std::vector<std::string> SplitNamespaceString(const std::string& text);

}  // namespace floe::catalog
