#include "floe/schema/field_ids.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <string>

namespace floe::schema {
namespace {

using iceberg::NestedField;
using iceberg::Type;
using iceberg::TypeId;
using iceberg::TypePtr;

class Assigner {
 public:
  explicit Assigner(int* last) : last_(last) {}

  // Assigns ids to `fresh` (the fields of one struct level) against `old` (the matching
  // existing struct's fields, or null), then recurses into each field's type.
  Result<std::vector<NestedField>> Fields(const std::vector<NestedField>& fresh,
                                          const std::vector<NestedField>* old) {
    std::vector<NestedField> out;
    out.reserve(fresh.size());
    std::vector<const NestedField*> matches;
    matches.reserve(fresh.size());
    for (const auto& f : fresh) {
      const NestedField* match = nullptr;
      if (old != nullptr) {
        for (const auto& o : *old) {
          if (o.name == f.name) {
            match = &o;
            break;
          }
        }
      }
      NestedField copy = f;
      if (match != nullptr) {
        copy.id = match->id;
      } else {
        FLOE_ASSIGN_OR_RAISE(copy.id, Next());
      }
      matches.push_back(match);
      out.push_back(std::move(copy));
    }
    for (size_t i = 0; i < out.size(); ++i) {
      const Type* old_type = matches[i] != nullptr ? matches[i]->type.get() : nullptr;
      FLOE_ASSIGN_OR_RAISE(out[i].type, AssignType(*fresh[i].type, old_type));
    }
    return out;
  }

 private:
  Result<int> Next() {
    if (*last_ == std::numeric_limits<int>::max()) {
      return Status::Invalid("no field ids left: last-column-id is ", *last_);
    }
    return ++*last_;
  }

  Result<TypePtr> AssignType(const Type& fresh, const Type* old) {
    if (fresh.is_primitive()) return std::make_shared<Type>(fresh);
    if (old != nullptr && old->id != fresh.id) old = nullptr;  // kind changed: all new
    auto t = std::make_shared<Type>(fresh);
    if (fresh.id == TypeId::kStruct) {
      FLOE_ASSIGN_OR_RAISE(t->fields, Fields(fresh.fields, old ? &old->fields : nullptr));
      return t;
    }
    // List [element] and map [key, value]: matched by position, ids first, then nested.
    for (size_t i = 0; i < fresh.children.size(); ++i) {
      const NestedField* o =
          old != nullptr && i < old->children.size() ? &old->children[i] : nullptr;
      if (o != nullptr) {
        t->children[i].id = o->id;
      } else {
        FLOE_ASSIGN_OR_RAISE(t->children[i].id, Next());
      }
    }
    for (size_t i = 0; i < fresh.children.size(); ++i) {
      const Type* o = old != nullptr && i < old->children.size()
                          ? old->children[i].type.get()
                          : nullptr;
      FLOE_ASSIGN_OR_RAISE(t->children[i].type, AssignType(*fresh.children[i].type, o));
    }
    return t;
  }

  int* last_;
};

}  // namespace

Result<std::vector<NestedField>> AssignFieldIds(const std::vector<NestedField>& fresh,
                                                const iceberg::Schema* existing,
                                                int* last_column_id) {
  if (last_column_id == nullptr)
    return Status::Invalid("AssignFieldIds: null last_column_id");
  // Work on a copy so a failure leaves the caller's counter alone.
  int last = *last_column_id;
  if (existing != nullptr) last = std::max(last, existing->HighestFieldId());
  Assigner assigner(&last);
  FLOE_ASSIGN_OR_RAISE(
      auto out,
      assigner.Fields(fresh, existing != nullptr ? &existing->fields : nullptr));
  *last_column_id = last;
  return out;
}

}  // namespace floe::schema
