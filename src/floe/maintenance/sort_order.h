// The order rewrites write rows in (docs/maintenance.md, "Sort order"): the topic's
// compaction.sort.order, which the pipeline records as the table property
// floe.compaction.sort-order, resolved against the table's current schema into an Iceberg
// sort order; without it, the table's own default sort order. Compaction and row
// retention make the order the table's default (EnsureDefaultSortOrder) before they write
// a file in it, so each file's sort_order_id names an order the table already has (spec
// "Sorting": a file's sort_order_id says how its rows are ordered).
//
// Threading: functions of their inputs; the Catalog is thread-safe.
#pragma once

#include <string>

#include "floe/catalog/catalog.h"
#include "floe/common/status.h"
#include "floe/iceberg/table_metadata.h"

namespace floe::storage {
class FileIO;
}

namespace floe::maintenance {

// The order `metadata`'s rewrites follow:
// - floe.compaction.sort-order (table/table_properties.h) not empty: that order, each
//   column found by name in the current schema (a dotted path through structs, a
//   primitive at its end), ascending with nulls first or descending with nulls last, as
//   Iceberg's own writers default. Errors: kInvalidInput naming the column that is
//   missing, not a primitive, or inside a list or map.
// - empty or absent: Floe does not manage the order; the table's default sort order (set
//   by another client, or by an earlier compaction.sort.order) when a rewrite can apply
//   it (identity transforms of columns outside lists and maps), else the unsorted order.
// Its order_id is the one the table has for it, or will give it when it is added
// (iceberg::SortOrderIdIn).
Result<iceberg::SortOrder> RewriteSortOrder(const iceberg::TableMetadata& metadata);

// Makes `*order` the default sort order of `ident` (whose metadata is `*metadata`),
// adding it when the table lacks it, in a commit of its own (no snapshot) unless it
// already is the default. On return `*metadata` is the table as committed and
// `order->order_id` the id the table gave it. The unsorted order changes nothing.
Status EnsureDefaultSortOrder(catalog::Catalog& catalog, storage::FileIO& io,
                              const catalog::TableIdent& ident,
                              iceberg::TableMetadata* metadata,
                              iceberg::SortOrder* order);

}  // namespace floe::maintenance
