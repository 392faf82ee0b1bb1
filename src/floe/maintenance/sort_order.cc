#include "floe/maintenance/sort_order.h"

#include "floe/common/util.h"
#include "floe/config/config.h"
#include "floe/table/commit_driver.h"
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

// The table's default sort order made `order` (added when the table lacks it), in a
// commit of its own: nothing to do once it is.
class SortOrderUpdate final : public table::SnapshotUpdate {
 public:
  explicit SortOrderUpdate(const iceberg::SortOrder* order) : order_(order) {}

  Result<std::optional<table::Attempt>> Prepare(const iceberg::TableMetadata& base,
                                                int64_t /*now_ms*/) override {
    if (IsCommittedIn(base)) return std::optional<table::Attempt>();
    iceberg::SortOrder order = *order_;
    order.order_id = iceberg::SortOrderIdIn(base, order);
    table::Attempt a;
    a.requirements = {
        iceberg::requirement::AssertTableUuid{base.table_uuid},
        iceberg::requirement::AssertDefaultSortOrderId{base.default_sort_order_id}};
    a.updates = {iceberg::update::AddSortOrder{std::move(order)},
                 iceberg::update::SetDefaultSortOrder{-1}};
    return std::optional<table::Attempt>(std::move(a));
  }
  bool IsCommittedIn(const iceberg::TableMetadata& md) const override {
    const int id = iceberg::SortOrderIdIn(md, *order_);
    const iceberg::SortOrder* known = md.SortOrderById(id);
    return known != nullptr && iceberg::SortOrdersEquivalent(*known, *order_) &&
           md.default_sort_order_id == id;
  }

 private:
  const iceberg::SortOrder* order_;
};

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

Status EnsureDefaultSortOrder(catalog::Catalog& catalog, storage::FileIO& io,
                              const catalog::TableIdent& ident,
                              iceberg::TableMetadata* md, iceberg::SortOrder* order) {
  if (order->is_unsorted()) return Status::OK();
  SortOrderUpdate update(order);
  table::CommitPolicy policy;
  policy.what = "recording the sort order of " + ident.ToString();
  policy.max_attempts = 5;
  FLOE_ASSIGN_OR_RAISE(auto committed, table::CommitUpdate(catalog, io, ident, update,
                                                           policy, NowMs, *md));
  if (committed.table) *md = std::move(committed.table->metadata);
  order->order_id = iceberg::SortOrderIdIn(*md, *order);
  return Status::OK();
}

}  // namespace floe::maintenance
