// Helpers shared by this module's unit tests (not part of the library).
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <string>

#include "floe/common/status.h"
#include "floe/iceberg/schema.h"

namespace floe::iceberg::testing {

// A fresh directory under $TMPDIR, removed with its contents at scope exit.
class TempDir {
 public:
  TempDir() {
    std::string tmpl =
        (std::filesystem::temp_directory_path() / "floe-iceberg-XXXXXX").string();
    char* p = ::mkdtemp(tmpl.data());
    if (p) path_ = p;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string uri() const { return "file://" + path_; }

 private:
  std::string path_;
};

// id long required, data string optional, tags list<string>, attrs map<string,long>,
// point struct<x double, y double>; field ids 1..11.
inline Schema SampleSchema() {
  Schema s;
  s.schema_id = 0;
  s.fields.push_back({1, "id", true, Type::Primitive(TypeId::kLong), ""});
  s.fields.push_back({2, "data", false, Type::Primitive(TypeId::kString), "payload"});
  s.fields.push_back(
      {3, "tags", false, Type::List(4, false, Type::Primitive(TypeId::kString)), ""});
  s.fields.push_back({5, "attrs", false,
                      Type::Map(6, Type::Primitive(TypeId::kString), 7, true,
                                Type::Primitive(TypeId::kLong)),
                      ""});
  s.fields.push_back(
      {8, "point", false,
       Type::Struct({{9, "x", true, Type::Primitive(TypeId::kDouble), ""},
                     {10, "y", true, Type::Primitive(TypeId::kDouble), ""}}),
       ""});
  s.fields.push_back({11, "ts", false, Type::Primitive(TypeId::kTimestampTz), ""});
  s.identifier_field_ids = {1};
  return s;
}

}  // namespace floe::iceberg::testing

#define ASSERT_OK(expr)                      \
  do {                                       \
    ::arrow::Status _st = (expr);            \
    ASSERT_TRUE(_st.ok()) << _st.ToString(); \
  } while (0)

#define EXPECT_OK(expr)                      \
  do {                                       \
    ::arrow::Status _st = (expr);            \
    EXPECT_TRUE(_st.ok()) << _st.ToString(); \
  } while (0)

#define FLOE_CONCAT_INNER(a, b) a##b
#define FLOE_CONCAT(a, b) FLOE_CONCAT_INNER(a, b)
#define ASSERT_OK_AND_ASSIGN(lhs, rexpr) \
  ASSERT_OK_AND_ASSIGN_IMPL(FLOE_CONCAT(_res_, __LINE__), lhs, rexpr)
#define ASSERT_OK_AND_ASSIGN_IMPL(res, lhs, rexpr)  \
  auto res = (rexpr);                               \
  ASSERT_TRUE(res.ok()) << res.status().ToString(); \
  lhs = std::move(res).ValueOrDie()
