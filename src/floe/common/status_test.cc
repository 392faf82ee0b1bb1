#include "floe/common/status.h"

#include <gtest/gtest.h>

namespace floe {

TEST(StatusTest, KindRoundTrips) {
  EXPECT_EQ(KindOf(Conflict("x")), ErrorKind::kConflict);
  EXPECT_EQ(KindOf(InvalidRecord("bad")), ErrorKind::kInvalidRecord);
  EXPECT_EQ(KindOf(Status::OK()), ErrorKind::kNone);
  EXPECT_EQ(KindOf(Status::IOError("disk")), ErrorKind::kRetriable);
  EXPECT_EQ(KindOf(Status::Invalid("bug")), ErrorKind::kInternal);
  EXPECT_EQ(InvalidConfig("key 'x'").message(), "key 'x'");
}

}  // namespace floe
