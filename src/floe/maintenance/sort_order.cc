#include "floe/maintenance/sort_order.h"

#include "floe/config/config.h"
#include "floe/table/table_properties.h"

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

// Whether the field `id` is a primitive reached through structs only (what a rewrite can
// sort by).
bool ThroughStructs(const std::vector<iceberg::NestedField>& fields, int id) {
  for (const auto& f : fields) {
    if (f.id == id) return f.type->is_primitive();
    if (f.type->id == iceberg::TypeId::kStruct && ThroughStructs(f.type->fields, id)) {
      return true;
    }
  }
  return false;
}

}  // namespace

Result<iceberg::SortOrder> RewriteSortOrder(const iceberg::TableMetadata& md) {
  const iceberg::Schema* schema = md.CurrentSchema();
  if (schema == nullptr) return InvalidInput("the table has no current schema");
  auto property = md.properties.find(table::kCompactionSortOrderProperty);
  if (property == md.properties.end() || property->second.empty()) {
    const iceberg::SortOrder* current = md.SortOrderById(md.default_sort_order_id);
    if (current == nullptr) return iceberg::SortOrder{};
    for (const auto& field : current->fields) {
      if (field.transform != "identity" ||
          !ThroughStructs(schema->fields, field.source_id)) {
        return iceberg::SortOrder{};  // not one a rewrite can apply: rows unsorted
      }
    }
    return *current;
  }
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

Status EnsureDefaultSortOrder(catalog::Catalog& catalog, const catalog::TableIdent& ident,
                              iceberg::TableMetadata* md, iceberg::SortOrder* order) {
  if (order->is_unsorted()) return Status::OK();
  for (int attempt = 0; attempt < 5; ++attempt) {
    const iceberg::SortOrder* known = md->SortOrderById(order->order_id);
    if (known != nullptr && iceberg::SortOrdersEquivalent(*known, *order) &&
        md->default_sort_order_id == order->order_id) {
      return Status::OK();
    }
    catalog::TableCommit commit{
        ident,
        {iceberg::requirement::AssertTableUuid{md->table_uuid},
         iceberg::requirement::AssertDefaultSortOrderId{md->default_sort_order_id}},
        {iceberg::update::AddSortOrder{*order},
         iceberg::update::SetDefaultSortOrder{-1}}};
    auto committed = catalog.CommitTable(std::move(commit), catalog::Writer::kFloe);
    if (!committed.ok() && KindOf(committed.status()) != ErrorKind::kConflict &&
        KindOf(committed.status()) != ErrorKind::kStateUnknown) {
      return WithContext(committed.status(),
                         "recording the sort order of " + ident.ToString());
    }
    // Applied, lost to another writer or unknown: the table as it is now says which.
    FLOE_ASSIGN_OR_RAISE(auto loaded, catalog.LoadTable(ident));
    *md = std::move(loaded.metadata);
    order->order_id = iceberg::SortOrderIdIn(*md, *order);
  }
  return Retriable("the sort order of " + ident.ToString() +
                   " kept changing while Floe recorded its own");
}

}  // namespace floe::maintenance
