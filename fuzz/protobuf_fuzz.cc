// Fuzz target: the compiled Protobuf decoder (floe/decode/protobuf_decoder.h).
//
// The input is one Protobuf binary message (no framing, no message indexes). It is
// decoded by three decoders:
//  - `proto3`: a proto3 message with every scalar type, an enum, explicit presence,
//    a oneof, nested and repeated messages, packed and unpacked repeated scalars, maps of
//    every key kind, Timestamp and the wrapper types, into the table its mapping gives;
//  - `evolved`: the same writer into a table that dropped fields (skipped like unknown
//    fields) and widened others (int→long, float→double);
//  - `proto2`: a proto2 message with required fields, [default = ...], closed enums and
//    [packed = true].
// Field numbers overlap on purpose, so one input exercises all three. Checks as in
// avro_fuzz.cc: each decoder decodes the message twice, then the builders hold two equal
// valid rows, or none when the message was refused; what `proto3` accepts, `evolved` must
// accept too.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "floe/decode/protobuf_decoder.h"
#include "floe/schema/protobuf_schema.h"
#include "fuzz/fuzz_util.h"

namespace floe::fuzz {
namespace {

constexpr char kProto3[] = R"(
  syntax = "proto3";
  package fz;
  import "google/protobuf/timestamp.proto";
  import "google/protobuf/wrappers.proto";
  enum Color { RED = 0; GREEN = 1; BLUE = 2; }
  message Inner { int32 x = 1; string y = 2; repeated sint64 z = 3; float f = 4; }
  message All {
    int32 i32 = 1; sint32 s32 = 2; sfixed32 sf32 = 3;
    int64 i64 = 4; sint64 s64 = 5; sfixed64 sf64 = 6;
    uint32 u32 = 7; fixed32 f32 = 8; uint64 u64 = 9; fixed64 f64 = 10;
    bool b = 11; float fl = 12; double d = 13; string s = 14; bytes by = 15;
    Color c = 16;
    optional int32 opt = 17;
    oneof choice { string oa = 18; Inner ob = 19; int64 oc = 20; }
    Inner inner = 21;
    repeated int32 r_i32 = 22;
    repeated double r_d = 23;
    repeated string r_s = 24;
    repeated Inner r_m = 25;
    repeated Color r_c = 26;
    repeated bool r_b = 27;
    repeated fixed64 r_f64 = 28;
    repeated sint32 r_s32 = 29 [packed = false];
    map<string, int64> m_si = 30;
    map<int32, Inner> m_im = 31;
    map<uint64, google.protobuf.DoubleValue> m_uw = 32;
    map<bool, bytes> m_bb = 33;
    map<sfixed64, Color> m_sc = 34;
    google.protobuf.Timestamp ts = 35;
    repeated google.protobuf.Timestamp r_ts = 36;
    google.protobuf.Int32Value w_i32 = 37;
    google.protobuf.Int64Value w_i64 = 38;
    google.protobuf.UInt32Value w_u32 = 39;
    google.protobuf.UInt64Value w_u64 = 40;
    google.protobuf.FloatValue w_f = 41;
    google.protobuf.DoubleValue w_d = 42;
    google.protobuf.BoolValue w_b = 43;
    google.protobuf.StringValue w_s = 44;
    google.protobuf.BytesValue w_by = 45;
    optional string opt_s = 46;
    optional Color opt_c = 47;
    message Deep { Inner a = 1; repeated Deep2 b = 2; }
    message Deep2 { map<string, Inner> m = 1; repeated uint32 u = 2; }
    Deep deep = 48;
  })";

// The table of `evolved`: the same message names, fewer fields, wider types.
constexpr char kEvolved[] = R"(
  syntax = "proto3";
  package fz;
  import "google/protobuf/timestamp.proto";
  message Inner { int64 x = 1; double f = 4; }
  message All {
    int64 i32 = 1; int64 s32 = 2;
    double fl = 12;
    string s = 14;
    optional int64 opt = 17;
    oneof choice { string oa = 18; Inner ob = 19; int64 oc = 20; }
    Inner inner = 21;
    repeated int64 r_i32 = 22;
    repeated Inner r_m = 25;
    map<int32, Inner> m_im = 31;
    google.protobuf.Timestamp ts = 35;
    optional string added = 99;
  })";

constexpr char kProto2[] = R"(
  syntax = "proto2";
  package fz2;
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
    repeated int32 packed = 9 [packed = true];
    repeated sint64 unpacked = 10;
    repeated fixed32 fx = 11;
    message Sub { required string k = 1; optional bytes v = 2; repeated E es = 3; }
    optional Sub sub = 12;
    optional uint64 u64 = 13 [default = 18446744073709551615];
    map<string, Sub> subs = 14;
    repeated Sub r_sub = 15;
    optional float fl = 16 [default = -1.5];
  })";

struct Target {
  iceberg::Schema table;
  Columns columns;
  std::unique_ptr<decode::ProtobufDecoder> decoder;

  Target(const ::google::protobuf::Descriptor& writer, const iceberg::Schema& t)
      : table(t),
        columns(table),
        decoder(OrDie(decode::ProtobufDecoder::Make(writer, table),
                      "ProtobufDecoder::Make")) {}

  bool Run(const uint8_t* data, size_t size, const char* name) {
    return DecodeTwiceAndCheck(*decoder, columns, data, size, name);
  }
};

const ::google::protobuf::Descriptor& Message(
    const std::shared_ptr<const schema::ProtobufSchema>& s, int32_t index) {
  return *OrDie(s->MessageAt(&index, 1), "MessageAt");
}

iceberg::Schema TableOf(const ::google::protobuf::Descriptor& message) {
  return TableFrom(OrDie(schema::ProtobufToIcebergFields(message), "fields"));
}

struct Fixture {
  std::shared_ptr<const schema::ProtobufSchema> proto3 =
      OrDie(schema::ProtobufSchema::Make(kProto3), "ProtobufSchema::Make");
  std::shared_ptr<const schema::ProtobufSchema> evolved_schema =
      OrDie(schema::ProtobufSchema::Make(kEvolved), "ProtobufSchema::Make");
  std::shared_ptr<const schema::ProtobufSchema> proto2 =
      OrDie(schema::ProtobufSchema::Make(kProto2), "ProtobufSchema::Make");
  // Messages in file order: Inner = 0, All = 1.
  Target all{Message(proto3, 1), TableOf(Message(proto3, 1))};
  Target evolved{Message(proto3, 1), TableOf(Message(evolved_schema, 1))};
  Target m{Message(proto2, 0), TableOf(Message(proto2, 0))};
};

void Run(const uint8_t* data, size_t size) {
  static Fixture* fixture = new Fixture();  // never destroyed: outlives every input
  const bool all_ok = fixture->all.Run(data, size, "proto3");
  const bool evolved_ok = fixture->evolved.Run(data, size, "evolved");
  fixture->m.Run(data, size, "proto2");
  if (all_ok && !evolved_ok) {
    Fail("the evolved table refused a message that the writer's own table accepts");
  }
}

}  // namespace
}  // namespace floe::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  floe::fuzz::Run(data, size);
  return 0;
}
