#include "floe/maintenance/sort_order.h"

#include "floe/config/config.h"
#include "floe/pipeline/table_properties.h"

namespace floe::maintenance {
namespace {

// The field `path` ("a.b.c") names in `schema`: through structs only, a primitive at the
// end.
Result<const iceberg::NestedField*> FieldAt(const iceberg::Schema& schema,
                                            const std::string& path,
                                            const std::string& what) {
  const std::vector<iceberg::NestedField>* fields = &schema.fields;
  const iceberg::NestedField* found = nullptr;
  size_t pos = 0;
  while (pos <= path.size()) {
    size_t dot = path.find('.', pos);
    if (dot == std::string::npos) dot = path.size();
    const std::string name = path.substr(pos, dot - pos);
    if (fields == nullptr) {
      return InvalidInput(what + ": " + path.substr(0, pos - 1) +
                          " is not a struct; only struct fields can be sorted by");
    }
    found = nullptr;
    for (const auto& f : *fields) {
      if (f.name == name) found = &f;
    }
    if (found == nullptr) {
      return InvalidInput(what + ": the table's current schema has no column " +
                          path.substr(0, dot));
    }
    fields = found->type->id == iceberg::TypeId::kStruct ? &found->type->fields : nullptr;
    pos = dot + 1;
  }
  if (!found->type->is_primitive()) {
    return InvalidInput(what + ": column " + path +
                        " is a struct, list or map; sort by a primitive column");
  }
  return found;
}

}  // namespace

Result<iceberg::SortOrder> RewriteSortOrder(const iceberg::TableMetadata& md) {
  auto property = md.properties.find(pipeline::kCompactionSortOrderProperty);
  if (property == md.properties.end()) {
    const iceberg::SortOrder* current = md.SortOrderById(md.default_sort_order_id);
    return current != nullptr ? *current : iceberg::SortOrder{};
  }
  const iceberg::Schema* schema = md.CurrentSchema();
  if (schema == nullptr) return InvalidInput("the table has no current schema");
  const std::string what = "compaction.sort.order '" + property->second + "'";
  FLOE_ASSIGN_OR_RAISE(auto columns, config::ParseSortOrder(property->second));
  iceberg::SortOrder order;
  for (const auto& column : columns) {
    FLOE_ASSIGN_OR_RAISE(const iceberg::NestedField* field,
                         FieldAt(*schema, column.path, what));
    iceberg::SortField sort_field;
    sort_field.source_id = field->id;
    sort_field.direction = column.descending ? "desc" : "asc";
    sort_field.null_order = column.descending ? "nulls-last" : "nulls-first";
    order.fields.push_back(std::move(sort_field));
  }
  order.order_id = iceberg::SortOrderIdIn(md, order);
  return order;
}

}  // namespace floe::maintenance
