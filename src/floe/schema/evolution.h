// Schema evolution (issue 16): whether a writer's schema can be taken by a table, and the
// table schema that takes it. A pure function over two Iceberg schemas; the pipeline
// decides when to call it and commits the result.
//
// Fields are matched by name at every level (struct fields, a list's element, a map's
// value; a map's key must not change), or by a rename hint (MatchWriterFields,
// field_ids.h): an Avro alias or a Protobuf field number of the writer's field, a former
// name of the table's. Compatible changes (Iceberg spec "Schema
// Evolution"; Delta type widening):
//   - a field the table lacks      → a new optional column with a fresh field id (its own
//                                     nested fields keep the writer's requiredness);
//   - a field the writer lacks     → kept and made optional (DroppedFields::kKeep), or
//                                     removed from the schema (kDrop; its id stays used,
//                                     so re-adding the name later makes a new column);
//   - int → long, float → double, decimal(P,S) → decimal(P',S) with P' > P;
//   - a required column the writer makes optional → optional;
//   - a writer field whose Avro aliases name a column, or that has the column's Protobuf
//     field number under another name → the column is renamed ("rename column a → b
//     (id 5)"), keeps its id and its old name becomes a former name (NestedField::
//     aliases of the result; the pipeline persists them, rename_hints.h); a writer field
//     named like a former name of a column is an older producer: it maps to the column
//     and renames nothing.
// A new field the writer requires without a default is incompatible (older data has no
// value for it), as are the changes the subject's compatibility level rules out (the
// registry governs; level NONE leaves Floe's rules alone):
//   - BACKWARD (readers of the new schema read older data): a new field needs a
//     default — the rule above, so this level refuses nothing more;
//   - FORWARD (readers of older schemas read new data): a field the writer drops must
//     have been optional in the table; no widening and no required → optional (Avro and
//     JSON Schema: an older reader cannot read the wider value; Protobuf's integer
//     widenings are wire-compatible both ways, so they stay allowed);
//   - FULL: both. The _TRANSITIVE variants check the same against the table, which holds
//     every earlier version's columns.
// A writer type the table column already holds (int into long, float into double, a
// narrower decimal of the same scale, a required field for an optional column) fits
// without a change. Anything else (another type, another kind, a narrowing, a changed map
// key) is incompatible: kSuspend naming the field path and both types.
//
// Ambiguous rename hints (two writer fields taking one column, aliases naming two
// columns, an alias naming Floe's `_kafka`) are incompatible too. Nothing else renames a
// column: a field with a new name and no hint is an add (plus a drop of the old one).
#pragma once

#include <string>
#include <vector>

#include "floe/common/status.h"
#include "floe/iceberg/schema.h"

namespace floe::schema {

enum class DroppedFields { kKeep, kDrop };

// A subject's compatibility level, as far as evolution cares about it.
enum class Compatibility { kNone, kBackward, kForward, kFull };
// "BACKWARD", "FORWARD_TRANSITIVE", "FULL", "NONE", ... (the registry's names). A level
// this version does not know is kNone with `*known` false (Floe's rules decide).
Compatibility ParseCompatibility(const std::string& level, bool* known = nullptr);

struct EvolutionOptions {
  DroppedFields dropped = DroppedFields::kKeep;
  // Top-level columns the writer never carries and that stay exactly as they are
  // (Floe's `_kafka`, the `key` column of key.format string/registry).
  std::vector<std::string> fixed_columns;
  // The subject's compatibility level, and its name as the registry spelled it (for
  // messages: "BACKWARD_TRANSITIVE").
  Compatibility compatibility = Compatibility::kNone;
  std::string compatibility_name;
  // The writer is a Protobuf schema (integer widenings are wire-compatible both ways).
  bool protobuf = false;
};

struct Evolution {
  iceberg::Schema schema;  // the table's schema after the changes (schema_id unchanged)
  int last_column_id = 0;  // the table's last-column-id after the changes
  // What changed, one line each ("add column a.b (id 7): optional string"); empty when
  // the writer fits the table as it is.
  std::vector<std::string> changes;

  bool changed() const { return !changes.empty(); }
};

// `table`: the table's current schema; `last_column_id`: the table's last-column-id (ids
// are never reused); `writer`: the writer schema's fields (ids ignored).
Result<Evolution> Evolve(const iceberg::Schema& table, int last_column_id,
                         const std::vector<iceberg::NestedField>& writer,
                         const EvolutionOptions& options = {});

}  // namespace floe::schema
