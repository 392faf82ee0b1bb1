#include "floe/catalog/pointer_store.h"

namespace floe::catalog {

Status DropMissed(const TableIdent& ident, bool exists) {
  if (!exists) return NotFound("table " + ident.ToString() + " does not exist");
  return Conflict("table " + ident.ToString() +
                  " changed since it was read (a commit landed); not dropped");
}

}  // namespace floe::catalog
