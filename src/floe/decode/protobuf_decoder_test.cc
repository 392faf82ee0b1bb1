#include "floe/decode/protobuf_decoder.h"

#include <arrow/api.h>
#include <google/protobuf/descriptor.h>
#include <google/protobuf/dynamic_message.h>
#include <google/protobuf/message.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "floe/common/new_counter_test_util.h"
#include "floe/decode/decoder_test_util.h"
#include "floe/schema/protobuf_schema.h"

namespace floe::decode {
namespace {

namespace pb = ::google::protobuf;
using schema::ProtobufSchema;
using testing::ExpectColumn;
using testing::ExpectInvalid;

// A .proto schema, the selected message and DynamicMessages of it: payloads are
// serialized by libprotobuf, so the wire format is the real one.
class Proto {
 public:
  explicit Proto(const std::string& text, std::vector<int32_t> path = {}) {
    auto s = ProtobufSchema::Make(text);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    schema_ = *s;
    auto d = schema_->MessageAt(path);
    EXPECT_TRUE(d.ok()) << d.status().ToString();
    descriptor_ = *d;
  }
  const pb::Descriptor& descriptor() const { return *descriptor_; }
  std::unique_ptr<pb::Message> New() {
    return std::unique_ptr<pb::Message>(factory_.GetPrototype(descriptor_)->New());
  }

 private:
  std::shared_ptr<const ProtobufSchema> schema_;
  const pb::Descriptor* descriptor_ = nullptr;
  pb::DynamicMessageFactory factory_;
};

const pb::FieldDescriptor* F(const pb::Message& m, const std::string& name) {
  const auto* f = m.GetDescriptor()->FindFieldByName(name);
  EXPECT_NE(f, nullptr) << name;
  return f;
}

// Sets (or, for a repeated field, adds) a scalar by the field's C++ type.
void Set(pb::Message* m, const std::string& name, int64_t v) {
  const auto* f = F(*m, name);
  const auto* r = m->GetReflection();
  using FD = pb::FieldDescriptor;
  const bool rep = f->is_repeated();
  switch (f->cpp_type()) {
    case FD::CPPTYPE_INT32:
      rep ? r->AddInt32(m, f, static_cast<int32_t>(v))
          : r->SetInt32(m, f, static_cast<int32_t>(v));
      break;
    case FD::CPPTYPE_INT64:
      rep ? r->AddInt64(m, f, v) : r->SetInt64(m, f, v);
      break;
    case FD::CPPTYPE_UINT32:
      rep ? r->AddUInt32(m, f, static_cast<uint32_t>(v))
          : r->SetUInt32(m, f, static_cast<uint32_t>(v));
      break;
    case FD::CPPTYPE_UINT64:
      rep ? r->AddUInt64(m, f, static_cast<uint64_t>(v))
          : r->SetUInt64(m, f, static_cast<uint64_t>(v));
      break;
    case FD::CPPTYPE_BOOL:
      rep ? r->AddBool(m, f, v != 0) : r->SetBool(m, f, v != 0);
      break;
    case FD::CPPTYPE_ENUM:
      rep ? r->AddEnumValue(m, f, static_cast<int>(v))
          : r->SetEnumValue(m, f, static_cast<int>(v));
      break;
    default:
      ADD_FAILURE() << name << " is not an integer field";
  }
}
void SetU64(pb::Message* m, const std::string& name, uint64_t v) {
  const auto* f = F(*m, name);
  f->is_repeated() ? m->GetReflection()->AddUInt64(m, f, v)
                   : m->GetReflection()->SetUInt64(m, f, v);
}
void SetDouble(pb::Message* m, const std::string& name, double v) {
  const auto* f = F(*m, name);
  const auto* r = m->GetReflection();
  if (f->cpp_type() == pb::FieldDescriptor::CPPTYPE_FLOAT) {
    f->is_repeated() ? r->AddFloat(m, f, static_cast<float>(v))
                     : r->SetFloat(m, f, static_cast<float>(v));
  } else {
    f->is_repeated() ? r->AddDouble(m, f, v) : r->SetDouble(m, f, v);
  }
}
void SetStr(pb::Message* m, const std::string& name, const std::string& v) {
  const auto* f = F(*m, name);
  f->is_repeated() ? m->GetReflection()->AddString(m, f, v)
                   : m->GetReflection()->SetString(m, f, v);
}
pb::Message* Sub(pb::Message* m, const std::string& name) {
  const auto* f = F(*m, name);
  return f->is_repeated() ? m->GetReflection()->AddMessage(m, f)
                          : m->GetReflection()->MutableMessage(m, f);
}

std::string Bytes(const pb::Message& m) {
  std::string out;
  EXPECT_TRUE(m.SerializeToString(&out));
  return out;
}

iceberg::Schema TableFor(const pb::Descriptor& d) {
  return testing::TableFromFields(schema::ProtobufToIcebergFields(d));
}

class Harness : public testing::DecoderHarness<ProtobufDecoder> {
 public:
  Harness(const pb::Descriptor& writer, const iceberg::Schema& table,
          ProtobufDecoderOptions options = {})
      : DecoderHarness(writer, table, options, ::arrow::default_memory_pool()) {}
  explicit Harness(const pb::Descriptor& writer) : Harness(writer, TableFor(writer)) {}

  Status Decode(const std::string& bytes) {
    return DecodeBytes(bytes.data(), bytes.size());
  }
  Status Decode(const pb::Message& m) { return Decode(Bytes(m)); }
};

// Raw wire bytes, for payloads libprotobuf would never write.
struct Wire {
  std::string s;
  Wire& Varint(uint64_t v) {
    while (v >= 0x80) {
      s.push_back(static_cast<char>(v | 0x80));
      v >>= 7;
    }
    s.push_back(static_cast<char>(v));
    return *this;
  }
  Wire& Tag(uint32_t number, int wire) { return Varint(uint64_t{number} << 3 | wire); }
  Wire& Raw(const std::string& r) {
    s += r;
    return *this;
  }
  Wire& Len(uint32_t number, const std::string& payload) {
    Tag(number, 2).Varint(payload.size());
    return Raw(payload);
  }
};

const char* kScalars = R"(
  syntax = "proto3";
  package t;
  enum Color { RED = 0; GREEN = 1; BLUE = 2; }
  message S {
    int32 i32 = 1; sint32 s32 = 2; sfixed32 sf32 = 3;
    int64 i64 = 4; sint64 s64 = 5; sfixed64 sf64 = 6;
    uint32 u32 = 7; fixed32 f32 = 8; uint64 u64 = 9; fixed64 f64 = 10;
    bool b = 11; float fl = 12; double d = 13; string s = 14; bytes by = 15;
    Color c = 16;
  })";

TEST(ProtobufDecoderTest, EveryScalarAndExtremes) {
  Proto p(kScalars);
  Harness h(p.descriptor());
  const int64_t i64min = std::numeric_limits<int64_t>::min();
  const int64_t i64max = std::numeric_limits<int64_t>::max();
  const int32_t i32min = std::numeric_limits<int32_t>::min();
  const int32_t i32max = std::numeric_limits<int32_t>::max();
  {
    auto m = p.New();
    Set(m.get(), "i32", i32min);
    Set(m.get(), "s32", i32min);
    Set(m.get(), "sf32", i32min);
    Set(m.get(), "i64", i64min);
    Set(m.get(), "s64", i64min);
    Set(m.get(), "sf64", i64min);
    Set(m.get(), "u32", 0);
    Set(m.get(), "f32", 0);
    SetU64(m.get(), "u64", 0);
    SetU64(m.get(), "f64", 0);
    Set(m.get(), "b", 1);
    SetDouble(m.get(), "fl", std::numeric_limits<float>::quiet_NaN());
    SetDouble(m.get(), "d", -std::numeric_limits<double>::infinity());
    SetStr(m.get(), "s", "h\xC3\xA9llo \xF0\x9F\x98\x80");
    SetStr(m.get(), "by", std::string("\x00\xff", 2));
    Set(m.get(), "c", 2);
    ASSERT_TRUE(h.Decode(*m).ok());
  }
  {
    auto m = p.New();
    Set(m.get(), "i32", i32max);
    Set(m.get(), "s32", i32max);
    Set(m.get(), "sf32", i32max);
    Set(m.get(), "i64", i64max);
    Set(m.get(), "s64", i64max);
    Set(m.get(), "sf64", i64max);
    Set(m.get(), "u32", std::numeric_limits<uint32_t>::max());
    Set(m.get(), "f32", std::numeric_limits<uint32_t>::max());
    SetU64(m.get(), "u64", std::numeric_limits<uint64_t>::max());
    SetU64(m.get(), "f64", std::numeric_limits<uint64_t>::max());
    SetDouble(m.get(), "fl", std::numeric_limits<float>::infinity());
    SetDouble(m.get(), "d", std::numeric_limits<double>::quiet_NaN());
    Set(m.get(), "c", 7);  // not declared: proto3 enums are open
    ASSERT_TRUE(h.Decode(*m).ok());
  }
  ASSERT_TRUE(h.Decode(std::string()).ok());  // everything absent: the defaults
  auto batch = h.Flush();
  ExpectColumn(*batch, "i32", "[-2147483648, 2147483647, 0]");
  ExpectColumn(*batch, "s32", "[-2147483648, 2147483647, 0]");
  ExpectColumn(*batch, "sf32", "[-2147483648, 2147483647, 0]");
  ExpectColumn(*batch, "i64", "[-9223372036854775808, 9223372036854775807, 0]");
  ExpectColumn(*batch, "s64", "[-9223372036854775808, 9223372036854775807, 0]");
  ExpectColumn(*batch, "sf64", "[-9223372036854775808, 9223372036854775807, 0]");
  ExpectColumn(*batch, "u32", "[0, 4294967295, 0]");
  ExpectColumn(*batch, "f32", "[0, 4294967295, 0]");
  ExpectColumn(*batch, "u64", R"(["0", "18446744073709551615", "0"])");
  ExpectColumn(*batch, "f64", R"(["0", "18446744073709551615", "0"])");
  ExpectColumn(*batch, "b", "[true, false, false]");
  ExpectColumn(*batch, "s", "[\"h\xC3\xA9llo \xF0\x9F\x98\x80\", \"\", \"\"]");
  ExpectColumn(*batch, "c", R"(["BLUE", "7", "RED"])");
  auto by = std::static_pointer_cast<::arrow::BinaryArray>(batch->GetColumnByName("by"));
  EXPECT_EQ(by->GetString(0), std::string("\x00\xff", 2));
  EXPECT_EQ(by->GetString(1), "");
  auto fl = std::static_pointer_cast<::arrow::FloatArray>(batch->GetColumnByName("fl"));
  EXPECT_TRUE(std::isnan(fl->Value(0)));
  EXPECT_EQ(fl->Value(1), std::numeric_limits<float>::infinity());
  auto d = std::static_pointer_cast<::arrow::DoubleArray>(batch->GetColumnByName("d"));
  EXPECT_EQ(d->Value(0), -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(d->Value(1)));
  EXPECT_EQ(d->Value(2), 0.0);
  EXPECT_EQ(batch->column(0)->null_count(), 0);
}

TEST(ProtobufDecoderTest, Proto2PresenceAndDefaults) {
  Proto p(R"(
    syntax = "proto2";
    enum E { A = 5; B = 6; }
    message M {
      required int32 req = 1;
      optional int32 opt = 2;
      optional int64 dflt = 3 [default = -7];
      optional string name = 4 [default = "anon"];
      optional E e = 5;
      optional E e2 = 6 [default = B];
      optional double ratio = 7 [default = 0.5];
      optional bool flag = 8 [default = true];
    })");
  Harness h(p.descriptor());
  auto m = p.New();
  Set(m.get(), "req", 1);
  ASSERT_TRUE(h.Decode(*m).ok());
  Set(m.get(), "opt", 2);
  Set(m.get(), "dflt", 3);
  SetStr(m.get(), "name", "x");
  Set(m.get(), "e", 6);
  Set(m.get(), "e2", 5);
  SetDouble(m.get(), "ratio", 2);
  Set(m.get(), "flag", 0);
  ASSERT_TRUE(h.Decode(*m).ok());
  const auto before = h.Snapshot();
  ExpectInvalid(h.Decode(std::string()),
                "Protobuf field 'req': required field is missing");
  EXPECT_EQ(h.Snapshot(), before);
  auto batch = h.Flush();
  ExpectColumn(*batch, "req", "[1, 1]");
  ExpectColumn(*batch, "opt", "[null, 2]");
  ExpectColumn(*batch, "dflt", "[-7, 3]");
  ExpectColumn(*batch, "name", R"(["anon", "x"])");
  ExpectColumn(*batch, "e", R"([null, "B"])");
  ExpectColumn(*batch, "e2", R"(["B", "A"])");
  ExpectColumn(*batch, "ratio", "[0.5, 2]");
  ExpectColumn(*batch, "flag", "[true, false]");
}

TEST(ProtobufDecoderTest, Proto3OptionalOneofAndLastOneWins) {
  Proto p(R"(
    syntax = "proto3";
    message Inner { int32 x = 1; string y = 2; }
    message M {
      optional int32 opt = 1;
      int32 plain = 2;
      oneof choice { string a = 3; Inner b = 4; int64 c = 5; }
      Inner inner = 6;
    })",
          {1});
  Harness h(p.descriptor());
  auto m = p.New();
  ASSERT_TRUE(h.Decode(*m).ok());
  Set(m.get(), "opt", 0);  // present, zero
  SetStr(m.get(), "a", "first");
  Sub(m.get(), "inner");  // present, empty
  ASSERT_TRUE(h.Decode(*m).ok());
  // Wire-level: a, then b (clears a), plain twice (last wins), inner merged from two
  // occurrences, then b again merging with the earlier b.
  Wire w;
  w.Len(3, "zz");
  w.Len(4, Wire().Tag(1, 0).Varint(10).s);
  w.Tag(2, 0).Varint(1).Tag(2, 0).Varint(2);
  w.Len(6, Wire().Tag(1, 0).Varint(5).s);
  w.Len(6, Wire().Len(2, "yy").s);
  w.Len(4, Wire().Len(2, "bee").s);
  ASSERT_TRUE(h.Decode(w.s).ok());
  // c set after b: b is cleared.
  Wire w2;
  w2.Len(4, Wire().Tag(1, 0).Varint(10).s).Tag(5, 0).Varint(9);
  ASSERT_TRUE(h.Decode(w2.s).ok());
  auto batch = h.Flush();
  ExpectColumn(*batch, "opt", "[null, 0, null, null]");
  ExpectColumn(*batch, "plain", "[0, 0, 2, 0]");
  ExpectColumn(*batch, "a", R"([null, "first", null, null])");
  ExpectColumn(*batch, "b", R"([null, null, {"x": 10, "y": "bee"}, null])");
  ExpectColumn(*batch, "c", "[null, null, null, 9]");
  ExpectColumn(*batch, "inner",
               R"([null, {"x": 0, "y": ""}, {"x": 5, "y": "yy"}, null])");
}

TEST(ProtobufDecoderTest, RepeatedPackedAndUnpacked) {
  Proto p(R"(
    syntax = "proto2";
    message M {
      repeated int32 packed = 1 [packed = true];
      repeated sint64 unpacked = 2;
      repeated double dbl = 3 [packed = true];
      repeated fixed32 fx = 4;
      repeated string s = 5;
      repeated bool b = 6 [packed = true];
    })");
  Harness h(p.descriptor());
  auto m = p.New();
  ASSERT_TRUE(h.Decode(*m).ok());  // every list empty
  for (int v : {1, -1, 300}) Set(m.get(), "packed", v);
  for (int64_t v : {int64_t{-2}, std::numeric_limits<int64_t>::max()}) {
    Set(m.get(), "unpacked", v);
  }
  SetDouble(m.get(), "dbl", 1.5);
  SetDouble(m.get(), "dbl", -0.0);
  Set(m.get(), "fx", 7);
  SetStr(m.get(), "s", "");
  SetStr(m.get(), "s", "x");
  Set(m.get(), "b", 1);
  Set(m.get(), "b", 0);
  ASSERT_TRUE(h.Decode(*m).ok());
  // Parsers must accept either encoding: packed where unpacked was declared, unpacked
  // where packed was, and several runs that concatenate.
  Wire w;
  w.Len(2, Wire().Varint(3).Varint(4).s);  // sint64 -2, 2 packed
  w.Tag(1, 0).Varint(5);                   // int32 5 unpacked
  w.Len(1, Wire().Varint(6).s);            // and a packed run
  w.Len(4, std::string("\x01\x00\x00\x00\x02\x00\x00\x00", 8));
  ASSERT_TRUE(h.Decode(w.s).ok());
  auto batch = h.Flush();
  ExpectColumn(*batch, "packed", "[[], [1, -1, 300], [5, 6]]");
  ExpectColumn(*batch, "unpacked", "[[], [-2, 9223372036854775807], [-2, 2]]");
  ExpectColumn(*batch, "dbl", "[[], [1.5, -0.0], []]");
  ExpectColumn(*batch, "fx", "[[], [7], [1, 2]]");
  ExpectColumn(*batch, "s", R"([[], ["", "x"], []])");
  ExpectColumn(*batch, "b", "[[], [true, false], []]");
}

TEST(ProtobufDecoderTest, NestedMessagesListsAndMaps) {
  Proto p(R"(
    syntax = "proto3";
    message Order {
      message Line { string sku = 1; uint64 qty = 2; repeated string tags = 3; }
      string id = 1;
      repeated Line lines = 2;
      map<string, int64> counts = 3;
      map<int32, Line> by_id = 4;
      Line first = 5;
    })");
  Harness h(p.descriptor());
  auto m = p.New();
  SetStr(m.get(), "id", "o1");
  auto* l1 = Sub(m.get(), "lines");
  SetStr(l1, "sku", "a");
  SetU64(l1, "qty", 2);
  SetStr(l1, "tags", "t1");
  SetStr(l1, "tags", "t2");
  Sub(m.get(), "lines");  // an empty element: defaults
  auto* e = Sub(m.get(), "counts");
  SetStr(e, "key", "k");
  Set(e, "value", -1);
  auto* e2 = Sub(m.get(), "by_id");
  Set(e2, "key", 9);
  SetStr(Sub(e2, "value"), "sku", "z");
  auto* e3 = Sub(m.get(), "by_id");  // entry with no value: the default instance
  Set(e3, "key", 10);
  SetStr(Sub(m.get(), "first"), "sku", "f");
  ASSERT_TRUE(h.Decode(*m).ok());
  ASSERT_TRUE(h.Decode(std::string()).ok());
  auto batch = h.Flush();
  ExpectColumn(*batch, "id", R"(["o1", ""])");
  ExpectColumn(*batch, "lines", R"([[{"sku": "a", "qty": "2", "tags": ["t1", "t2"]},
                                     {"sku": "", "qty": "0", "tags": []}], []])");
  ExpectColumn(*batch, "counts", R"([[["k", -1]], []])");
  ExpectColumn(*batch, "by_id", R"([[[9, {"sku": "z", "qty": "0", "tags": []}],
                                     [10, {"sku": "", "qty": "0", "tags": []}]], []])");
  ExpectColumn(*batch, "first", R"([{"sku": "f", "qty": "0", "tags": []}, null])");
}

TEST(ProtobufDecoderTest, TimestampAndWrappers) {
  Proto p(R"(
    syntax = "proto3";
    import "google/protobuf/timestamp.proto";
    import "google/protobuf/wrappers.proto";
    message M {
      google.protobuf.Timestamp ts = 1;
      google.protobuf.Int32Value i32 = 2;
      google.protobuf.UInt64Value u64 = 3;
      google.protobuf.StringValue s = 4;
      google.protobuf.BoolValue b = 5;
      repeated google.protobuf.Timestamp times = 6;
      map<string, google.protobuf.DoubleValue> m = 7;
    })");
  Harness h(p.descriptor());
  auto m = p.New();
  ASSERT_TRUE(h.Decode(*m).ok());  // all absent: nulls
  auto* ts = Sub(m.get(), "ts");
  Set(ts, "seconds", 1700000000);
  Set(ts, "nanos", 123456789);
  Sub(m.get(), "i32");  // present, value 0
  SetU64(Sub(m.get(), "u64"), "value", std::numeric_limits<uint64_t>::max());
  SetStr(Sub(m.get(), "s"), "value", "w");
  Set(Sub(m.get(), "b"), "value", 1);
  auto* t1 = Sub(m.get(), "times");
  Set(t1, "seconds", -62135596800);  // 0001-01-01
  auto* t2 = Sub(m.get(), "times");
  Set(t2, "seconds", 253402300799);  // 9999-12-31T23:59:59
  Set(t2, "nanos", 999999999);
  auto* me = Sub(m.get(), "m");
  SetStr(me, "key", "x");
  SetDouble(Sub(me, "value"), "value", 2.5);
  auto* me2 = Sub(m.get(), "m");
  SetStr(me2, "key", "y");
  ASSERT_TRUE(h.Decode(*m).ok());
  auto batch = h.Flush();
  ExpectColumn(*batch, "ts", "[null, 1700000000123456]");
  ExpectColumn(*batch, "i32", "[null, 0]");
  ExpectColumn(*batch, "u64", R"([null, "18446744073709551615"])");
  ExpectColumn(*batch, "s", R"([null, "w"])");
  ExpectColumn(*batch, "b", "[null, true]");
  ExpectColumn(*batch, "times", "[[], [-62135596800000000, 253402300799999999]]");
  // libprotobuf writes a map entry's message value even when unset: present, value 0.
  ExpectColumn(*batch, "m", R"([[], [["x", 2.5], ["y", 0]]])");
  // An entry without its value on the wire reads as a null wrapper.
  Wire w;
  w.Len(7, Wire().Len(1, "z").s);
  ASSERT_TRUE(h.Decode(w.s).ok());
  ExpectColumn(*h.Flush(), "m", R"([[["z", null]]])");

  const auto before = h.Snapshot();
  auto bad = p.New();
  Set(Sub(bad.get(), "ts"), "seconds", 253402300800);
  ExpectInvalid(h.Decode(*bad),
                "Protobuf field 'ts.seconds' at byte 3: Timestamp seconds "
                "253402300800 outside");
  bad = p.New();
  Set(Sub(bad.get(), "ts"), "nanos", -1);
  ExpectInvalid(h.Decode(*bad), "Timestamp nanos -1 outside 0..999999999");
  EXPECT_EQ(h.Snapshot(), before);
}

TEST(ProtobufDecoderTest, UnknownFieldsAreSkipped) {
  Proto p("syntax = \"proto3\"; message M { int32 a = 1; string b = 2; }");
  Harness h(p.descriptor());
  Wire w;
  w.Tag(100, 0).Varint(12345678901ULL);
  w.Tag(101, 1).Raw(std::string(8, 'x'));
  w.Tag(102, 5).Raw(std::string(4, 'x'));
  w.Len(103, "hello");
  w.Tag(104, 3).Tag(1, 0).Varint(1).Tag(105, 3).Tag(105, 4).Tag(104, 4);  // nested groups
  w.Tag(1, 0).Varint(7);
  w.Tag(536870911, 0).Varint(1);  // the highest field number
  ASSERT_TRUE(h.Decode(w.s).ok());
  auto batch = h.Flush();
  ExpectColumn(*batch, "a", "[7]");
  ExpectColumn(*batch, "b", R"([""])");
}

TEST(ProtobufDecoderTest, TableEvolution) {
  Proto p(R"(
    syntax = "proto3";
    message M { int32 a = 1; float f = 2; string dropped = 3; uint64 u = 4; })");
  iceberg::Schema table = TableFor(p.descriptor());
  // Widened columns, a column the writer lacks, one the writer has dropped, a skip
  // column.
  table.fields[0].type = iceberg::Type::Primitive(iceberg::TypeId::kLong);
  table.fields[1].type = iceberg::Type::Primitive(iceberg::TypeId::kDouble);
  table.fields[3].type = iceberg::Type::Decimal(25, 0);
  table.fields.erase(table.fields.begin() + 2);
  table.fields.push_back(
      {50, "extra", false, iceberg::Type::Primitive(iceberg::TypeId::kString), {}});
  table.fields.push_back(
      {51, "key", false, iceberg::Type::Primitive(iceberg::TypeId::kString), {}});
  ProtobufDecoderOptions options;
  options.skip_columns = {"key"};
  Harness h(p.descriptor(), table, options);
  auto m = p.New();
  Set(m.get(), "a", -3);
  SetDouble(m.get(), "f", 0.25);
  SetStr(m.get(), "dropped", "gone");
  SetU64(m.get(), "u", 99);
  ASSERT_TRUE(h.Decode(*m).ok());
  EXPECT_EQ(h.column(4)->length(), 0);  // the skipped column is untouched
  ASSERT_TRUE(h.column(4)->AppendNull().ok());
  auto batch = h.Flush();
  ExpectColumn(*batch, "a", "[-3]");
  ExpectColumn(*batch, "f", "[0.25]");
  ExpectColumn(*batch, "u", R"(["99"])");
  ExpectColumn(*batch, "extra", "[null]");
}

TEST(ProtobufDecoderTest, AnOldNameLandsInTheRenamedColumn) {
  // The table renamed `name` (field 2) to `title`, and `inner.x` to `inner.y`: an older
  // producer still writing the old names fills the renamed columns.
  Proto renamed(R"(
    syntax = "proto3";
    message I { int32 y = 1; }
    message M { int64 id = 1; string title = 2; I inner = 3; })",
                {1});
  iceberg::Schema table = TableFor(renamed.descriptor());
  table.fields[1].aliases = {"name"};
  auto inner = std::make_shared<iceberg::Type>(*table.fields[2].type);
  inner->fields[0].aliases = {"x"};
  table.fields[2].type = inner;
  Proto old(R"(
    syntax = "proto3";
    message I { int32 x = 1; }
    message M { int64 id = 1; string name = 2; I inner = 3; })",
            {1});
  Harness h(old.descriptor(), table);
  auto m = old.New();
  Set(m.get(), "id", 7);
  SetStr(m.get(), "name", "old");
  auto* r = m->GetReflection();
  pb::Message* in = r->MutableMessage(m.get(), F(*m, "inner"));
  Set(in, "x", 5);
  ASSERT_TRUE(h.Decode(*m).ok());
  auto batch = h.Flush();
  ExpectColumn(*batch, "id", "[7]");
  ExpectColumn(*batch, "title", R"(["old"])");
  ExpectColumn(*batch, "inner", R"([{"y": 5}])");
}

TEST(ProtobufDecoderTest, IncompatibleTablesAreRefused) {
  Proto p(R"(
    syntax = "proto3";
    message M { int64 a = 1; optional int32 o = 2; })");
  iceberg::Schema table = TableFor(p.descriptor());
  table.fields[0].type = iceberg::Type::Primitive(iceberg::TypeId::kInt);
  auto d = ProtobufDecoder::Make(p.descriptor(), table);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(
      d.status().message(),
      "Protobuf field 'a' of type int64 cannot be decoded into the table column of type "
      "int");
  table = TableFor(p.descriptor());
  table.fields[1].required = true;
  d = ProtobufDecoder::Make(p.descriptor(), table);
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.status().message().find("'o' has explicit presence"), std::string::npos);
  table = TableFor(p.descriptor());
  table.fields.push_back(
      {9, "req", true, iceberg::Type::Primitive(iceberg::TypeId::kInt), {}});
  d = ProtobufDecoder::Make(p.descriptor(), table);
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.status().message().find("'req' is required"), std::string::npos);
}

// Malformed input: InvalidRecord with the field and byte offset, builders unchanged.
TEST(ProtobufDecoderTest, MalformedInputLeavesBuildersUnchanged) {
  Proto p(R"(
    syntax = "proto3";
    message Inner { string s = 1; }
    message M {
      int32 a = 1;
      string s = 2;
      Inner inner = 3;
      repeated fixed32 fx = 4;
      uint32 u = 5;
      repeated Inner items = 6;
      map<string, int32> m = 7;
    })",
          {1});
  Harness h(p.descriptor());
  auto good = p.New();
  Set(good.get(), "a", 1);
  SetStr(good.get(), "s", "ok");
  SetStr(Sub(good.get(), "inner"), "s", "in");
  SetStr(Sub(good.get(), "items"), "s", "it");
  auto* e = Sub(good.get(), "m");
  SetStr(e, "key", "k");
  ASSERT_TRUE(h.Decode(*good).ok());
  const auto before = h.Snapshot();
  const std::string good_bytes = Bytes(*good);
  ASSERT_TRUE(h.decoder()
                  .Validate(reinterpret_cast<const uint8_t*>(good_bytes.data()),
                            good_bytes.size())
                  .ok());
  EXPECT_EQ(h.Snapshot(), before);
  auto check = [&](const std::string& bytes, const std::string& fragment) {
    // Validate alone (the first phase) gives the same error and appends nothing either.
    ExpectInvalid(h.decoder().Validate(reinterpret_cast<const uint8_t*>(bytes.data()),
                                       bytes.size()),
                  fragment);
    ExpectInvalid(h.Decode(bytes), fragment);
    EXPECT_EQ(h.Snapshot(), before) << fragment;
  };
  const std::string prefix = Wire().Tag(1, 0).Varint(5).s;  // 2 bytes
  check(prefix + Wire().Tag(1, 0).s, "Protobuf field 'a' at byte 3: truncated");
  check(prefix + std::string("\x08\xff\xff", 3),
        "Protobuf field 'a' at byte 3: truncated");
  check(prefix + "\x08" + std::string(10, '\xff') + "\x01",
        "Protobuf field 'a' at byte 3: varint longer than 10 bytes");
  check(prefix + "\x08" + std::string(9, '\xff') + "\x02",
        "Protobuf field 'a' at byte 3: varint overflows 64 bits");
  check(prefix + Wire().Tag(1, 2).Varint(0).s,
        "Protobuf field 'a' at byte 2: wire type length-delimited does not match");
  check(prefix + Wire().Tag(9, 6).s, "Protobuf record at byte 2: invalid wire type 6");
  check(prefix + Wire().Tag(9, 7).s, "Protobuf record at byte 2: invalid wire type 7");
  check(prefix + Wire().Tag(9, 4).s, "Protobuf record at byte 2: unexpected end-group");
  check(prefix + Wire().Tag(9, 3).Tag(1, 0).Varint(1).s,
        "Protobuf record at byte 5: group of field 9 has no end tag");
  check(prefix + Wire().Tag(9, 3).Tag(8, 4).s, "unexpected end-group tag (field 8)");
  check(prefix + Wire().Tag(1, 3).Tag(1, 4).s,
        "Protobuf field 'a' at byte 2: a group where the schema declares");
  check(prefix + Wire().Tag(0, 0).Varint(1).s,
        "Protobuf record at byte 2: field number 0");
  check(prefix + Wire().Tag(2, 2).Varint(10).Raw("abc").s,
        "Protobuf field 's' at byte 2: length 10 exceeds the 3 remaining bytes");
  check(prefix + Wire().Tag(2, 2).Varint(1ULL << 40).s, "length 1099511627776 exceeds");
  check(prefix + Wire().Len(2, "\xff\xfe").s,
        "Protobuf field 's' at byte 4: string is not valid UTF-8");
  check(prefix + Wire().Len(3, Wire().Len(1, "\xc3").s).s,
        "Protobuf field 'inner.s' at byte 6: string is not valid UTF-8");
  check(prefix + Wire().Len(3, Wire().Tag(1, 2).Varint(5).s).s,
        "Protobuf field 'inner.s' at byte 4: length 5 exceeds the 0 remaining bytes");
  check(prefix + Wire().Len(6, Wire().Len(1, "\x80").s).s,
        "Protobuf field 'items[].s' at byte 6: string is not valid UTF-8");
  check(prefix + Wire().Len(7, Wire().Len(1, "\x80").s).s,
        "Protobuf field 'm{key}' at byte 6: string is not valid UTF-8");
  check(prefix + Wire().Len(4, "abcde").s,
        "Protobuf field 'fx[]' at byte 4: packed run of 5 bytes is not a multiple of 4");
  check(prefix + Wire().Tag(4, 5).Raw("ab").s,
        "Protobuf field 'fx' at byte 3: truncated");
  check(prefix + Wire().Tag(1, 0).Varint(1ULL << 31).s,
        "Protobuf field 'a' at byte 3: value 2147483648 is outside the 32-bit range");
  check(prefix + Wire().Tag(5, 0).Varint(1ULL << 32).s,
        "Protobuf field 'u' at byte 3: value does not fit an unsigned 32-bit number");
  check(prefix + Wire().Tag(1ULL << 29, 0).Varint(1).s,
        "tag 4294967296 does not fit 32 bits");
  // Every proper prefix of a valid record with nested data is rejected or decodes to a
  // (shorter) valid record; either way the builders stay consistent.
  const std::string full = Bytes(*good);
  for (size_t n = 0; n < full.size(); ++n) {
    const auto snap = h.Snapshot();
    Status st = h.Decode(full.substr(0, n));
    if (!st.ok()) {
      EXPECT_EQ(KindOf(st), ErrorKind::kInvalidRecord) << n << ": " << st.ToString();
      EXPECT_EQ(h.Snapshot(), snap) << n;
    }
  }
  h.Flush();
}

// Decode appends while it checks and takes a record that fails part way out again. What
// it leaves must equal, value for value, what checking first and appending only the
// valid records leaves: for rich records, every prefix and random mutations of each,
// each followed by a good record. validate_after_invalid = 0 sends every failure through
// the rollback (by default only the first of a run does).
TEST(ProtobufDecoderTest, RollbackLeavesWhatValidatingFirstLeaves) {
  Proto p(R"(
    syntax = "proto3";
    import "google/protobuf/timestamp.proto";
    import "google/protobuf/wrappers.proto";
    message Inner { string s = 1; sint32 n = 2; repeated int64 xs = 3; }
    message M {
      int32 a = 1;
      string s = 2;
      Inner inner = 3;
      repeated fixed32 fx = 4;
      uint32 u = 5;
      repeated Inner items = 6;
      map<string, int32> m = 7;
      google.protobuf.Timestamp ts = 8;
      google.protobuf.StringValue w = 9;
      optional double d = 10;
      oneof choice { string c1 = 11; int64 c2 = 12; }
    })",
          {1});
  std::vector<std::string> good;
  for (int i = 0; i < 4; ++i) {
    auto m = p.New();
    Set(m.get(), "a", -i * 1000);
    SetStr(m.get(), "s", std::string(static_cast<size_t>(i), 'x') + "\xc3\xa9");
    auto* inner = Sub(m.get(), "inner");
    SetStr(inner, "s", "in" + std::to_string(i));
    Set(inner, "n", -i);
    for (int k = 0; k < i; ++k) Set(inner, "xs", k * 300);
    for (int k = 0; k <= i; ++k) Set(m.get(), "fx", k);
    Set(m.get(), "u", 4000000000u - static_cast<unsigned>(i));
    for (int k = 0; k < i; ++k)
      SetStr(Sub(m.get(), "items"), "s", "it" + std::to_string(k));
    for (int k = 0; k < i; ++k) {
      auto* e = Sub(m.get(), "m");
      SetStr(e, "key", "k" + std::to_string(k));
      Set(e, "value", k);
    }
    if (i % 2 == 0) {
      Set(Sub(m.get(), "ts"), "seconds", 1700000000 + i);
      SetStr(Sub(m.get(), "w"), "value", "wrapped");
      SetDouble(m.get(), "d", 0.5 * i);
      SetStr(m.get(), "c1", "one");
    } else {
      Set(m.get(), "c2", i);
    }
    good.push_back(Bytes(*m));
  }
  ProtobufDecoderOptions always_rollback;
  always_rollback.validate_after_invalid = 0;
  Harness h(p.descriptor(), TableFor(p.descriptor()), always_rollback);
  Harness reference(p.descriptor());
  testing::ExpectSameAsValidatingFirst(h, reference,
                                       testing::GoodPrefixesAndMutations(good, 400), 100);
}

TEST(ProtobufDecoderTest, DuplicateMapKeysLastOneWins) {
  Proto p(R"(
    syntax = "proto3";
    message V { int32 x = 1; }
    message M { map<string, int32> s = 1; map<sint64, V> i = 2; map<bool, string> b = 3; }
  )",
          {1});
  Harness h(p.descriptor());
  auto entry = [](const std::string& key, const std::string& value) {
    return Wire().Raw(key).Raw(value).s;
  };
  Wire w;
  w.Len(1, entry(Wire().Len(1, "a").s, Wire().Tag(2, 0).Varint(1).s));
  w.Len(1, entry(Wire().Len(1, "b").s, Wire().Tag(2, 0).Varint(2).s));
  w.Len(1, entry(Wire().Len(1, "a").s, Wire().Tag(2, 0).Varint(3).s));
  w.Len(1, entry("", Wire().Tag(2, 0).Varint(4).s));                   // key "" (absent)
  w.Len(1, entry(Wire().Len(1, "").s, Wire().Tag(2, 0).Varint(5).s));  // key "" again
  w.Len(2, entry(Wire().Tag(1, 0).Varint(3).s,
                 Wire().Len(2, Wire().Tag(1, 0).Varint(1).s).s));
  w.Len(2, entry(Wire().Tag(1, 0).Varint(3).s,
                 Wire().Len(2, Wire().Tag(1, 0).Varint(2).s).s));
  w.Len(3, entry(Wire().Tag(1, 0).Varint(1).s, Wire().Len(2, "t").s));
  w.Len(3, entry(Wire().Tag(1, 0).Varint(0).s, Wire().Len(2, "f").s));
  w.Len(3, entry(Wire().Tag(1, 0).Varint(1).s, Wire().Len(2, "T").s));
  ASSERT_TRUE(h.Decode(w.s).ok());
  // Many entries with a few keys (the dedup table grows once).
  Wire big;
  for (int k = 0; k < 1000; ++k) {
    big.Len(1, entry(Wire().Len(1, std::string(1, static_cast<char>('a' + k % 3))).s,
                     Wire().Tag(2, 0).Varint(static_cast<uint64_t>(k)).s));
  }
  ASSERT_TRUE(h.Decode(big.s).ok());
  auto batch = h.Flush();
  ExpectColumn(
      *batch, "s",
      R"([[["b", 2], ["a", 3], ["", 5]], [["b", 997], ["c", 998], ["a", 999]]])");
  ExpectColumn(*batch, "i", R"([[[-2, {"x": 2}]], []])");
  ExpectColumn(*batch, "b", R"([[[false, "f"], [true, "T"]], []])");
}

TEST(ProtobufDecoderTest, DeepNestingAndLargeFieldNumbers) {
  Proto p(R"(
    syntax = "proto3";
    message A { B b = 1; }
    message B { C c = 100000; }
    message C { repeated int32 v = 536870911; }
  )");
  Harness h(p.descriptor());
  auto m = p.New();
  auto* c = Sub(Sub(m.get(), "b"), "c");
  Set(c, "v", 1);
  Set(c, "v", 2);
  ASSERT_TRUE(h.Decode(*m).ok());
  auto batch = h.Flush();
  ExpectColumn(*batch, "b", R"([{"c": {"v": [1, 2]}}])");
}

TEST(ProtobufDecoderTest, BuilderTypeChecked) {
  Proto p("syntax = \"proto3\"; message M { int32 a = 1; }");
  auto table = TableFor(p.descriptor());
  auto dec = ProtobufDecoder::Make(p.descriptor(), table);
  ASSERT_TRUE(dec.ok());
  ::arrow::StringBuilder wrong;
  ::arrow::ArrayBuilder* cols[] = {&wrong};
  uint8_t data[] = {0x08, 0x01};
  auto st = (*dec)->Decode(data, 2, cols);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("has type string"), std::string::npos) << st.ToString();
}

// No per-record operator new after warm-up (the arena and dedup table only grow when a
// record needs more than any before).
TEST(ProtobufDecoderTest, NoPerRecordHeapAllocation) {
  Proto p(R"(
    syntax = "proto3";
    import "google/protobuf/timestamp.proto";
    message M {
      message L { string sku = 1; repeated int32 n = 2; }
      string id = 1;
      repeated L lines = 2;
      map<string, string> attrs = 3;
      google.protobuf.Timestamp ts = 4;
      optional double d = 5;
    })");
  Harness h(p.descriptor());
  std::vector<std::string> records;
  for (int i = 0; i < 200; ++i) {
    auto m = p.New();
    SetStr(m.get(), "id", "id-" + std::to_string(i));
    for (int l = 0; l < 3; ++l) {
      auto* line = Sub(m.get(), "lines");
      SetStr(line, "sku", "sku");
      Set(line, "n", l);
      Set(line, "n", i);
    }
    for (int a = 0; a < 3; ++a) {
      auto* e = Sub(m.get(), "attrs");
      SetStr(e, "key", "k" + std::to_string(a));
      SetStr(e, "value", "v");
    }
    Set(Sub(m.get(), "ts"), "seconds", i);
    if (i % 2) SetDouble(m.get(), "d", i);
    records.push_back(Bytes(*m));
  }
  for (int i = 0; i < 20; ++i)
    ASSERT_TRUE(h.Decode(records[static_cast<size_t>(i)]).ok());
  floe::testing::StartCountingNew();
  bool ok = true;
  for (const auto& r : records) ok &= h.Decode(r).ok();
  const int64_t news = floe::testing::StopCountingNew();
  ASSERT_TRUE(ok);
  EXPECT_EQ(news, 0) << "operator new calls after warm-up";
  EXPECT_EQ(h.Flush()->num_rows(), 220);
}

}  // namespace
}  // namespace floe::decode
