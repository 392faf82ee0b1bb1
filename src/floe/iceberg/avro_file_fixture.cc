// Test-only driver for tests/integration/test_iceberg_avro.py: checks Floe's Avro
// container encoder/decoder against fastavro in both directions.
//
//   floe_iceberg_avro_fixture write <dir>   writes sample files and <name>.expected.json
//   floe_iceberg_avro_fixture read <file>   prints {"codec", "metadata", "records"} as
//   JSON
//
// Values are printed in one normalized JSON form both sides agree on: bytes and fixed as
// "hex:<hex>", enums as their symbol, records and maps as objects, NaN/inf as strings.
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "floe/common/util.h"
#include "floe/iceberg/avro_file.h"

namespace {

using floe::iceberg::avro::Datum;
using floe::iceberg::avro::Kind;
using floe::iceberg::avro::Node;
using Json = ::nlohmann::json;

Json Number(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  return v;
}

Json ToJson(const Node* n, const Datum& d) {
  if (n->kind == Kind::kUnion) n = n->branches.at(static_cast<size_t>(d.branch));
  switch (n->kind) {
    case Kind::kNull:
      return nullptr;
    case Kind::kBoolean:
      return d.boolean;
    case Kind::kInt:
    case Kind::kLong:
      return d.integer;
    case Kind::kFloat:
    case Kind::kDouble:
      return Number(d.real);
    case Kind::kString:
      return d.bytes;
    case Kind::kBytes:
    case Kind::kFixed:
      return "hex:" + floe::HexEncode(d.bytes);
    case Kind::kEnum:
      return n->symbols.at(static_cast<size_t>(d.integer));
    case Kind::kRecord: {
      Json o = Json::object();
      for (size_t i = 0; i < n->fields.size(); ++i)
        o[n->fields[i].name] = ToJson(n->fields[i].type, d.items[i]);
      return o;
    }
    case Kind::kArray: {
      Json a = Json::array();
      for (const auto& item : d.items) a.push_back(ToJson(n->items, item));
      return a;
    }
    case Kind::kMap: {
      Json o = Json::object();
      for (size_t i = 0; i < d.items.size(); ++i)
        o[d.keys[i]] = ToJson(n->items, d.items[i]);
      return o;
    }
    case Kind::kUnion:
      break;
  }
  return nullptr;
}

std::string Dump(const Json& j) {
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

const char* kSampleSchema = R"({
  "type": "record", "name": "sample", "namespace": "floe.fixture",
  "fields": [
    {"name": "id", "type": "long", "field-id": 1},
    {"name": "flag", "type": "boolean"},
    {"name": "small", "type": "int"},
    {"name": "ratio", "type": "float"},
    {"name": "score", "type": "double"},
    {"name": "name", "type": "string"},
    {"name": "blob", "type": "bytes"},
    {"name": "digest", "type": {"type": "fixed", "name": "digest4", "size": 4}},
    {"name": "color", "type": {"type": "enum", "name": "color", "symbols": ["RED", "GREEN", "BLUE"]}},
    {"name": "maybe", "type": ["null", "long"], "default": null},
    {"name": "either", "type": ["null", "string", "double"], "default": null},
    {"name": "nums", "type": {"type": "array", "items": "long", "element-id": 12}},
    {"name": "attrs", "type": {"type": "map", "values": ["null", "string"]}},
    {"name": "kv", "type": {"type": "array", "logicalType": "map", "items": {"type": "record",
       "name": "k117_v118", "fields": [{"name": "key", "type": "int", "field-id": 117},
                                       {"name": "value", "type": "long", "field-id": 118}]}}},
    {"name": "point", "type": {"type": "record", "name": "point", "fields": [
       {"name": "x", "type": "double"}, {"name": "y", "type": ["null", "double"]}]}},
    {"name": "other_digest", "type": "digest4"},
    {"name": "empty", "type": {"type": "record", "name": "r102", "fields": []}}
  ]})";

// Writes record k of the sample through the low-level encoder (even k) or a Datum (odd
// k).
void WriteSample(floe::iceberg::avro::Writer* w, int64_t k) {
  const double specials[] = {0.0,
                             -0.0,
                             1.5e300,
                             -2.25,
                             std::numeric_limits<double>::infinity(),
                             std::numeric_limits<double>::quiet_NaN()};
  const double score = specials[k % 6];
  const int64_t id =
      k * 7919 - 40000 + (k == 3 ? std::numeric_limits<int64_t>::max() / 2 : 0);
  const std::string name =
      "name-" + std::to_string(k) + (k % 4 == 0 ? " \xc3\xa9t\xc3\xa9" : "");
  const std::string blob(static_cast<size_t>(k % 5), static_cast<char>(0xf0 + k % 16));
  const std::string digest = {static_cast<char>(k), 'b', 'c', static_cast<char>(0xff)};
  if (k % 2 == 0) {
    auto& e = w->encoder();
    e.WriteLong(id);
    e.WriteBoolean(k % 3 == 0);
    e.WriteInt(static_cast<int32_t>(-k * 1000));
    e.WriteFloat(0.5f * static_cast<float>(k));
    e.WriteDouble(score);
    e.WriteString(name);
    e.WriteBytes(blob);
    e.WriteFixed(digest);
    e.WriteEnum(static_cast<int>(k % 3));
    if (k % 4 == 0) {
      e.WriteUnionIndex(0);
    } else {
      e.WriteUnionIndex(1);
      e.WriteLong(-k);
    }
    e.WriteUnionIndex(1);
    e.WriteString("s" + std::to_string(k));
    e.StartBlock(k % 3);
    for (int i = 0; i < k % 3; ++i) e.WriteLong(int64_t{1} << (10 * i));
    e.EndBlocks();
    e.StartBlock(2);
    e.WriteString("a");
    e.WriteUnionIndex(1);
    e.WriteString("x");
    e.WriteString("b");
    e.WriteUnionIndex(0);
    e.EndBlocks();
    e.StartBlock(1);
    e.WriteInt(static_cast<int32_t>(k));
    e.WriteLong(k * 10);
    e.EndBlocks();
    e.WriteDouble(1.0);
    e.WriteUnionIndex(0);
    e.WriteFixed(digest);
    w->EndRecord();
    return;
  }
  std::vector<Datum> f;
  f.push_back(Datum::Long(id));
  f.push_back(Datum::Boolean(k % 3 == 0));
  f.push_back(Datum::Int(static_cast<int32_t>(-k * 1000)));
  f.push_back(Datum::Float(0.5f * static_cast<float>(k)));
  f.push_back(Datum::Double(score));
  f.push_back(Datum::String(name));
  f.push_back(Datum::Bytes(blob));
  f.push_back(Datum::Fixed(digest));
  f.push_back(Datum::Enum(static_cast<int>(k % 3)));
  f.push_back(k % 4 == 0 ? Datum::Null() : Datum::Long(-k));
  f.push_back(Datum::Double(k / 4.0));
  std::vector<Datum> nums;
  for (int i = 0; i < k % 3; ++i) nums.push_back(Datum::Long(int64_t{1} << (10 * i)));
  f.push_back(Datum::Array(std::move(nums)));
  f.push_back(Datum::Map({{"a", Datum::String("x")}, {"b", Datum::Null()}}));
  f.push_back(Datum::Array(
      {Datum::Record({Datum::Int(static_cast<int32_t>(k)), Datum::Long(k * 10)})}));
  f.push_back(Datum::Record({Datum::Double(1.0), Datum::Double(-1.0 * k)}));
  f.push_back(Datum::Fixed(digest));
  f.push_back(Datum::Record({}));
  auto st = w->Append(Datum::Record(std::move(f)));
  if (!st.ok()) {
    std::cerr << st.ToString() << "\n";
    std::exit(1);
  }
}

int WriteFile(const std::string& path, int64_t records, size_t block_bytes) {
  floe::iceberg::avro::WriterOptions options;
  options.block_bytes = block_bytes;
  auto w = floe::iceberg::avro::Writer::Make(
      kSampleSchema, {{"writer", "floe"}, {"utf8", "h\xc3\xa9llo"}}, options);
  if (!w.ok()) {
    std::cerr << w.status().ToString() << "\n";
    return 1;
  }
  for (int64_t k = 0; k < records; ++k) WriteSample(w->get(), k);
  std::string bytes = (*w)->Finish();
  std::ofstream(path, std::ios::binary) << bytes;
  // The expected values, printed by decoding with Floe's own reader (the round trip is
  // covered by the unit tests; here fastavro must agree with this JSON).
  auto r = floe::iceberg::avro::Reader::Open(bytes);
  if (!r.ok()) {
    std::cerr << r.status().ToString() << "\n";
    return 1;
  }
  Json records_json = Json::array();
  Datum d;
  while (true) {
    auto more = (*r)->Next(&d);
    if (!more.ok()) {
      std::cerr << more.status().ToString() << "\n";
      return 1;
    }
    if (!*more) break;
    records_json.push_back(ToJson(&(*r)->schema().root(), d));
  }
  std::ofstream(path + ".expected.json") << Dump(records_json);
  return 0;
}

int Read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  auto r = floe::iceberg::avro::Reader::Open(ss.str());
  if (!r.ok()) {
    std::cerr << "error: " << r.status().ToString() << "\n";
    return 1;
  }
  Json out = Json::object();
  out["codec"] = (*r)->codec();
  Json meta = Json::object();
  for (const auto& [k, v] : (*r)->metadata()) {
    if (k == "avro.schema" || k == "avro.codec") continue;
    meta[k] = "hex:" + floe::HexEncode(v);
  }
  out["metadata"] = meta;
  Json records = Json::array();
  Datum d;
  while (true) {
    auto more = (*r)->Next(&d);
    if (!more.ok()) {
      std::cerr << "error: " << more.status().ToString() << "\n";
      return 1;
    }
    if (!*more) break;
    records.push_back(ToJson(&(*r)->schema().root(), d));
  }
  out["records"] = records;
  std::cout << Dump(out) << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::string(argv[1]) == "write") {
    std::string dir = argv[2];
    if (int rc = WriteFile(dir + "/sample.avro", 40, 64 * 1024)) return rc;
    if (int rc = WriteFile(dir + "/multi_block.avro", 500, 512)) return rc;
    return WriteFile(dir + "/empty.avro", 0, 64 * 1024);
  }
  if (argc == 3 && std::string(argv[1]) == "read") return Read(argv[2]);
  std::cerr << "usage: floe_iceberg_avro_fixture write <dir> | read <file>\n";
  return 2;
}
