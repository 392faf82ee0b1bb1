#include "floe/schema/protobuf_schema.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/descriptor.pb.h>
#include <google/protobuf/stubs/strutil.h>
#include <gtest/gtest.h>

namespace floe::schema {
namespace {

using iceberg::NestedField;
using iceberg::TypeId;

std::shared_ptr<const ProtobufSchema> MakeSchema(
    const std::string& text, const std::map<std::string, std::string>& imports = {}) {
  auto s = ProtobufSchema::Make(text, imports);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? *s : nullptr;
}

std::vector<NestedField> Fields(const std::string& text, std::vector<int32_t> path = {},
                                const std::map<std::string, std::string>& imports = {}) {
  auto s = MakeSchema(text, imports);
  if (s == nullptr) return {};
  auto m = s->MessageAt(path);
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  if (!m.ok()) return {};
  auto f = ProtobufToIcebergFields(**m);
  EXPECT_TRUE(f.ok()) << f.status().ToString();
  return f.ok() ? *f : std::vector<NestedField>{};
}

std::string MapError(const std::string& text, std::vector<int32_t> path = {}) {
  auto s = MakeSchema(text);
  if (s == nullptr) return "no schema";
  auto f = ProtobufToIcebergFields(**s->MessageAt(path));
  return f.ok() ? "ok" : f.status().message();
}

const NestedField& Find(const std::vector<NestedField>& fs, const std::string& name) {
  for (const auto& f : fs) {
    if (f.name == name) return f;
  }
  static NestedField none;
  ADD_FAILURE() << "no field " << name;
  return none;
}

std::string TypeString(const NestedField& f) {
  if (!f.type) return "?";
  if (f.type->is_primitive()) return iceberg::PrimitiveTypeString(*f.type);
  switch (f.type->id) {
    case TypeId::kList:
      return "list<" + TypeString(f.type->element()) + ">";
    case TypeId::kMap:
      return "map<" + TypeString(f.type->key()) + "," + TypeString(f.type->value()) +
             (f.type->value().required ? "" : "?") + ">";
    default: {
      std::string s = "struct<";
      for (const auto& c : f.type->fields)
        s += c.name + ":" + TypeString(c) + (c.required ? "" : "?") + ";";
      return s + ">";
    }
  }
}

TEST(ProtobufSchemaTest, EveryScalarProto3) {
  auto fs = Fields(R"(
    syntax = "proto3";
    package t;
    enum Color { RED = 0; GREEN = 1; }
    message M {
      int32 i32 = 1; sint32 s32 = 2; sfixed32 sf32 = 3;
      int64 i64 = 4; sint64 s64 = 5; sfixed64 sf64 = 6;
      uint32 u32 = 7; fixed32 f32 = 8; uint64 u64 = 9; fixed64 f64 = 10;
      bool b = 11; float fl = 12; double d = 13; string s = 14; bytes by = 15;
      Color c = 16;
    })");
  ASSERT_EQ(fs.size(), 16u);
  const std::vector<std::string> expected = {
      "int",    "int",    "int",           "long",          "long",    "long",
      "long",   "long",   "decimal(20,0)", "decimal(20,0)", "boolean", "float",
      "double", "string", "binary",        "string"};
  for (size_t i = 0; i < fs.size(); ++i) {
    EXPECT_EQ(TypeString(fs[i]), expected[i]) << fs[i].name;
    EXPECT_TRUE(fs[i].required) << fs[i].name << ": proto3 implicit presence";
    EXPECT_EQ(fs[i].id, 0);
  }
}

TEST(ProtobufSchemaTest, Proto3Presence) {
  auto fs = Fields(R"(
    syntax = "proto3";
    message Inner { int32 x = 1; }
    message M {
      int32 plain = 1;
      optional int32 opt = 2;
      Inner inner = 3;
      oneof choice { string a = 4; Inner b = 5; }
      repeated int32 list = 6;
      map<string, int64> m = 7;
    })",
                   {1});
  EXPECT_TRUE(Find(fs, "plain").required);
  EXPECT_FALSE(Find(fs, "opt").required);
  EXPECT_FALSE(Find(fs, "inner").required);
  EXPECT_EQ(TypeString(Find(fs, "inner")), "struct<x:int;>");
  EXPECT_FALSE(Find(fs, "a").required);
  EXPECT_FALSE(Find(fs, "b").required);
  EXPECT_TRUE(Find(fs, "list").required);
  EXPECT_EQ(TypeString(Find(fs, "list")), "list<int>");
  EXPECT_TRUE(Find(fs, "list").type->element().required);
  EXPECT_TRUE(Find(fs, "m").required);
  EXPECT_EQ(TypeString(Find(fs, "m")), "map<string,long>");
}

TEST(ProtobufSchemaTest, Proto2Presence) {
  auto s = MakeSchema(R"(
    syntax = "proto2";
    message M {
      required int32 req = 1;
      optional int32 opt = 2;
      optional int32 with_default = 3 [default = 7];
      optional string name = 4 [default = "x"];
      repeated string tags = 5;
    })");
  ASSERT_NE(s, nullptr);
  const auto* m = *s->MessageAt({});
  EXPECT_EQ(PresenceOf(*m->FindFieldByName("req")), ProtobufPresence::kRequired);
  EXPECT_EQ(PresenceOf(*m->FindFieldByName("opt")), ProtobufPresence::kExplicit);
  EXPECT_EQ(PresenceOf(*m->FindFieldByName("with_default")), ProtobufPresence::kDefault);
  auto fs = *ProtobufToIcebergFields(*m);
  EXPECT_TRUE(Find(fs, "req").required);
  EXPECT_FALSE(Find(fs, "opt").required);
  EXPECT_TRUE(Find(fs, "with_default").required);
  EXPECT_TRUE(Find(fs, "name").required);
  EXPECT_EQ(TypeString(Find(fs, "tags")), "list<string>");
}

TEST(ProtobufSchemaTest, WellKnownTypes) {
  auto fs = Fields(R"(
    syntax = "proto3";
    import "google/protobuf/timestamp.proto";
    import "google/protobuf/wrappers.proto";
    import "google/protobuf/duration.proto";
    message M {
      google.protobuf.Timestamp ts = 1;
      google.protobuf.Int32Value i32 = 2;
      google.protobuf.Int64Value i64 = 3;
      google.protobuf.UInt32Value u32 = 4;
      google.protobuf.UInt64Value u64 = 5;
      google.protobuf.BoolValue b = 6;
      google.protobuf.FloatValue f = 7;
      google.protobuf.DoubleValue d = 8;
      google.protobuf.StringValue s = 9;
      google.protobuf.BytesValue by = 10;
      google.protobuf.Duration dur = 11;
      repeated google.protobuf.Timestamp times = 12;
      map<string, google.protobuf.StringValue> labels = 13;
    })");
  ASSERT_EQ(fs.size(), 13u);
  const std::vector<std::string> expected = {"timestamptz",
                                             "int",
                                             "long",
                                             "long",
                                             "decimal(20,0)",
                                             "boolean",
                                             "float",
                                             "double",
                                             "string",
                                             "binary",
                                             "struct<seconds:long;nanos:int;>",
                                             "list<timestamptz>",
                                             "map<string,string?>"};
  for (size_t i = 0; i < fs.size(); ++i) {
    EXPECT_EQ(TypeString(fs[i]), expected[i]) << fs[i].name;
  }
  for (size_t i = 0; i < 11; ++i) EXPECT_FALSE(fs[i].required) << fs[i].name;
}

TEST(ProtobufSchemaTest, MapKeysAndNestedMessages) {
  auto fs = Fields(R"(
    syntax = "proto3";
    package a.b;
    message Outer {
      message Line { string sku = 1; uint64 qty = 2; }
      repeated Line lines = 1;
      map<int32, Line> by_id = 2;
      map<uint64, bool> flags = 3;
    })");
  EXPECT_EQ(TypeString(Find(fs, "lines")), "list<struct<sku:string;qty:decimal(20,0);>>");
  EXPECT_EQ(TypeString(Find(fs, "by_id")),
            "map<int,struct<sku:string;qty:decimal(20,0);>>");
  EXPECT_EQ(TypeString(Find(fs, "flags")), "map<decimal(20,0),boolean>");
}

TEST(ProtobufSchemaTest, MessageIndexPath) {
  const std::string text = R"(
    syntax = "proto3";
    message A { int32 a = 1; }
    message B {
      message C { string c = 1; }
      message D { message E { bool e = 1; } int32 d = 1; }
      int32 b = 1;
    })";
  EXPECT_EQ(Find(Fields(text, {0}), "a").name, "a");
  EXPECT_EQ(Find(Fields(text, {}), "a").name, "a");
  EXPECT_EQ(Find(Fields(text, {1}), "b").name, "b");
  EXPECT_EQ(Find(Fields(text, {1, 0}), "c").name, "c");
  EXPECT_EQ(Find(Fields(text, {1, 1, 0}), "e").name, "e");
  auto s = MakeSchema(text);
  ASSERT_NE(s, nullptr);
  auto bad = s->MessageAt({2});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(KindOf(bad.status()), ErrorKind::kInvalidRecord);
  EXPECT_NE(bad.status().message().find("index 2 at level 0 is outside the 2"),
            std::string::npos)
      << bad.status().ToString();
  EXPECT_FALSE(s->MessageAt({1, 2}).ok());
  EXPECT_FALSE(s->MessageAt({-1}).ok());
}

TEST(ProtobufSchemaTest, ImportsFromReferences) {
  std::map<std::string, std::string> imports = {
      {"common/money.proto", R"(
        syntax = "proto3";
        package common;
        import "common/currency.proto";
        message Money { Currency currency = 1; int64 units = 2; })"},
      {"common/currency.proto", R"(
        syntax = "proto3";
        package common;
        enum Currency { EUR = 0; USD = 1; })"},
  };
  auto fs = Fields(R"(
    syntax = "proto3";
    import "common/money.proto";
    message Order { common.Money total = 1; })",
                   {}, imports);
  EXPECT_EQ(TypeString(Find(fs, "total")), "struct<currency:string;units:long;>");
}

// Confluent's Python and Go serializers register base64 of a serialized
// FileDescriptorProto; the schema and its imports may each come in that form.
TEST(ProtobufSchemaTest, Base64Descriptors) {
  const std::string money = R"(
      syntax = "proto3";
      package common;
      import "google/protobuf/timestamp.proto";
      message Money { int64 units = 1; google.protobuf.Timestamp at = 2; })";
  auto money_schema = MakeSchema(money);
  ASSERT_NE(money_schema, nullptr);
  auto b64 = [](const ::google::protobuf::FileDescriptor* f) {
    ::google::protobuf::FileDescriptorProto proto;
    f->CopyTo(&proto);
    std::string out;
    ::google::protobuf::Base64Escape(proto.SerializeAsString(), &out);
    return out;
  };
  auto order = MakeSchema(R"(
      syntax = "proto3";
      import "common/money.proto";
      message Order { common.Money total = 1; string id = 2; })",
                          {{"common/money.proto", money}});
  ASSERT_NE(order, nullptr);
  auto fs =
      Fields(b64(order->file()), {}, {{"common/money.proto", b64(money_schema->file())}});
  EXPECT_EQ(TypeString(Find(fs, "total")), "struct<units:long;at:timestamptz?;>");
  EXPECT_EQ(TypeString(Find(fs, "id")), "string");

  auto bad = ProtobufSchema::Make("AAAA/w==");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("not a serialized FileDescriptorProto"),
            std::string::npos)
      << bad.status().ToString();
}

TEST(ProtobufSchemaTest, ParseErrors) {
  auto s = ProtobufSchema::Make("syntax = \"proto3\";\nmessage M { int32 x = ; }");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("line 2"), std::string::npos)
      << s.status().ToString();

  s = ProtobufSchema::Make("syntax = \"proto3\"; import \"missing.proto\"; message M {}");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("missing.proto"), std::string::npos)
      << s.status().ToString();

  s = ProtobufSchema::Make("syntax = \"proto3\"; message M { Unknown u = 1; }");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("Unknown"), std::string::npos)
      << s.status().ToString();

  s = ProtobufSchema::Make("syntax = \"proto3\"; import \"bad.proto\"; message M {}",
                           {{"bad.proto", "message {"}});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("import \"bad.proto\", line 1"), std::string::npos)
      << s.status().ToString();
}

TEST(ProtobufSchemaTest, Refused) {
  EXPECT_EQ(
      MapError(R"(
    syntax = "proto3";
    message Node { string name = 1; Wrapper w = 2; }
    message Wrapper { repeated Node children = 1; })"),
      "Protobuf field 'w.children[]': recursive message type Node is not supported");
  EXPECT_EQ(MapError(R"(
    syntax = "proto3";
    import "google/protobuf/struct.proto";
    message M { google.protobuf.Struct s = 1; })"),
            "Protobuf field 's.fields{}.struct_value': recursive message type "
            "google.protobuf.Struct is not supported");
  EXPECT_EQ(
      MapError(R"(
    syntax = "proto3";
    message Empty {}
    message M { int32 a = 1; Empty e = 2; })",
               {1}),
      "Protobuf field 'e': message Empty has no fields; Parquet cannot store an empty "
      "struct");
  EXPECT_EQ(MapError("syntax = \"proto3\"; message M {}"),
            "Protobuf field 'M': message M has no fields; Parquet cannot store an empty "
            "struct");
  EXPECT_EQ(MapError(R"(
    syntax = "proto2";
    message M { optional group G = 1 { optional int32 a = 2; } })"),
            "Protobuf field 'g': proto2 groups are not supported; use a nested message");
}

}  // namespace
}  // namespace floe::schema
