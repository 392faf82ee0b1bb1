#include "floe/iceberg/avro_file.h"

#include <gtest/gtest.h>
#include <zlib.h>
#include <zstd.h>

#include <cstring>
#include <limits>
#include <random>

#include "floe/iceberg/test_util_internal.h"

namespace floe::iceberg::avro_file {
namespace {

using avro::Encoder;
using avro::LogicalType;
using avro::Node;
using avro::Type;

const char* kAllTypesSchema = R"({
  "type": "record", "name": "all", "namespace": "floe.test",
  "fields": [
    {"name": "n", "type": "null"},
    {"name": "b", "type": "boolean"},
    {"name": "i", "type": "int", "field-id": 1},
    {"name": "l", "type": {"type": "long", "logicalType": "timestamp-micros"}},
    {"name": "f", "type": "float"},
    {"name": "d", "type": "double"},
    {"name": "by", "type": "bytes"},
    {"name": "s", "type": "string"},
    {"name": "e", "type": {"type": "enum", "name": "color", "symbols": ["RED", "GREEN"]}},
    {"name": "fx", "type": {"type": "fixed", "name": "md5", "size": 4}},
    {"name": "fx2", "type": "md5"},
    {"name": "e2", "type": "floe.test.color"},
    {"name": "arr", "type": {"type": "array", "items": "long", "element-id": 7}},
    {"name": "m", "type": {"type": "map", "values": ["null", "string"], "key-id": 8, "value-id": 9}},
    {"name": "u", "type": ["null", "long", "string"], "default": null},
    {"name": "rec", "type": {"type": "record", "name": "inner", "fields": [
       {"name": "x", "type": "int"}, {"name": "next", "type": ["null", "inner"]}]}}
  ]})";

Datum AllTypesRecord(int k) {
  std::vector<Datum> f;
  f.push_back(Datum::Null());
  f.push_back(Datum::Boolean(k % 2 == 0));
  f.push_back(Datum::Int(-k));
  f.push_back(Datum::Long(1700000000000000LL + k));
  f.push_back(Datum::Float(0.25f * static_cast<float>(k)));
  f.push_back(Datum::Double(k * 1e300));
  f.push_back(Datum::Bytes(std::string(static_cast<size_t>(k % 5), '\xff')));
  f.push_back(Datum::String("row-" + std::to_string(k)));
  f.push_back(Datum::Enum(k % 2));
  f.push_back(Datum::Fixed("abcd"));
  f.push_back(Datum::Fixed("wxyz"));
  f.push_back(Datum::Enum(1));
  std::vector<Datum> arr;
  for (int i = 0; i < k % 4; ++i) arr.push_back(Datum::Long(i * 1000000007LL));
  f.push_back(Datum::Array(std::move(arr)));
  std::vector<std::pair<std::string, Datum>> m;
  m.emplace_back("a", Datum::String("x"));
  m.emplace_back("b", Datum::Null());
  f.push_back(Datum::Map(std::move(m)));
  f.push_back(k % 3 == 0 ? Datum::Null()
                         : (k % 3 == 1 ? Datum::Long(k) : Datum::String("s")));
  Datum inner_tail = Datum::Record({Datum::Int(2), Datum::Null()});
  f.push_back(Datum::Record({Datum::Int(1), std::move(inner_tail)}));
  return Datum::Record(std::move(f));
}

void ExpectSameValue(const Datum& a, const Datum& b, const std::string& path) {
  ASSERT_EQ(a.kind, b.kind) << path;
  switch (a.kind) {
    case Type::kBoolean:
      EXPECT_EQ(a.boolean, b.boolean) << path;
      break;
    case Type::kInt:
    case Type::kLong:
    case Type::kEnum:
      EXPECT_EQ(a.integer, b.integer) << path;
      break;
    case Type::kFloat:
    case Type::kDouble:
      EXPECT_EQ(a.real, b.real) << path;
      break;
    case Type::kBytes:
    case Type::kString:
    case Type::kFixed:
      EXPECT_EQ(a.bytes, b.bytes) << path;
      break;
    default:
      break;
  }
  EXPECT_EQ(a.keys, b.keys) << path;
  ASSERT_EQ(a.items.size(), b.items.size()) << path;
  for (size_t i = 0; i < a.items.size(); ++i)
    ExpectSameValue(a.items[i], b.items[i], path + "/" + std::to_string(i));
}

std::string WriteAllTypes(int n, WriterOptions options = {}) {
  auto w = Writer::Make(kAllTypesSchema,
                        {{"k1", "v1"}, {"bin", std::string("\0\xff", 2)}}, options)
               .ValueOrDie();
  for (int k = 0; k < n; ++k) EXPECT_OK(w->Append(AllTypesRecord(k)));
  return w->Finish();
}

// The writer schema as a container file holds it: anything the specification allows,
// recursive types included (the parser itself is floe/avro's, tested there).
TEST(AvroFile, SchemaParsing) {
  ASSERT_OK_AND_ASSIGN(auto w, Writer::Make(kAllTypesSchema, {}));
  const Node& root = w->schema().root();
  EXPECT_EQ(root.type, Type::kRecord);
  EXPECT_EQ(root.full_name, "floe.test.all");
  EXPECT_EQ(root.fields.size(), 16u);
  EXPECT_EQ(root.fields[2].field_id, 1);
  EXPECT_EQ(root.fields[0].field_id, -1);
  EXPECT_EQ(root.fields[3].type->logical_type, LogicalType::kTimestampMicros);
  EXPECT_EQ(root.fields[10].type, root.fields[9].type);  // named reference
  EXPECT_EQ(root.fields[11].type, root.fields[8].type);  // full-name reference
  EXPECT_EQ(root.fields[12].type->element_id, 7);
  EXPECT_EQ(root.fields[13].type->key_id, 8);
  EXPECT_EQ(root.fields[13].type->value_id, 9);
  const Node* inner = root.fields[15].type;
  EXPECT_EQ(inner->fields[1].type->branches[1], inner);  // recursive
  EXPECT_EQ(root.FieldIndex("s"), 7);
  EXPECT_EQ(root.FieldIndexById(1), 2);
  EXPECT_GT(root.min_bytes, 20);

  for (
      const char* bad :
      {"", "{}", "\"nope\"", R"({"type":"record","fields":[]})",
       R"({"type":"record","name":"r","fields":[{"name":"a","type":"missing"}]})",
       R"({"type":"enum","name":"e","symbols":[]})",
       R"({"type":"fixed","name":"f","size":-1})", "[]", R"(["null",["int"]])",
       R"({"type":"array"})",
       R"({"type":"record","name":"r","fields":[{"name":"a","type":{"type":"fixed","name":"r","size":1}}]})"}) {
    auto made = Writer::Make(bad, {});
    ASSERT_FALSE(made.ok()) << bad;
    EXPECT_EQ(KindOf(made.status()), ErrorKind::kInvalidInput) << bad;
  }
  std::string deep = "\"int\"";
  for (int i = 0; i < 100; ++i) deep = R"({"type":"array","items":)" + deep + "}";
  EXPECT_FALSE(Writer::Make(deep, {}).ok());
}

TEST(AvroFile, WriteReadRoundTripAcrossBlocks) {
  WriterOptions small;
  small.block_bytes = 200;  // many blocks
  std::string file = WriteAllTypes(100, small);
  ASSERT_OK_AND_ASSIGN(auto r, Reader::Open(file));
  EXPECT_EQ(r->codec(), "null");
  ASSERT_NE(r->FindMetadata("k1"), nullptr);
  EXPECT_EQ(*r->FindMetadata("k1"), "v1");
  EXPECT_EQ(*r->FindMetadata("bin"), std::string("\0\xff", 2));
  EXPECT_EQ(r->FindMetadata("absent"), nullptr);
  EXPECT_EQ(r->schema().root().full_name, "floe.test.all");
  ASSERT_OK_AND_ASSIGN(auto records, r->ReadAll());
  ASSERT_EQ(records.size(), 100u);
  for (int k = 0; k < 100; ++k)
    ExpectSameValue(records[k], AllTypesRecord(k), "r" + std::to_string(k));
  EXPECT_EQ(records[1].items[14].branch, 1);  // union branch reported
  EXPECT_EQ(records[2].items[14].branch, 2);
}

TEST(AvroFile, LowLevelEncoderMatchesGenericAppend) {
  const char* schema = R"({"type":"record","name":"r","fields":[
      {"name":"a","type":"long"},{"name":"b","type":["null","string"]},
      {"name":"c","type":{"type":"array","items":"int"}}]})";
  auto w = Writer::Make(schema, {}).ValueOrDie();
  Encoder& e = w->encoder();
  e.WriteLong(42);
  e.WriteUnionIndex(1);
  e.WriteString("hi");
  e.StartBlock(2);
  e.WriteInt(1);
  e.WriteInt(2);
  e.EndBlocks();
  w->EndRecord();
  ASSERT_OK(w->Append(Datum::Record({Datum::Long(42), Datum::String("hi"),
                                     Datum::Array({Datum::Int(1), Datum::Int(2)})})));
  EXPECT_EQ(w->records(), 2);
  // A datum that does not fit the schema is rejected and leaves no partial record.
  EXPECT_FALSE(
      w->Append(Datum::Record({Datum::String("x"), Datum::Null(), Datum::Array({})}))
          .ok());
  EXPECT_FALSE(w->Append(Datum::Record({Datum::Long(1)})).ok());
  ASSERT_OK_AND_ASSIGN(auto r, Reader::Open(w->Finish()));
  ASSERT_OK_AND_ASSIGN(auto records, r->ReadAll());
  ASSERT_EQ(records.size(), 2u);
  ExpectSameValue(records[0], records[1], "low-vs-generic");
  EXPECT_EQ(records[0].items[1].bytes, "hi");
}

TEST(AvroFile, EmptyFileHasNoBlocks) {
  auto w = Writer::Make(R"("long")", {}).ValueOrDie();
  std::string file = w->Finish();
  ASSERT_OK_AND_ASSIGN(auto r, Reader::Open(file));
  ASSERT_OK_AND_ASSIGN(auto records, r->ReadAll());
  EXPECT_TRUE(records.empty());
}

// Rewrites `file` (written with codec null) with its blocks compressed.
std::string Recompress(const std::string& file, const std::string& codec) {
  auto r = Reader::Open(file).ValueOrDie();
  // Re-encode header with the codec.
  Encoder h;
  h.WriteFixed(std::string("Obj\x01", 4));
  h.StartBlock(2);
  h.WriteString("avro.schema");
  h.WriteBytes(r->schema().json());
  h.WriteString("avro.codec");
  h.WriteBytes(codec);
  h.EndBlocks();
  std::string sync(16, 'S');
  h.WriteFixed(sync);
  std::string out = h.buffer();
  // One block with all records: re-encode them.
  Encoder body;
  int64_t n = 0;
  Datum d;
  while (r->Next(&d).ValueOrDie()) {
    EXPECT_OK(EncodeDatum(r->schema().root(), d, &body));
    ++n;
  }
  std::string raw = body.buffer();
  std::string packed;
  if (codec == "deflate") {
    z_stream zs;
    std::memset(&zs, 0, sizeof(zs));
    deflateInit2(&zs, 6, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY);
    packed.resize(deflateBound(&zs, raw.size()));
    zs.next_in = reinterpret_cast<Bytef*>(raw.data());
    zs.avail_in = static_cast<uInt>(raw.size());
    zs.next_out = reinterpret_cast<Bytef*>(packed.data());
    zs.avail_out = static_cast<uInt>(packed.size());
    deflate(&zs, Z_FINISH);
    packed.resize(zs.total_out);
    deflateEnd(&zs);
  } else {
    packed.resize(ZSTD_compressBound(raw.size()));
    packed.resize(ZSTD_compress(packed.data(), packed.size(), raw.data(), raw.size(), 3));
  }
  Encoder blk;
  blk.WriteLong(n);
  blk.WriteLong(static_cast<int64_t>(packed.size()));
  return out + blk.buffer() + packed + sync;
}

TEST(AvroFile, ReadsDeflateAndZstandard) {
  std::string plain = WriteAllTypes(20);
  for (const char* codec : {"deflate", "zstandard"}) {
    std::string packed = Recompress(plain, codec);
    ASSERT_OK_AND_ASSIGN(auto r, Reader::Open(packed));
    EXPECT_EQ(r->codec(), codec);
    ASSERT_OK_AND_ASSIGN(auto records, r->ReadAll());
    ASSERT_EQ(records.size(), 20u) << codec;
    for (int k = 0; k < 20; ++k) ExpectSameValue(records[k], AllTypesRecord(k), codec);
    // Truncating the compressed block is an error, not a crash.
    std::string cut = packed.substr(0, packed.size() - 30);
    auto r2 = Reader::Open(cut);
    if (r2.ok()) {
      EXPECT_FALSE((*r2)->ReadAll().ok()) << codec;
    }
  }
}

TEST(AvroFile, DecompressionIsBounded) {
  // 256 KiB of zero bytes deflates to a few hundred bytes: a "bomb" against a 16 KiB
  // limit.
  const char* schema = R"({"type":"array","items":"boolean"})";
  Encoder body;
  body.StartBlock(1 << 18);
  for (int i = 0; i < (1 << 18); ++i) body.WriteBoolean(false);
  body.EndBlocks();
  auto w = Writer::Make(schema, {}).ValueOrDie();
  w->encoder().buffer() = body.buffer();
  w->EndRecord();
  std::string packed = Recompress(w->Finish(), "deflate");
  ReaderOptions opts;
  opts.max_block_bytes = 16 << 10;
  ASSERT_OK_AND_ASSIGN(auto r, Reader::Open(packed, opts));
  auto all = r->ReadAll();
  ASSERT_FALSE(all.ok());
  EXPECT_NE(all.status().message().find("expands beyond"), std::string::npos);
  ASSERT_OK_AND_ASSIGN(auto r2, Reader::Open(packed));  // default limit: fine
  ASSERT_OK(r2->ReadAll().status());
}

TEST(AvroFile, RejectsUnsupportedCodecAndBadHeaders) {
  std::string file = WriteAllTypes(3);
  std::string snappy = file;
  size_t at = snappy.find("null", snappy.find("avro.codec"));
  ASSERT_NE(at, std::string::npos);
  snappy.replace(at, 4, "xzzz");
  auto r = Reader::Open(snappy);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("unsupported codec"), std::string::npos);
  EXPECT_FALSE(Reader::Open("").ok());
  EXPECT_FALSE(Reader::Open("Obj").ok());
  EXPECT_FALSE(Reader::Open("Obj\x02" + file.substr(4)).ok());
  std::string bad_sync = file;
  bad_sync[bad_sync.size() - 1] ^= 1;  // last block's sync marker
  ASSERT_OK_AND_ASSIGN(auto rs, Reader::Open(bad_sync));
  auto all = rs->ReadAll();
  ASSERT_FALSE(all.ok());
  EXPECT_NE(all.status().message().find("sync"), std::string::npos);
}

TEST(AvroFile, EveryTruncationIsAnErrorNotACrash) {
  std::string file = WriteAllTypes(5);
  // Cut exactly after the header, the file is a valid empty file (Avro cannot tell);
  // every other prefix must fail.
  const size_t header_size =
      Writer::Make(kAllTypesSchema, {{"k1", "v1"}, {"bin", std::string("\0\xff", 2)}})
          .ValueOrDie()
          ->Finish()
          .size();
  for (size_t len = 0; len < file.size(); ++len) {
    auto r = Reader::Open(file.substr(0, len));
    if (!r.ok()) {
      EXPECT_EQ(KindOf(r.status()), ErrorKind::kInvalidInput) << len;
      continue;
    }
    auto all = (*r)->ReadAll();
    if (len == header_size) {
      EXPECT_TRUE(all.ok() && all->empty()) << len;
    } else {
      EXPECT_FALSE(all.ok()) << "prefix of " << len << " bytes read as complete";
    }
  }
}

TEST(AvroFile, RandomCorruptionNeverCrashes) {
  std::string file = WriteAllTypes(10);
  std::mt19937 rng(1234);
  int errors = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    std::string f = file;
    int flips = 1 + static_cast<int>(rng() % 4);
    for (int i = 0; i < flips; ++i) f[rng() % f.size()] = static_cast<char>(rng());
    auto r = Reader::Open(f);
    if (!r.ok()) {
      ++errors;
      continue;
    }
    auto all = (*r)->ReadAll();
    if (!all.ok()) ++errors;
  }
  EXPECT_GT(errors, 0);
}

// A block body hand-built to lie about sizes.
std::string FileWithBody(const char* schema, const std::string& body, int64_t count) {
  auto w = Writer::Make(schema, {}).ValueOrDie();
  std::string header = w->Finish();  // no blocks: header only, ends with the sync marker
  std::string sync = header.substr(header.size() - 16);
  Encoder blk;
  blk.WriteLong(count);
  blk.WriteLong(static_cast<int64_t>(body.size()));
  return header + blk.buffer() + body + sync;
}

TEST(AvroFile, HostileLengthsAndCountsAreRejectedBeforeAllocating) {
  struct Case {
    const char* name;
    const char* schema;
    std::string body;
    int64_t count;
  };
  auto enc = [](auto fn) {
    Encoder e;
    fn(e);
    return e.buffer();
  };
  std::vector<Case> cases = {
      {"huge string", R"("string")", enc([](Encoder& e) { e.WriteLong(1LL << 60); }), 1},
      {"negative string", R"("string")", enc([](Encoder& e) { e.WriteLong(-5); }), 1},
      {"huge array", R"({"type":"array","items":"long"})", enc([](Encoder& e) {
         e.WriteLong(1LL << 40);
         e.WriteLong(1);
       }),
       1},
      {"min int64 count", R"({"type":"array","items":"long"})",
       enc([](Encoder& e) { e.WriteLong(std::numeric_limits<int64_t>::min()); }), 1},
      {"negative count bad size", R"({"type":"array","items":"long"})",
       enc([](Encoder& e) {
         e.WriteLong(-2);
         e.WriteLong(1000);
         e.WriteLong(1);
         e.WriteLong(2);
       }),
       1},
      {"zero-byte items", R"({"type":"array","items":"null"})", enc([](Encoder& e) {
         e.WriteLong(1LL << 50);
         e.WriteLong(0);
       }),
       1},
      {"zero-byte items in many blocks", R"({"type":"array","items":"null"})",
       enc([](Encoder& e) {
         for (int i = 0; i < 4000; ++i) e.WriteLong(60000);
         e.WriteLong(0);
       }),
       1},
      {"huge map", R"({"type":"map","values":"null"})", enc([](Encoder& e) {
         e.WriteLong(1LL << 30);
         e.WriteString("a");
       }),
       1},
      {"union index", R"(["null","long"])", enc([](Encoder& e) { e.WriteLong(7); }), 1},
      {"enum index", R"({"type":"enum","name":"e","symbols":["A"]})",
       enc([](Encoder& e) { e.WriteLong(3); }), 1},
      {"too many objects", R"("long")", enc([](Encoder& e) { e.WriteLong(1); }),
       1LL << 40},
      {"too many null objects", R"("null")", std::string(), 1LL << 40},
      {"trailing bytes", R"("long")", enc([](Encoder& e) {
         e.WriteLong(1);
         e.WriteLong(2);
       }),
       1},
      {"fixed truncated", R"({"type":"fixed","name":"f","size":8})", std::string("abc"),
       1},
  };
  for (const auto& c : cases) {
    std::string file = FileWithBody(c.schema, c.body, c.count);
    auto r = Reader::Open(file);
    ASSERT_TRUE(r.ok()) << c.name << ": " << r.status().ToString();
    auto all = (*r)->ReadAll();
    ASSERT_FALSE(all.ok()) << c.name;
    EXPECT_EQ(KindOf(all.status()), ErrorKind::kInvalidInput) << c.name;
  }
  // A block whose size exceeds the file is rejected too.
  std::string file = FileWithBody(R"("long")", std::string("\x02", 1), 1);
  ASSERT_OK_AND_ASSIGN(auto r, Reader::Open(file.substr(0, file.size() - 17)));
  EXPECT_FALSE(r->ReadAll().ok());
}

TEST(AvroFile, DeepRecursionIsBounded) {
  const char* schema =
      R"({"type":"record","name":"node","fields":[{"name":"next","type":["null","node"]}]})";
  Encoder e;
  for (int i = 0; i < 1000; ++i) e.WriteUnionIndex(1);
  e.WriteUnionIndex(0);
  std::string file = FileWithBody(schema, e.buffer(), 1);
  ASSERT_OK_AND_ASSIGN(auto r, Reader::Open(file));
  auto all = r->ReadAll();
  ASSERT_FALSE(all.ok());
  EXPECT_NE(all.status().message().find("deeper"), std::string::npos);
}

}  // namespace
}  // namespace floe::iceberg::avro_file
