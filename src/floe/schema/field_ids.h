// Field-id assignment: ids belong to the TABLE, never to a decoder or a writer schema
// (ARCHITECTURE.md §3, Iceberg spec "Schemas": ids are never reused).
#pragma once

#include <string>
#include <vector>

#include "floe/common/status.h"
#include "floe/iceberg/schema.h"

namespace floe::schema {

// Which table field each writer field of one struct level is (issue 16: renames), or -1
// for a field the table lacks. In this order:
//   1. the same name;
//   2. an Avro alias of the writer's field names the table field (the writer RENAMES it:
//      "title" with aliases ["name"] takes column "name");
//   3. the writer's name is a former name of the table field (an older producer still
//      writing "name" after the column became "title");
//   4. the same Protobuf field number under another name (the writer RENAMES it).
// Steps 2-4 only consider table fields no writer field has by name, so an alias naming a
// column the writer also carries is not a rename; 3 is skipped when both sides know a
// Protobuf number and the numbers differ. A rename and a former name differ only in
// which side knows the other's name: the Merger (evolution.h) renames in cases 2 and 4.
// `path` names the struct in messages ("" at top level).
// Errors: kSuspend when the hints are ambiguous (a writer field whose aliases name two
// table fields, two writer fields taking the same table field).
Result<std::vector<int>> MatchWriterFields(
    const std::vector<iceberg::NestedField>& writer,
    const std::vector<iceberg::NestedField>& table, const std::string& path = "");

// Returns `fresh` (whose ids are ignored) with every id set, including list element and
// map key/value ids.
//
// A field that matches a field of `existing` keeps that field's id. Struct fields match
// as MatchWriterFields says (by name, else by a rename hint), at every level: top-level
// fields against `existing->fields`, struct fields inside a matched struct, a list's
// element and a map's key and value by position inside a matched list or map. Children
// are only matched when both sides have the same kind (struct/list/map); a field whose
// type changed kind keeps its own id (the evolution check then sees the change on that
// id) and its children are new.
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
//
// Errors: kSuspend when a rename hint is ambiguous (MatchWriterFields).
Result<std::vector<iceberg::NestedField>> AssignFieldIds(
    const std::vector<iceberg::NestedField>& fresh, const iceberg::Schema* existing,
    int* last_column_id);

}  // namespace floe::schema
