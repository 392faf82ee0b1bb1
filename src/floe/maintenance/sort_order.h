// The order rewrites write rows in (docs/maintenance.md, "Sort order"): the topic's
// compaction.sort.order, which the pipeline records as the table property
// floe.compaction.sort-order, resolved against the table's current schema into an Iceberg
// sort order. Compaction and row retention sort what they rewrite by it and record it as
// the table's default sort order in the same commit; each file they write in it carries
// its order id (spec "Sorting": a file's sort_order_id says how its rows are ordered).
//
// Threading: functions of their inputs.
#pragma once

#include <string>

#include "floe/common/status.h"
#include "floe/iceberg/table_metadata.h"

namespace floe::maintenance {

// The order `metadata`'s rewrites follow:
// - with floe.compaction.sort-order (pipeline/table_properties.h): that order, each
// column found by name in the
//   current schema (a dotted path through structs, a primitive at its end), ascending
//   with nulls first or descending with nulls last, as Iceberg's own writers default;
//   "" is the unsorted order;
// - without it (a table from before the key, or not Floe's): the table's default order.
// Its order_id is the one the table has for it, or will give it when it is added
// (iceberg::SortOrderIdIn). Errors: kInvalidInput naming the column that is missing, not
// a primitive, or inside a list or map.
Result<iceberg::SortOrder> RewriteSortOrder(const iceberg::TableMetadata& metadata);

}  // namespace floe::maintenance
