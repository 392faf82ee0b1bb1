// Field-id assignment: ids belong to the TABLE, never to a decoder or a writer schema
// (ARCHITECTURE.md §3, Iceberg spec "Schemas": ids are never reused).
#pragma once

#include <vector>

#include "floe/common/status.h"
#include "floe/iceberg/schema.h"

namespace floe::schema {

// Returns `fresh` (whose ids are ignored) with every id set, including list element and
// map key/value ids.
//
// A field that matches a field of `existing` keeps that field's id. Matching is by exact
// name at every level: top-level fields against `existing->fields`, struct fields by name
// inside a matched struct, a list's element and a map's key and value by position inside
// a matched list or map. Children are only matched when both sides have the same kind
// (struct/list/map); a field whose type changed kind keeps its own id (the evolution
// check then sees the change on that id) and its children are new.
//
// Every other field gets ++*last_column_id, in the order Iceberg's AssignFreshIds uses:
// all fields of a struct first, then the nested types of each field in order (so a fresh
// table numbers its top-level columns 1..N). `*last_column_id` is the table's
// `last-column-id`; it is raised to `existing->HighestFieldId()` first so an id is never
// handed out twice.
//
// Deterministic: the same fresh fields against the same existing schema give the same
// ids, so restarts and replays produce identical schemas. `existing` may be null (new
// table).
Result<std::vector<iceberg::NestedField>> AssignFieldIds(
    const std::vector<iceberg::NestedField>& fresh, const iceberg::Schema* existing,
    int* last_column_id);

}  // namespace floe::schema
