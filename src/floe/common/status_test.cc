#include "floe/common/status.h"

#include <gtest/gtest.h>

namespace floe {

TEST(StatusTest, KindRoundTrips) {
  EXPECT_EQ(KindOf(Conflict("x")), ErrorKind::kConflict);
  EXPECT_EQ(KindOf(InvalidRecord("bad")), ErrorKind::kInvalidRecord);
  EXPECT_EQ(KindOf(InvalidInput("bad body")), ErrorKind::kInvalidInput);
  EXPECT_EQ(KindOf(Internal("bug")), ErrorKind::kInternal);
  EXPECT_EQ(KindOf(Status::OK()), ErrorKind::kNone);
  EXPECT_EQ(KindOf(Status::IOError("disk")), ErrorKind::kRetriable);
  EXPECT_EQ(KindOf(Status::Invalid("bug")), ErrorKind::kInternal);
  EXPECT_EQ(InvalidConfig("key 'x'").message(), "key 'x'");
}

TEST(StatusTest, WithContextKeepsKindAndCode) {
  const Status kinds[] = {NotFound("a"),      Conflict("a"),      StateUnknown("a"),
                          Retriable("a"),     InvalidRecord("a"), InvalidInput("a"),
                          InvalidConfig("a"), Forbidden("a"),     Suspend("a"),
                          Internal("a")};
  for (const Status& st : kinds) {
    Status wrapped = WithContext(st, "loading table db.t");
    EXPECT_EQ(KindOf(wrapped), KindOf(st)) << wrapped.ToString();
    EXPECT_EQ(wrapped.code(), st.code()) << wrapped.ToString();
    EXPECT_EQ(wrapped.message(), "loading table db.t: a");
  }
  // Arrow's own statuses keep their code, so KindOf still reads them the same way.
  Status io = WithContext(Status::IOError("disk gone"), "reading m.json");
  EXPECT_TRUE(io.IsIOError());
  EXPECT_EQ(KindOf(io), ErrorKind::kRetriable);
  EXPECT_EQ(io.message(), "reading m.json: disk gone");
  // Nested context reads outermost first.
  Status twice = WithContext(WithContext(Retriable("timeout"), "inner"), "outer");
  EXPECT_EQ(KindOf(twice), ErrorKind::kRetriable);
  EXPECT_EQ(twice.message(), "outer: inner: timeout");
  EXPECT_TRUE(WithContext(Status::OK(), "nothing").ok());
}

}  // namespace floe
