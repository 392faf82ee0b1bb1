#include "floe/schema/table_schema.h"

#include <utility>

#include "floe/schema/field_ids.h"
#include "floe/schema/rename_hints.h"

namespace floe::schema {

using iceberg::NestedField;
using iceberg::Type;
using iceberg::TypeId;

NestedField KafkaMetadataField() {
  auto header = Type::Struct({
      NestedField{0, "key", true, Type::Primitive(TypeId::kString), "header key"},
      NestedField{0, "value", false, Type::Primitive(TypeId::kBinary),
                  "header value bytes"},
  });
  auto kafka = Type::Struct({
      NestedField{0, "partition", true, Type::Primitive(TypeId::kInt), "Kafka partition"},
      NestedField{0, "offset", true, Type::Primitive(TypeId::kLong), "Kafka offset"},
      NestedField{0, "timestamp", false, Type::Primitive(TypeId::kTimestampTz),
                  "Kafka record timestamp"},
      NestedField{0, "key", false, Type::Primitive(TypeId::kBinary),
                  "raw Kafka key bytes"},
      NestedField{0, "headers", false, Type::List(0, true, std::move(header)),
                  "Kafka record headers in order"},
  });
  return NestedField{0, kKafkaColumn, true, std::move(kafka), "Kafka record metadata"};
}

Result<iceberg::Schema> BuildTableSchema(const std::vector<NestedField>& value_fields,
                                         const iceberg::Schema* existing,
                                         int* last_column_id) {
  std::vector<NestedField> fresh;
  fresh.reserve(value_fields.size() + 1);
  for (const auto& f : value_fields) {
    if (f.name == kKafkaColumn) {
      return InvalidConfig(
          "value field '_kafka' collides with Floe's '_kafka' metadata column; rename "
          "the "
          "field in the value schema");
    }
    fresh.push_back(f);
  }
  fresh.push_back(KafkaMetadataField());
  iceberg::Schema out;
  FLOE_ASSIGN_OR_RAISE(out.fields, AssignFieldIds(fresh, existing, last_column_id));
  // Avro aliases of a new table's fields become their former names: one name per field
  // and level (rename_hints.h).
  NormalizeAliases(&out.fields);
  if (existing != nullptr) {
    out.schema_id = existing->schema_id;
    for (int id : existing->identifier_field_ids) {
      if (out.FindField(id) != nullptr) out.identifier_field_ids.push_back(id);
    }
  }
  return out;
}

}  // namespace floe::schema
