// The compatibility rules of schema::Evolve, one table row per rule, positive and
// negative, at top level and nested (struct fields, list elements, map values). Schemas
// are written and compared in a compact notation: "id:name:req|opt:type", structs as
// struct<...>, lists as list<id:req|opt:type>, maps as map<id:type,id:req|opt:type>.
#include "floe/schema/evolution.h"

#include <gtest/gtest.h>

#include <cctype>
#include <string>
#include <vector>

// The case table leaves trailing members (error) at their defaults.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace floe::schema {
namespace {

using iceberg::NestedField;
using iceberg::Type;
using iceberg::TypeId;
using iceberg::TypePtr;

// --- building schemas
// --------------------------------------------------------------------

TypePtr P(TypeId id) { return Type::Primitive(id); }
NestedField F(int id, std::string name, bool required, TypePtr type) {
  return NestedField{id, std::move(name), required, std::move(type), {}};
}
// Writer fields carry no ids (Evolve assigns them).
NestedField W(std::string name, bool required, TypePtr type) {
  return F(0, std::move(name), required, std::move(type));
}
NestedField WithDefault(NestedField f) {
  f.has_default = true;
  return f;
}
// Rename hints: Avro aliases on a writer field, former names on a table field.
NestedField WithAliases(NestedField f, std::vector<std::string> aliases) {
  f.aliases = std::move(aliases);
  return f;
}
// A Protobuf field number.
NestedField Numbered(NestedField f, int number) {
  f.field_number = number;
  return f;
}
TypePtr S(std::vector<NestedField> fields) { return Type::Struct(std::move(fields)); }
TypePtr L(int element_id, bool required, TypePtr element) {
  return Type::List(element_id, required, std::move(element));
}
TypePtr M(int key_id, TypePtr key, int value_id, bool required, TypePtr value) {
  return Type::Map(key_id, std::move(key), value_id, required, std::move(value));
}

// --- rendering
// ---------------------------------------------------------------------------

std::string Render(const Type& t);
// A field's rename hints follow its name: "title(name|label)#2" = former names or
// aliases name and label, Protobuf field number 2.
std::string Hints(const NestedField& f) {
  std::string out;
  for (const auto& a : f.aliases) out += (out.empty() ? "(" : "|") + a;
  if (!out.empty()) out += ")";
  if (f.field_number != 0) out += "#" + std::to_string(f.field_number);
  return out;
}
std::string Render(const NestedField& f, bool with_name = true) {
  return std::to_string(f.id) + ":" + (with_name ? f.name + Hints(f) + ":" : "") +
         (f.required ? "req" : "opt") + ":" + Render(*f.type);
}
std::string Render(const std::vector<NestedField>& fields) {
  std::string out;
  for (const auto& f : fields) out += (out.empty() ? "" : ",") + Render(f);
  return out;
}
std::string Render(const Type& t) {
  switch (t.id) {
    case TypeId::kStruct:
      return "struct<" + Render(t.fields) + ">";
    case TypeId::kList:
      return "list<" + Render(t.element(), false) + ">";
    case TypeId::kMap:
      return "map<" + std::to_string(t.key().id) + ":" + Render(*t.key().type) + "," +
             Render(t.value(), false) + ">";
    default:
      return iceberg::PrimitiveTypeString(t);
  }
}

// --- the table of cases
// ------------------------------------------------------------------

struct Case {
  std::string name;
  std::vector<NestedField> table;
  int last_column_id;
  std::vector<NestedField> writer;
  DroppedFields dropped = DroppedFields::kKeep;
  // Expected: the schema after evolution (compact notation) and its last-column-id, or,
  // for an incompatible writer, a piece of the error message.
  std::string schema;
  int last = 0;
  size_t changes = 0;
  std::string error;
};

const TypePtr kInt = P(TypeId::kInt);
const TypePtr kLong = P(TypeId::kLong);
const TypePtr kFloat = P(TypeId::kFloat);
const TypePtr kDouble = P(TypeId::kDouble);
const TypePtr kString = P(TypeId::kString);
const TypePtr kBinary = P(TypeId::kBinary);
const TypePtr kDate = P(TypeId::kDate);
const TypePtr kTs = P(TypeId::kTimestamp);
const TypePtr kTsTz = P(TypeId::kTimestampTz);

std::vector<Case> Cases() {
  const std::vector<NestedField> ab = {F(1, "a", true, kInt), F(2, "b", false, kString)};
  const auto point = [](int first) {  // struct<x:int req, y:int opt>
    return S({F(first, "x", true, kInt), F(first + 1, "y", false, kInt)});
  };
  return {
      // --- top level: nothing, adds, drops
      {"identical",
       ab,
       2,
       {W("a", true, kInt), W("b", false, kString)},
       {},
       "1:a:req:int,2:b:opt:string",
       2,
       0},
      {"writer field order does not matter",
       ab,
       2,
       {W("b", false, kString), W("a", true, kInt)},
       {},
       "1:a:req:int,2:b:opt:string",
       2,
       0},
      {"add an optional field",
       ab,
       2,
       {W("a", true, kInt), W("b", false, kString), W("c", false, kLong)},
       {},
       "1:a:req:int,2:b:opt:string,3:c:opt:long",
       3,
       1},
      {"add a required field with a default: the column is optional",
       ab,
       2,
       {W("a", true, kInt), W("b", false, kString), WithDefault(W("c", true, kLong))},
       {},
       "1:a:req:int,2:b:opt:string,3:c:opt:long",
       3,
       1},
      {"a new required field without a default is incompatible",
       ab,
       2,
       {W("a", true, kInt), W("b", false, kString), W("c", true, kLong)},
       {},
       "",
       0,
       0,
       "field c: it is new, required and has no default"},
      {"a new required field without a default inside a new struct is fine",
       ab,
       2,
       {W("a", true, kInt), W("b", false, kString),
        W("s", false, S({W("x", true, kInt)}))},
       {},
       "1:a:req:int,2:b:opt:string,3:s:opt:struct<4:x:req:int>",
       4,
       1},
      {"new ids start above last-column-id (ids are never reused)",
       ab,
       7,
       {W("a", true, kInt), W("b", false, kString), W("c", false, kLong)},
       {},
       "1:a:req:int,2:b:opt:string,8:c:opt:long",
       8,
       1},
      {"a dropped name added again is a new column",
       ab,
       9,
       {W("a", true, kInt), W("d", false, kString)},
       DroppedFields::kDrop,
       "1:a:req:int,10:d:opt:string",
       10,
       2},
      {"writer lacks a required field: kept, optional",
       ab,
       2,
       {W("b", false, kString)},
       {},
       "1:a:opt:int,2:b:opt:string",
       2,
       1},
      {"writer lacks an optional field: kept as is",
       ab,
       2,
       {W("a", true, kInt)},
       {},
       "1:a:req:int,2:b:opt:string",
       2,
       0},
      {"writer lacks a field, drop mode: removed",
       ab,
       2,
       {W("a", true, kInt)},
       DroppedFields::kDrop,
       "1:a:req:int",
       2,
       1},
      {"several changes at once",
       ab,
       2,
       {W("a", false, kLong), W("c", false, kString)},
       {},
       "1:a:opt:long,2:b:opt:string,3:c:opt:string",
       3,
       3},
      // --- top level: types
      {"int to long widens",
       ab,
       2,
       {W("a", true, kLong), W("b", false, kString)},
       {},
       "1:a:req:long,2:b:opt:string",
       2,
       1},
      {"float to double widens",
       {F(1, "f", false, kFloat)},
       1,
       {W("f", false, kDouble)},
       {},
       "1:f:opt:double",
       1,
       1},
      {"int into a long column fits",
       {F(1, "a", true, kLong)},
       1,
       {W("a", true, kInt)},
       {},
       "1:a:req:long",
       1,
       0},
      {"float into a double column fits",
       {F(1, "f", true, kDouble)},
       1,
       {W("f", true, kFloat)},
       {},
       "1:f:req:double",
       1,
       0},
      {"decimal precision up widens",
       {F(1, "d", true, Type::Decimal(10, 2))},
       1,
       {W("d", true, Type::Decimal(12, 2))},
       {},
       "1:d:req:decimal(12,2)",
       1,
       1},
      {"a narrower decimal fits",
       {F(1, "d", true, Type::Decimal(12, 2))},
       1,
       {W("d", true, Type::Decimal(10, 2))},
       {},
       "1:d:req:decimal(12,2)",
       1,
       0},
      {"decimal scale change is incompatible",
       {F(1, "d", true, Type::Decimal(10, 2))},
       1,
       {W("d", true, Type::Decimal(12, 3))},
       {},
       "",
       0,
       0,
       "field d: the table has decimal"},
      {"long to int narrows: incompatible",
       {F(1, "a", true, kInt)},
       1,
       {W("a", true, kString)},
       {},
       "",
       0,
       0,
       "the table has int, the writer string"},
      {"long into an int column is a widening, not a fit",
       {F(1, "a", true, kInt)},
       1,
       {W("a", true, kLong)},
       {},
       "1:a:req:long",
       1,
       1},
      {"long to double is incompatible",
       {F(1, "a", true, kLong)},
       1,
       {W("a", true, kDouble)},
       {},
       "",
       0,
       0,
       "field a: the table has long"},
      {"double into a float column widens",
       {F(1, "a", true, kFloat)},
       1,
       {W("a", true, kDouble)},
       {},
       "1:a:req:double",
       1,
       1},
      {"float to long is incompatible",
       {F(1, "a", true, kFloat)},
       1,
       {W("a", true, kLong)},
       {},
       "",
       0,
       0,
       "field a"},
      {"string to binary is incompatible",
       {F(1, "s", false, kString)},
       1,
       {W("s", false, kBinary)},
       {},
       "",
       0,
       0,
       "the writer binary"},
      {"date to timestamp is incompatible",
       {F(1, "t", false, kDate)},
       1,
       {W("t", false, kTs)},
       {},
       "",
       0,
       0,
       "field t"},
      {"timestamp to timestamptz is incompatible",
       {F(1, "t", false, kTs)},
       1,
       {W("t", false, kTsTz)},
       {},
       "",
       0,
       0,
       "field t"},
      {"fixed length change is incompatible",
       {F(1, "x", false, Type::Fixed(16))},
       1,
       {W("x", false, Type::Fixed(8))},
       {},
       "",
       0,
       0,
       "field x"},
      {"required column the writer makes optional",
       ab,
       2,
       {W("a", false, kInt), W("b", false, kString)},
       {},
       "1:a:opt:int,2:b:opt:string",
       2,
       1},
      {"optional column the writer requires: no change",
       ab,
       2,
       {W("a", true, kInt), W("b", true, kString)},
       {},
       "1:a:req:int,2:b:opt:string",
       2,
       0},
      // --- structs
      {"add a field inside a struct",
       {F(1, "p", false, point(2))},
       3,
       {W("p", false, S({W("x", true, kInt), W("y", false, kInt), W("z", false, kInt)}))},
       {},
       "1:p:opt:struct<2:x:req:int,3:y:opt:int,4:z:opt:int>",
       4,
       1},
      {"widen inside a struct",
       {F(1, "p", false, point(2))},
       3,
       {W("p", false, S({W("x", true, kLong), W("y", false, kInt)}))},
       {},
       "1:p:opt:struct<2:x:req:long,3:y:opt:int>",
       3,
       1},
      {"struct field the writer lacks: kept, optional",
       {F(1, "p", false, point(2))},
       3,
       {W("p", false, S({W("y", false, kInt)}))},
       {},
       "1:p:opt:struct<2:x:opt:int,3:y:opt:int>",
       3,
       1},
      {"struct field the writer lacks, drop mode",
       {F(1, "p", false, point(2))},
       3,
       {W("p", false, S({W("y", false, kInt)}))},
       DroppedFields::kDrop,
       "1:p:opt:struct<3:y:opt:int>",
       3,
       1},
      {"a new struct column: fresh ids, its own requiredness inside",
       ab,
       2,
       {W("a", true, kInt), W("b", false, kString),
        W("q", false, S({W("u", true, kInt), W("v", false, kString)}))},
       {},
       "1:a:req:int,2:b:opt:string,3:q:opt:struct<4:u:req:int,5:v:opt:string>",
       5,
       1},
      {"struct to string changes kind: incompatible",
       {F(1, "p", false, point(2))},
       3,
       {W("p", false, kString)},
       {},
       "",
       0,
       0,
       "field p: the table has struct"},
      {"string to struct changes kind: incompatible",
       {F(1, "p", false, kString)},
       1,
       {W("p", false, S({W("x", true, kInt)}))},
       {},
       "",
       0,
       0,
       "a column never changes kind"},
      {"incompatible deep inside a struct names the path",
       {F(1, "o", false, S({F(2, "p", false, point(3))}))},
       4,
       {W("o", false,
          S({W("p", false, S({W("x", true, kString), W("y", false, kInt)}))}))},
       {},
       "",
       0,
       0,
       "field o.p.x"},
      // --- lists
      {"list element int to long",
       {F(1, "l", false, L(2, true, kInt))},
       2,
       {W("l", false, L(0, true, kLong))},
       {},
       "1:l:opt:list<2:req:long>",
       2,
       1},
      {"add a field to a list's element struct",
       {F(1, "l", false, L(2, true, point(3)))},
       4,
       {W("l", false,
          L(0, true,
            S({W("x", true, kInt), W("y", false, kInt), W("z", false, kString)})))},
       {},
       "1:l:opt:list<2:req:struct<3:x:req:int,4:y:opt:int,5:z:opt:string>>",
       5,
       1},
      {"list element becomes optional",
       {F(1, "l", false, L(2, true, kInt))},
       2,
       {W("l", false, L(0, false, kInt))},
       {},
       "1:l:opt:list<2:opt:int>",
       2,
       1},
      {"list element string to int is incompatible",
       {F(1, "l", false, L(2, true, kString))},
       2,
       {W("l", false, L(0, true, kInt))},
       {},
       "",
       0,
       0,
       "field l.element"},
      {"list to map changes kind: incompatible",
       {F(1, "l", false, L(2, true, kString))},
       2,
       {W("l", false, M(0, kString, 0, false, kString))},
       {},
       "",
       0,
       0,
       "field l"},
      {"a new list column gets fresh element ids",
       ab,
       2,
       {W("a", true, kInt), W("b", false, kString),
        W("tags", false, L(0, true, kString))},
       {},
       "1:a:req:int,2:b:opt:string,3:tags:opt:list<4:req:string>",
       4,
       1},
      // --- maps
      {"map value int to long",
       {F(1, "m", false, M(2, kString, 3, false, kInt))},
       3,
       {W("m", false, M(0, kString, 0, false, kLong))},
       {},
       "1:m:opt:map<2:string,3:opt:long>",
       3,
       1},
      {"map key change is incompatible",
       {F(1, "m", false, M(2, kString, 3, false, kInt))},
       3,
       {W("m", false, M(0, kInt, 0, false, kInt))},
       {},
       "",
       0,
       0,
       "field m.key"},
      {"add a field to a map's value struct",
       {F(1, "m", false, M(2, kString, 3, false, point(4)))},
       5,
       {W("m", false,
          M(0, kString, 0, false,
            S({W("x", true, kInt), W("y", false, kInt), W("w", false, kInt)})))},
       {},
       "1:m:opt:map<2:string,3:opt:struct<4:x:req:int,5:y:opt:int,6:w:opt:int>>",
       6,
       1},
      // --- renames (Avro aliases, former names, Protobuf field numbers)
      {"rename by an Avro alias keeps the id",
       {F(1, "id", true, kLong), F(2, "name", false, kString)},
       2,
       {W("id", true, kLong), WithAliases(W("title", false, kString), {"name"})},
       {},
       "1:id:req:long,2:title(name):opt:string",
       2,
       1},
      {"an older producer writing a former name maps to the renamed column",
       {F(1, "id", true, kLong), WithAliases(F(2, "title", false, kString), {"name"})},
       2,
       {W("id", true, kLong), W("name", false, kString)},
       {},
       "1:id:req:long,2:title(name):opt:string",
       2,
       0},
      {"rename and widen at once",
       {F(1, "n", true, kInt)},
       1,
       {WithAliases(W("m", true, kLong), {"n"})},
       {},
       "1:m(n):req:long",
       1,
       2},
      {"rename a field nested in a struct",
       {F(1, "s", false, S({F(2, "a", false, kInt), F(3, "c", false, kInt)}))},
       3,
       {W("s", false, S({WithAliases(W("b", false, kInt), {"a"}), W("c", false, kInt)}))},
       {},
       "1:s:opt:struct<2:b(a):opt:int,3:c:opt:int>",
       3,
       1},
      {"rename a field of a list element struct",
       {F(1, "l", false, L(2, true, S({F(3, "a", false, kString)})))},
       3,
       {W("l", false, L(0, true, S({WithAliases(W("b", false, kString), {"a"})})))},
       {},
       "1:l:opt:list<2:req:struct<3:b(a):opt:string>>",
       3,
       1},
      {"rename a struct column: its fields keep their ids",
       {F(1, "p", false, point(2))},
       3,
       {WithAliases(W("q", false, S({W("x", true, kInt), W("y", false, kInt)})), {"p"})},
       {},
       "1:q(p):opt:struct<2:x:req:int,3:y:opt:int>",
       3,
       1},
      {"rename back to a former name",
       {F(1, "id", true, kLong), WithAliases(F(2, "title", false, kString), {"name"})},
       2,
       {W("id", true, kLong), WithAliases(W("name", false, kString), {"title"})},
       {},
       "1:id:req:long,2:name(title):opt:string",
       2,
       1},
      {"an alias naming a column the writer also has is not a rename",
       {F(1, "a", false, kInt)},
       1,
       {W("a", false, kInt), WithAliases(W("b", false, kInt), {"a"})},
       {},
       "1:a:opt:int,2:b:opt:int",
       2,
       1},
      {"a new field keeps its aliases as former names",
       {F(1, "a", false, kInt)},
       1,
       {W("a", false, kInt), WithAliases(W("c", false, kString), {"z"})},
       {},
       "1:a:opt:int,2:c(z):opt:string",
       2,
       1},
      {"a rename in drop mode keeps the column",
       {F(1, "a", false, kInt), F(2, "b", false, kString)},
       2,
       {WithAliases(W("c", false, kString), {"b"})},
       DroppedFields::kDrop,
       "2:c(b):opt:string",
       2,
       2},
      {"a new name without a hint is an add, not a rename",
       {F(1, "name", false, kString)},
       1,
       {W("title", false, kString)},
       {},
       "1:name:opt:string,2:title:opt:string",
       2,
       1},
      {"two writer fields claiming one column are incompatible",
       {F(1, "a", false, kInt)},
       1,
       {WithAliases(W("b", false, kInt), {"a"}), WithAliases(W("c", false, kInt), {"a"})},
       {},
       "",
       0,
       0,
       "fields b and c both claim column a"},
      {"aliases naming two columns are incompatible",
       {F(1, "a", false, kInt), F(2, "b", false, kInt)},
       2,
       {WithAliases(W("c", false, kInt), {"a", "b"})},
       {},
       "",
       0,
       0,
       "field c matches columns a and b"},
      {"a nested ambiguity names its path",
       {F(1, "s", false, S({F(2, "a", false, kInt)}))},
       2,
       {W("s", false,
          S({WithAliases(W("b", false, kInt), {"a"}),
             WithAliases(W("c", false, kInt), {"a"})}))},
       {},
       "",
       0,
       0,
       "fields s.b and s.c both claim column s.a"},
      {"an alias never renames _kafka",
       {F(1, "a", true, kInt), F(2, "_kafka", true, S({F(3, "offset", true, kLong)}))},
       3,
       {W("a", true, kInt),
        WithAliases(W("k", false, S({W("offset", true, kLong)})), {"_kafka"})},
       {},
       "",
       0,
       0,
       "its aliases name Floe's own column _kafka"},
      {"an incompatible type under a rename is incompatible",
       {F(1, "a", false, kString)},
       1,
       {WithAliases(W("b", false, kInt), {"a"})},
       {},
       "",
       0,
       0,
       "the table has string, the writer int"},
      {"Protobuf: renamed under the same field number",
       {Numbered(F(1, "id", true, kLong), 1), Numbered(F(2, "name", false, kString), 2)},
       2,
       {Numbered(W("id", true, kLong), 1), Numbered(W("title", false, kString), 2)},
       {},
       "1:id#1:req:long,2:title(name)#2:opt:string",
       2,
       1},
      {"Protobuf: an older producer with the former name and number maps to the column",
       {Numbered(F(1, "id", true, kLong), 1),
        Numbered(WithAliases(F(2, "title", false, kString), {"name"}), 2)},
       2,
       {Numbered(W("id", true, kLong), 1), Numbered(W("name", false, kString), 2)},
       {},
       "1:id#1:req:long,2:title(name)#2:opt:string",
       2,
       0},
      {"Protobuf: a new name under another number is a new column",
       {Numbered(F(1, "name", false, kString), 2)},
       1,
       {Numbered(W("title", false, kString), 3)},
       {},
       "1:name#2:opt:string,2:title#3:opt:string",
       2,
       1},
      {"Protobuf: a former name under another number is a new column",
       {Numbered(WithAliases(F(2, "title", false, kString), {"name"}), 2)},
       2,
       {Numbered(W("title", false, kString), 2), Numbered(W("name", false, kString), 5)},
       {},
       "2:title#2:opt:string,3:name#5:opt:string",
       3,
       1},
      {"Protobuf: a rename in a nested message",
       {F(1, "m", false, S({Numbered(F(2, "a", false, kInt), 1)}))},
       2,
       {W("m", false, S({Numbered(W("b", false, kLong), 1)}))},
       {},
       "1:m:opt:struct<2:b(a)#1:opt:long>",
       2,
       2},
      {"Protobuf: the table learns numbers of columns matched by name",
       {F(1, "a", false, kInt)},
       1,
       {Numbered(W("a", false, kInt), 4)},
       {},
       "1:a#4:opt:int",
       1,
       0},
      // --- Floe's fixed columns
      {"_kafka stays as it is though the writer lacks it",
       {F(1, "a", true, kInt), F(2, "_kafka", true, S({F(3, "offset", true, kLong)}))},
       3,
       {W("a", true, kInt)},
       DroppedFields::kDrop,
       "1:a:req:int,2:_kafka:req:struct<3:offset:req:long>",
       3,
       0},
      {"a writer field named like a fixed column is incompatible",
       {F(1, "a", true, kInt)},
       1,
       {W("a", true, kInt), W("_kafka", false, kString)},
       {},
       "",
       0,
       0,
       "collides with Floe's own column"},
  };
}

class EvolveTest : public ::testing::TestWithParam<Case> {};

TEST_P(EvolveTest, Rule) {
  const Case& c = GetParam();
  iceberg::Schema table;
  table.schema_id = 3;
  table.fields = c.table;
  EvolutionOptions options;
  options.dropped = c.dropped;
  options.fixed_columns = {"_kafka", "key"};
  auto out = Evolve(table, c.last_column_id, c.writer, options);
  if (!c.error.empty()) {
    ASSERT_FALSE(out.ok()) << Render(out->schema.fields);
    EXPECT_EQ(KindOf(out.status()), ErrorKind::kSuspend);
    EXPECT_NE(out.status().message().find(c.error), std::string::npos)
        << out.status().message();
    return;
  }
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(Render(out->schema.fields), c.schema);
  EXPECT_EQ(out->last_column_id, c.last);
  EXPECT_EQ(out->schema.schema_id, 3);
  std::string changes;
  for (const auto& line : out->changes) changes += "\n  " + line;
  EXPECT_EQ(out->changes.size(), c.changes) << changes;
  // Applying the result again changes nothing: the evolved table takes the writer as is.
  auto again = Evolve(out->schema, out->last_column_id, c.writer, options);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_FALSE(again->changed() && c.dropped == DroppedFields::kKeep)
      << Render(again->schema.fields);
}

INSTANTIATE_TEST_SUITE_P(Rules, EvolveTest, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<Case>& param) {
                           std::string name;
                           for (char ch : param.param.name) {
                             name +=
                                 std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
                           }
                           return name;
                         });

TEST(EvolveTest, ChangesSayWhatChanged) {
  iceberg::Schema table;
  table.fields = {F(1, "a", true, kInt), F(2, "b", true, kString)};
  auto out = Evolve(table, 2, {W("a", true, kLong), W("c", false, kString)});
  ASSERT_TRUE(out.ok());
  ASSERT_EQ(out->changes.size(), 3u);
  EXPECT_EQ(out->changes[0], "widen a int → long");
  EXPECT_EQ(out->changes[1],
            "make b optional (the writer no longer has it: new rows carry null)");
  EXPECT_EQ(out->changes[2], "add column c (id 3): optional string");
}

TEST(EvolveTest, ARenameSaysOldAndNewPathAndId) {
  iceberg::Schema table;
  table.fields = {F(1, "s", false, S({F(2, "a", false, kInt)})), F(3, "b", true, kInt)};
  auto out = Evolve(table, 3,
                    {W("s", false, S({WithAliases(W("c", false, kInt), {"a"})})),
                     WithAliases(W("d", true, kInt), {"b"})});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_EQ(out->changes.size(), 2u);
  EXPECT_EQ(out->changes[0], "rename column s.a → s.c (id 2)");
  EXPECT_EQ(out->changes[1], "rename column b → d (id 3)");
}

TEST(EvolveTest, IdentifierFieldsStayWhileRequired) {
  iceberg::Schema table;
  table.fields = {F(1, "id", true, kLong), F(2, "v", true, kString)};
  table.identifier_field_ids = {1, 2};
  auto out = Evolve(table, 2, {W("id", true, kLong)});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->schema.identifier_field_ids, std::vector<int>{1});  // v became optional
}

}  // namespace
}  // namespace floe::schema

namespace floe::schema {
namespace {

// The subject's compatibility level on top of Floe's rules: each row is one change under
// one level, allowed (error empty) or refused naming the level.
struct LevelCase {
  std::string name;
  std::string level;
  bool protobuf;
  std::vector<NestedField> writer;
  std::string error;  // empty: allowed
};

TEST(EvolveTest, TheCompatibilityLevelRulesOutWhatItsReadersCannotRead) {
  iceberg::Schema table;
  table.fields = {F(1, "a", true, kInt), F(2, "b", false, kFloat),
                  F(3, "c", true, kString), F(4, "d", false, kString)};
  const auto a = W("a", true, kInt);
  const auto b = W("b", false, kFloat);
  const auto c = W("c", true, kString);
  const auto d = W("d", false, kString);
  const std::vector<LevelCase> cases = {
      {"NONE allows a widening", "NONE", false, {W("a", true, kLong), b, c, d}, ""},
      {"BACKWARD allows a widening",
       "BACKWARD",
       false,
       {W("a", true, kLong), b, c, d},
       ""},
      {"FORWARD refuses a widening",
       "FORWARD",
       false,
       {W("a", true, kLong), b, c, d},
       "level FORWARD (schema registry) refuses field a: widening int → long"},
      {"FULL refuses float → double",
       "FULL",
       false,
       {a, W("b", false, kDouble), c, d},
       "level FULL (schema registry) refuses field b"},
      {"FORWARD allows Protobuf int → long (wire-compatible)",
       "FORWARD",
       true,
       {W("a", true, kLong), b, c, d},
       ""},
      {"FORWARD still refuses Protobuf float → double",
       "FORWARD_TRANSITIVE",
       true,
       {a, W("b", false, kDouble), c, d},
       "FORWARD_TRANSITIVE (schema registry)"},
      {"BACKWARD names itself for a new required field",
       "BACKWARD_TRANSITIVE",
       false,
       {a, b, c, d, W("e", true, kLong)},
       "level BACKWARD_TRANSITIVE (schema registry) refuses field e: it is new"},
      {"FORWARD allows a new optional field",
       "FORWARD",
       false,
       {a, b, c, d, W("e", false, kLong)},
       ""},
      {"FORWARD refuses dropping a required field",
       "FORWARD",
       false,
       {a, b, d},
       "refuses field c: the writer no longer has it"},
      {"FORWARD allows dropping an optional field", "FORWARD", false, {a, b, c}, ""},
      {"BACKWARD allows dropping a required field", "BACKWARD", false, {a, b, d}, ""},
      {"FULL refuses required → optional",
       "FULL",
       false,
       {W("a", false, kInt), b, c, d},
       "refuses field a: required → optional"},
      {"an unknown level leaves Floe's rules alone",
       "SOMETHING_NEW",
       false,
       {W("a", true, kLong), b, c, d},
       ""},
  };
  for (const auto& lc : cases) {
    SCOPED_TRACE(lc.name);
    EvolutionOptions options;
    bool known = false;
    options.compatibility = ParseCompatibility(lc.level, &known);
    EXPECT_EQ(known, lc.level != "SOMETHING_NEW");
    options.compatibility_name = lc.level;
    options.protobuf = lc.protobuf;
    auto out = Evolve(table, 4, lc.writer, options);
    if (lc.error.empty()) {
      EXPECT_TRUE(out.ok()) << out.status().ToString();
    } else {
      ASSERT_FALSE(out.ok());
      EXPECT_EQ(KindOf(out.status()), ErrorKind::kSuspend);
      EXPECT_NE(out.status().message().find(lc.error), std::string::npos)
          << out.status().message();
    }
  }
}

}  // namespace
}  // namespace floe::schema
