#include "floe/iceberg/schema.h"

#include <algorithm>

namespace floe::iceberg {

TypePtr Type::Primitive(TypeId id) {
  auto t = std::make_shared<Type>();
  t->id = id;
  return t;
}

TypePtr Type::Decimal(int precision, int scale) {
  auto t = std::make_shared<Type>();
  t->id = TypeId::kDecimal;
  t->precision = precision;
  t->scale = scale;
  return t;
}

TypePtr Type::Fixed(int length) {
  auto t = std::make_shared<Type>();
  t->id = TypeId::kFixed;
  t->length = length;
  return t;
}

TypePtr Type::Struct(std::vector<NestedField> fields) {
  auto t = std::make_shared<Type>();
  t->id = TypeId::kStruct;
  t->fields = std::move(fields);
  return t;
}

TypePtr Type::List(int element_id, bool element_required, TypePtr element) {
  auto t = std::make_shared<Type>();
  t->id = TypeId::kList;
  t->children.push_back(
      NestedField{element_id, "element", element_required, std::move(element), {}});
  return t;
}

TypePtr Type::Map(int key_id, TypePtr key, int value_id, bool value_required,
                  TypePtr value) {
  auto t = std::make_shared<Type>();
  t->id = TypeId::kMap;
  t->children.push_back(NestedField{key_id, "key", true, std::move(key), {}});
  t->children.push_back(
      NestedField{value_id, "value", value_required, std::move(value), {}});
  return t;
}

namespace {

bool FieldsEqual(const std::vector<NestedField>& a, const std::vector<NestedField>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].id != b[i].id || a[i].name != b[i].name || a[i].required != b[i].required ||
        a[i].doc != b[i].doc || !TypesEqual(*a[i].type, *b[i].type)) {
      return false;
    }
  }
  return true;
}

int MaxId(const std::vector<NestedField>& fields) {
  int m = 0;
  for (const auto& f : fields) {
    m = std::max(m, f.id);
    m = std::max(m, MaxId(f.type->fields));
    m = std::max(m, MaxId(f.type->children));
  }
  return m;
}

const NestedField* Find(const std::vector<NestedField>& fields, int id) {
  for (const auto& f : fields) {
    if (f.id == id) return &f;
    if (auto* r = Find(f.type->fields, id)) return r;
    if (auto* r = Find(f.type->children, id)) return r;
  }
  return nullptr;
}

}  // namespace

bool TypesEqual(const Type& a, const Type& b) {
  return a.id == b.id && a.precision == b.precision && a.scale == b.scale &&
         a.length == b.length && FieldsEqual(a.fields, b.fields) &&
         FieldsEqual(a.children, b.children);
}

std::string PrimitiveTypeString(const Type& t) {
  switch (t.id) {
    case TypeId::kBoolean:
      return "boolean";
    case TypeId::kInt:
      return "int";
    case TypeId::kLong:
      return "long";
    case TypeId::kFloat:
      return "float";
    case TypeId::kDouble:
      return "double";
    case TypeId::kDecimal:
      return "decimal(" + std::to_string(t.precision) + "," + std::to_string(t.scale) +
             ")";
    case TypeId::kDate:
      return "date";
    case TypeId::kTime:
      return "time";
    case TypeId::kTimestamp:
      return "timestamp";
    case TypeId::kTimestampTz:
      return "timestamptz";
    case TypeId::kString:
      return "string";
    case TypeId::kUuid:
      return "uuid";
    case TypeId::kFixed:
      return "fixed[" + std::to_string(t.length) + "]";
    case TypeId::kBinary:
      return "binary";
    case TypeId::kStruct:
      return "struct";
    case TypeId::kList:
      return "list";
    case TypeId::kMap:
      return "map";
  }
  return "unknown";
}

int Schema::HighestFieldId() const { return MaxId(fields); }

const NestedField* Schema::FindField(int id) const { return Find(fields, id); }

const NestedField* Schema::FindTopLevel(const std::string& name) const {
  for (const auto& f : fields) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

bool SchemasEqual(const Schema& a, const Schema& b) {
  return FieldsEqual(a.fields, b.fields) &&
         a.identifier_field_ids == b.identifier_field_ids;
}

namespace {

TypePtr FreshType(const TypePtr& type, int& next, std::map<int, int>& ids) {
  if (type->id == TypeId::kStruct) {
    std::vector<NestedField> fields = type->fields;
    for (auto& f : fields) f.id = ids[f.id] = ++next;
    for (auto& f : fields) f.type = FreshType(f.type, next, ids);
    return Type::Struct(std::move(fields));
  }
  if (type->id == TypeId::kList) {
    const NestedField& e = type->element();
    int id = ids[e.id] = ++next;
    return Type::List(id, e.required, FreshType(e.type, next, ids));
  }
  if (type->id == TypeId::kMap) {
    const NestedField& k = type->key();
    const NestedField& v = type->value();
    int kid = ids[k.id] = ++next;
    int vid = ids[v.id] = ++next;
    TypePtr kt = FreshType(k.type, next, ids);
    return Type::Map(kid, std::move(kt), vid, v.required, FreshType(v.type, next, ids));
  }
  return type;
}

}  // namespace

Schema AssignFreshIds(const Schema& schema, std::map<int, int>* old_to_new) {
  std::map<int, int> ids;
  int next = 0;
  TypePtr root = FreshType(Type::Struct(schema.fields), next, ids);
  Schema out;
  out.schema_id = schema.schema_id;
  out.fields = root->fields;
  for (int id : schema.identifier_field_ids) {
    auto it = ids.find(id);
    out.identifier_field_ids.push_back(it == ids.end() ? id : it->second);
  }
  if (old_to_new) *old_to_new = std::move(ids);
  return out;
}

}  // namespace floe::iceberg
