// RewriteSortOrder: the table property resolved against the current schema (nested
// paths, directions, the id the table has or will give), the table's own default order
// without the property, and errors that name the column.
#include "floe/maintenance/sort_order.h"

#include <gtest/gtest.h>

#include "floe/table/table_properties.h"

namespace floe::maintenance {
namespace {

using iceberg::Type;
using iceberg::TypeId;

iceberg::TableMetadata Table(std::optional<std::string> property) {
  iceberg::Schema s;
  s.fields = {
      {1, "region", false, Type::Primitive(TypeId::kString), {}},
      {2,
       "_kafka",
       true,
       Type::Struct({{3, "timestamp", false, Type::Primitive(TypeId::kTimestampTz), {}}}),
       {}},
      {4, "tags", false, Type::List(5, false, Type::Primitive(TypeId::kString)), {}},
  };
  auto md = *iceberg::NewTableMetadata(s, "file:///w/t");
  if (property) md.properties[table::kCompactionSortOrderProperty] = *property;
  return md;
}

TEST(RewriteSortOrderTest, ResolvesThePropertyAgainstTheCurrentSchema) {
  auto md = Table("_kafka.timestamp desc, region");
  auto order = RewriteSortOrder(md);
  ASSERT_TRUE(order.ok()) << order.status().ToString();
  ASSERT_EQ(order->fields.size(), 2u);
  EXPECT_EQ(order->fields[0].source_id, 3);
  EXPECT_EQ(order->fields[0].direction, "desc");
  EXPECT_EQ(order->fields[0].null_order, "nulls-last");
  EXPECT_EQ(order->fields[1].source_id, 1);
  EXPECT_EQ(order->fields[1].direction, "asc");
  EXPECT_EQ(order->fields[1].null_order, "nulls-first");
  EXPECT_EQ(order->order_id, 1);  // new: one above the unsorted order

  // Already in the table: its id.
  iceberg::SortOrder known = *order;
  known.order_id = 7;
  md.sort_orders.push_back(known);
  EXPECT_EQ(RewriteSortOrder(md)->order_id, 7);

  // "": unsorted (the table has no order of its own).
  auto none = RewriteSortOrder(Table(""));
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->is_unsorted());
  EXPECT_EQ(none->order_id, 0);
}

// "" or no property: Floe leaves the order to the table; one a rewrite cannot apply (a
// transform, a field inside a list) leaves the rows unsorted instead of failing.
TEST(RewriteSortOrderTest, AnEmptyPropertyFollowsTheTablesOrderWhenItCan) {
  for (std::optional<std::string> property :
       {std::optional<std::string>(""), std::optional<std::string>()}) {
    auto md = Table(property);
    iceberg::SortOrder theirs;
    theirs.order_id = 3;
    theirs.fields = {{"identity", 3, "desc", "nulls-last"}};
    md.sort_orders.push_back(theirs);
    md.default_sort_order_id = 3;
    EXPECT_EQ(RewriteSortOrder(md)->order_id, 3);
    md.sort_orders.back().fields = {{"day", 3, "asc", "nulls-first"}};
    EXPECT_TRUE(RewriteSortOrder(md)->is_unsorted());
    md.sort_orders.back().fields = {
        {"identity", 5, "asc", "nulls-first"}};  // tags' element
    EXPECT_TRUE(RewriteSortOrder(md)->is_unsorted());
  }
}

TEST(RewriteSortOrderTest, WithoutThePropertyTheTablesDefaultOrder) {
  auto md = Table(std::nullopt);
  iceberg::SortOrder theirs;
  theirs.order_id = 2;
  theirs.fields = {{"identity", 1, "asc", "nulls-last"}};
  md.sort_orders.push_back(theirs);
  md.default_sort_order_id = 2;
  auto order = RewriteSortOrder(md);
  ASSERT_TRUE(order.ok());
  EXPECT_EQ(order->order_id, 2);
  EXPECT_EQ(order->fields[0].null_order, "nulls-last");
}

TEST(RewriteSortOrderTest, ErrorsNameTheColumn) {
  auto message = [](const std::string& spec) {
    auto r = RewriteSortOrder(Table(spec));
    EXPECT_FALSE(r.ok()) << spec;
    return r.ok() ? std::string() : r.status().message();
  };
  EXPECT_NE(message("amount").find("has no column amount"), std::string::npos);
  EXPECT_NE(message("_kafka.offset").find("has no column _kafka.offset"),
            std::string::npos);
  EXPECT_NE(message("_kafka").find("column _kafka is a struct"), std::string::npos);
  EXPECT_NE(message("tags.element").find("tags is not a struct"), std::string::npos);
  EXPECT_NE(message("region sideways").find("only 'asc' or 'desc'"), std::string::npos);
}

}  // namespace
}  // namespace floe::maintenance
