// The FileIO contract, run against every backend (local disk, process memory, S3), plus
// what is particular to the local one (warehouse containment, hidden temporaries). The S3
// cases need a store: tests/integration/test_s3_file_io.py starts SeaweedFS and runs them
// with FLOE_TEST_S3_ENDPOINT (host:port, http), FLOE_TEST_S3_BUCKET,
// FLOE_TEST_S3_ACCESS_KEY and FLOE_TEST_S3_SECRET_KEY set; without them they are skipped.
#include "floe/storage/file_io.h"

#include <arrow/io/interfaces.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "floe/storage/counting_file_io.h"
#include "floe/storage/file_io_test_util.h"

namespace floe::storage {
namespace {

enum class Backend { kLocal, kMemory, kS3 };

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? "" : v;
}

// Arrow's S3 client must be shut down before exit, and not from an atexit handler.
class S3Environment : public ::testing::Environment {
 public:
  void TearDown() override { FinalizeS3(); }
};
::testing::Environment* const s3_environment =
    ::testing::AddGlobalTestEnvironment(new S3Environment);

class FileIOContract : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    if (GetParam() == Backend::kLocal) {
      root_ = std::filesystem::temp_directory_path() /
              ("floe-fileio-" + std::to_string(::getpid()));
      std::filesystem::remove_all(root_);
      base_ = PathToFileUri(root_.string());
      io_ = MakeLocalFileIO(base_);
    } else if (GetParam() == Backend::kMemory) {
      base_ = "memory://wh";
      io_ = MakeMemoryFileIO();
    } else {
      const std::string endpoint = Env("FLOE_TEST_S3_ENDPOINT");
      if (endpoint.empty()) GTEST_SKIP() << "FLOE_TEST_S3_ENDPOINT is not set";
      S3Settings s;
      s.endpoint = endpoint;
      s.scheme = "http";
      s.path_style = true;
      s.access_key = Env("FLOE_TEST_S3_ACCESS_KEY");
      s.secret_key = Env("FLOE_TEST_S3_SECRET_KEY");
      // One prefix per test and process ("WriteReadSizeDelete/S3" → "...-S3").
      std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
      for (char& c : name) {
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '-';
      }
      base_ = "s3://" + Env("FLOE_TEST_S3_BUCKET") + "/fileio-" +
              std::to_string(::getpid()) + "-" + name;
      auto io = MakeS3FileIO(base_, s);
      ASSERT_TRUE(io.ok()) << io.status().ToString();
      io_ = std::move(*io);
    }
  }
  void TearDown() override {
    if (!root_.empty()) std::filesystem::remove_all(root_);
  }
  std::string Uri(const std::string& rel) { return base_ + "/" + rel; }

  std::filesystem::path root_;
  std::string base_;
  std::unique_ptr<FileIO> io_;
};

TEST_P(FileIOContract, WriteReadSizeDelete) {
  ASSERT_TRUE(io_->WriteNew(Uri("a/b/c.json"), "hello").ok());
  EXPECT_EQ(*io_->Read(Uri("a/b/c.json")), "hello");
  EXPECT_EQ(*io_->Size(Uri("a/b/c.json")), 5);
  EXPECT_TRUE(*io_->Exists(Uri("a/b/c.json")));
  ASSERT_TRUE(io_->Delete(Uri("a/b/c.json")).ok());
  EXPECT_FALSE(*io_->Exists(Uri("a/b/c.json")));
  EXPECT_EQ(KindOf(io_->Read(Uri("a/b/c.json")).status()), ErrorKind::kNotFound);
  EXPECT_EQ(KindOf(io_->Size(Uri("a/b/c.json")).status()), ErrorKind::kNotFound);
  EXPECT_EQ(KindOf(io_->OpenInputFile(Uri("a/b/c.json")).status()), ErrorKind::kNotFound);
  EXPECT_TRUE(io_->Delete(Uri("a/b/c.json")).ok());  // absent: still OK
  // DeleteIfPresent says whether there was anything to delete.
  ASSERT_TRUE(io_->WriteNew(Uri("a/b/d.json"), "x").ok());
  EXPECT_EQ(*io_->DeleteIfPresent(Uri("a/b/d.json")), true);
  EXPECT_FALSE(*io_->Exists(Uri("a/b/d.json")));
  EXPECT_EQ(*io_->DeleteIfPresent(Uri("a/b/d.json")), false);
  ASSERT_TRUE(io_->WriteNew(Uri("empty"), "").ok());
  EXPECT_EQ(*io_->Read(Uri("empty")), "");
}

TEST_P(FileIOContract, CreateIfAbsentNeverOverwrites) {
  ASSERT_TRUE(io_->WriteNew(Uri("x"), "first").ok());
  auto st = io_->WriteNew(Uri("x"), "second");
  EXPECT_EQ(KindOf(st), ErrorKind::kConflict);
  EXPECT_EQ(*io_->Read(Uri("x")), "first");
}

TEST_P(FileIOContract, CreateIfAbsentHasOneWinnerUnderARace) {
  constexpr int kThreads = 8;
  std::atomic<int> won{0}, lost{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      Status st = io_->WriteNew(Uri("race/v1.json"), "writer " + std::to_string(i));
      if (st.ok()) won++;
      if (KindOf(st) == ErrorKind::kConflict) lost++;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(won.load(), 1);
  EXPECT_EQ(lost.load(), kThreads - 1);
  auto listed = io_->List(Uri("race/"));
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(listed->size(), 1u);  // no temporaries left behind
}

TEST_P(FileIOContract, StreamsWriteAndReadBack) {
  const std::string uri = Uri("t/data/0-0.parquet");
  auto out = io_->OpenOutputStream(uri);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  // Larger than one S3 part (10 MiB): a multipart upload of three parts there.
  std::string big(25 << 20, 'z');
  ASSERT_TRUE((*out)->Write("head", 4).ok());
  ASSERT_TRUE((*out)->Write(big.data(), static_cast<int64_t>(big.size())).ok());
  EXPECT_EQ(*(*out)->Tell(), 4 + static_cast<int64_t>(big.size()));
  ASSERT_TRUE((*out)->Close().ok());
  EXPECT_EQ(*io_->Size(uri), 4 + static_cast<int64_t>(big.size()));

  auto in = io_->OpenInputFile(uri);
  ASSERT_TRUE(in.ok()) << in.status().ToString();
  EXPECT_EQ(*(*in)->GetSize(), 4 + static_cast<int64_t>(big.size()));
  char buf[4];
  ASSERT_EQ(*(*in)->ReadAt(0, 4, buf), 4);
  EXPECT_EQ(std::string(buf, 4), "head");
  EXPECT_EQ(io_->Read(uri)->size(), 4 + big.size());
}

TEST_P(FileIOContract, OverwriteReplacesWhole) {
  ASSERT_TRUE(io_->Overwrite(Uri("log/_last_checkpoint"), "{\"version\":10}").ok());
  EXPECT_EQ(*io_->Read(Uri("log/_last_checkpoint")), "{\"version\":10}");
  ASSERT_TRUE(io_->Overwrite(Uri("log/_last_checkpoint"), "{\"version\":20}").ok());
  EXPECT_EQ(*io_->Read(Uri("log/_last_checkpoint")), "{\"version\":20}");
  auto listed = io_->List(Uri("log/"));
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(listed->size(), 1u);  // no temporaries left behind
}

TEST_P(FileIOContract, AnAbortedStreamLeavesNoObject) {
  const std::string uri = Uri("t/data/aborted.parquet");
  auto out = io_->OpenOutputStream(uri);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  std::string part(3 << 20, 'q');
  ASSERT_TRUE((*out)->Write(part.data(), static_cast<int64_t>(part.size())).ok());
  ASSERT_TRUE((*out)->Abort().ok());
  if (GetParam() != Backend::kS3) {
    // A local (or in-memory) file exists from its first byte; the pipeline deletes what
    // it abandons. On S3 an aborted upload never becomes an object.
    ASSERT_TRUE(io_->Delete(uri).ok());
  }
  EXPECT_FALSE(*io_->Exists(uri));
}

TEST_P(FileIOContract, ProbesCreateIfAbsent) {
  auto honoured = SupportsCreateIfAbsent(io_.get(), Uri("probe"));
  ASSERT_TRUE(honoured.ok()) << honoured.status().ToString();
  EXPECT_TRUE(*honoured);
  auto listed = io_->List(Uri("probe/"));
  ASSERT_TRUE(listed.ok());
  EXPECT_TRUE(listed->empty());  // the probe object is gone again
}

TEST_P(FileIOContract, AStreamNeverReplacesAnObject) {
  ASSERT_TRUE(io_->WriteNew(Uri("d/f"), "kept").ok());
  EXPECT_EQ(KindOf(io_->OpenOutputStream(Uri("d/f")).status()), ErrorKind::kConflict);
  EXPECT_EQ(*io_->Read(Uri("d/f")), "kept");
}

TEST_P(FileIOContract, ListsATreeAtEveryDepth) {
  ASSERT_TRUE(io_->WriteNew(Uri("tree/t/data/a.parquet"), "a").ok());
  ASSERT_TRUE(io_->WriteNew(Uri("tree/t/metadata/v1.metadata.json"), "{}").ok());
  ASSERT_TRUE(io_->WriteNew(Uri("tree/t/data/x=1/b.parquet"), "bb").ok());
  ASSERT_TRUE(io_->WriteNew(Uri("tree/t2/other"), "o").ok());
  auto all = io_->ListTree(Uri("tree/t/"));
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ((*all)[0].uri, Uri("tree/t/data/a.parquet"));
  EXPECT_EQ((*all)[1].uri, Uri("tree/t/data/x=1/b.parquet"));
  EXPECT_EQ((*all)[1].size, 2);
  EXPECT_EQ((*all)[2].uri, Uri("tree/t/metadata/v1.metadata.json"));
  EXPECT_GT((*all)[0].mtime_ms, 1'600'000'000'000);
  auto missing = io_->ListTree(Uri("tree/none/"));
  ASSERT_TRUE(missing.ok()) << missing.status().ToString();
  EXPECT_TRUE(missing->empty());
}

TEST_P(FileIOContract, ListsOneLevelByPrefix) {
  ASSERT_TRUE(io_->WriteNew(Uri("t/_delta_log/00000000000000000001.json"), "b").ok());
  ASSERT_TRUE(io_->WriteNew(Uri("t/_delta_log/00000000000000000000.json"), "a").ok());
  ASSERT_TRUE(io_->WriteNew(Uri("t/_delta_log/_last_checkpoint"), "{}").ok());
  ASSERT_TRUE(io_->WriteNew(Uri("t/_delta_log/sub/deeper.json"), "x").ok());

  auto all = io_->List(Uri("t/_delta_log/"));
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ((*all)[0].uri, Uri("t/_delta_log/00000000000000000000.json"));
  EXPECT_EQ((*all)[1].uri, Uri("t/_delta_log/00000000000000000001.json"));
  EXPECT_EQ((*all)[2].uri, Uri("t/_delta_log/_last_checkpoint"));
  EXPECT_EQ((*all)[2].size, 2);
  EXPECT_GT((*all)[0].mtime_ms, 1'600'000'000'000);

  auto versions = io_->List(Uri("t/_delta_log/0000"));
  ASSERT_TRUE(versions.ok());
  EXPECT_EQ(versions->size(), 2u);

  auto missing = io_->List(Uri("nope/"));
  ASSERT_TRUE(missing.ok());
  EXPECT_TRUE(missing->empty());
}

TEST_P(FileIOContract, RefusesOtherSchemesAndEscapes) {
  EXPECT_FALSE(io_->WriteNew(Uri("../escape"), "x").ok());
  EXPECT_FALSE(io_->Read("s3://bucket/key").ok());
  EXPECT_FALSE(io_->OpenOutputStream("s3://bucket/key").ok());
}

INSTANTIATE_TEST_SUITE_P(Backends, FileIOContract,
                         ::testing::Values(Backend::kLocal, Backend::kMemory,
                                           Backend::kS3),
                         [](const auto& param_info) {
                           switch (param_info.param) {
                             case Backend::kLocal:
                               return "Local";
                             case Backend::kMemory:
                               return "Memory";
                             case Backend::kS3:
                               break;
                           }
                           return "S3";
                         });

// Errors a retry cannot fix name the bucket, the key and S3's error code, and are not
// taken for a conflict or an outage.
TEST(S3FileIO, AWrongSecretIsAClearErrorNamingBucketKeyAndCode) {
  const std::string endpoint = Env("FLOE_TEST_S3_ENDPOINT");
  if (endpoint.empty()) GTEST_SKIP() << "FLOE_TEST_S3_ENDPOINT is not set";
  S3Settings s;
  s.endpoint = endpoint;
  s.scheme = "http";
  s.path_style = true;
  s.access_key = Env("FLOE_TEST_S3_ACCESS_KEY");
  s.secret_key = "not-the-secret";
  const std::string bucket = Env("FLOE_TEST_S3_BUCKET");
  auto io = MakeS3FileIO("s3://" + bucket + "/wrong-secret", s);
  ASSERT_TRUE(io.ok()) << io.status().ToString();
  Status st = (*io)->WriteNew("s3://" + bucket + "/wrong-secret/x.json", "{}");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(KindOf(st), ErrorKind::kForbidden) << st.ToString();
  EXPECT_NE(st.message().find("HTTP 403 SignatureDoesNotMatch"), std::string::npos)
      << st.ToString();
  EXPECT_NE(st.message().find("bucket " + bucket + ", key wrong-secret/x.json"),
            std::string::npos)
      << st.ToString();
}

TEST(S3FileIO, RefusesAWarehouseThatIsNotAnS3Uri) {
  auto io = MakeS3FileIO("file:///tmp/x", {});
  ASSERT_FALSE(io.ok());
  EXPECT_NE(io.status().message().find("must be s3://bucket[/prefix]"),
            std::string::npos);
}

TEST(LocalFileIO, RefusesPathsOutsideTheWarehouse) {
  auto root = std::filesystem::temp_directory_path() /
              ("floe-fileio-out-" + std::to_string(::getpid()));
  auto io = MakeLocalFileIO(PathToFileUri(root.string()));
  EXPECT_FALSE(io->Read("file:///etc/passwd").ok());
  EXPECT_FALSE(io->List("file:///etc/").ok());
  EXPECT_FALSE(io->OpenOutputStream("file:///tmp/floe-outside.parquet").ok());
  EXPECT_FALSE(io->Delete("file:///etc/hostname").ok());
  // A sibling directory sharing the root's name as a prefix is outside too.
  EXPECT_FALSE(io->WriteNew(PathToFileUri(root.string() + "-sibling/x"), "x").ok());
}

TEST(LocalFileIO, HidesInFlightTemporariesFromListings) {
  auto root = std::filesystem::temp_directory_path() /
              ("floe-fileio-tmp-" + std::to_string(::getpid()));
  std::filesystem::remove_all(root);
  auto io = MakeLocalFileIO(PathToFileUri(root.string()));
  const std::string dir = PathToFileUri(root.string()) + "/t/_delta_log/";
  ASSERT_TRUE(io->WriteNew(dir + "00000000000000000000.json", "a").ok());
  // A WriteNew still in flight is not an object yet.
  std::ofstream(root / "t/_delta_log/00000000000000000001.json.tmp-12-34") << "partial";
  auto listed = io->List(dir);
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 1u);
  // The whole tree, which orphan cleanup walks, has it: once old it was left by a crash.
  auto tree = io->ListTree(PathToFileUri(root.string()) + "/t/");
  ASSERT_TRUE(tree.ok());
  ASSERT_EQ(tree->size(), 2u);
  EXPECT_EQ(tree->at(1).uri, dir + "00000000000000000001.json.tmp-12-34");
  EXPECT_TRUE(tree->at(1).temporary);
  EXPECT_FALSE(tree->at(0).temporary);
  std::filesystem::remove_all(root);
}

}  // namespace
// GET /metrics' floe_storage_*: every request counted by operation; only what the store
// could not do is an error (an absent object and a lost race are answers).
TEST(CountingFileIO, CountsRequestsAndFailuresByOperation) {
  StorageCounters c;
  auto io = CountRequests(MakeMemoryFileIO(), &c);
  ASSERT_TRUE(io->WriteNew("memory://wh/a", "x").ok());
  EXPECT_EQ(KindOf(io->WriteNew("memory://wh/a", "y")), ErrorKind::kConflict);
  EXPECT_EQ(KindOf(io->Read("memory://wh/absent").status()), ErrorKind::kNotFound);
  ASSERT_TRUE(io->Read("memory://wh/a").ok());
  ASSERT_TRUE(io->Exists("memory://wh/a").ok());
  ASSERT_TRUE(io->List("memory://wh/").ok());
  ASSERT_TRUE(io->Delete("memory://wh/a").ok());
  EXPECT_FALSE(io->WriteNew("other://elsewhere", "z").ok());  // refused: an error
  EXPECT_EQ(c.requests[StorageCounters::kWriteNew].load(), 3);
  EXPECT_EQ(c.errors[StorageCounters::kWriteNew].load(), 1);
  EXPECT_EQ(c.requests[StorageCounters::kRead].load(), 2);
  EXPECT_EQ(c.errors[StorageCounters::kRead].load(), 0);
  EXPECT_EQ(c.requests[StorageCounters::kExists].load(), 1);
  EXPECT_EQ(c.requests[StorageCounters::kList].load(), 1);
  EXPECT_EQ(c.requests[StorageCounters::kDelete].load(), 1);
  EXPECT_STREQ(StorageCounters::Name(StorageCounters::kWriteNew), "write_new");
}

// Issue 38 item 11: a data file whose upload fails at close was not a storage error in
// the metrics (a stream counted only when opened).
TEST(CountingFileIO, AStreamsUploadIsCountedAtCloseWithItsFailure) {
  StorageCounters c;
  auto faulty = std::make_unique<FaultyFileIO>(MakeMemoryFileIO());
  FaultyFileIO* faults = faulty.get();
  auto io = CountRequests(std::move(faulty), &c);
  auto good = io->OpenOutputStream("memory://wh/good.parquet");
  ASSERT_TRUE(good.ok());
  ASSERT_TRUE((*good)->Write("abc", 3).ok());
  ASSERT_TRUE((*good)->Close().ok());
  ASSERT_TRUE((*good)->Close().ok());  // closing again is no second upload
  faults->FailNext("StreamWrite", "bad.parquet", 1, Status::IOError("connection reset"));
  auto bad = io->OpenOutputStream("memory://wh/bad.parquet");
  ASSERT_TRUE(bad.ok());
  EXPECT_FALSE((*bad)->Write("abc", 3).ok());
  (void)(*bad)->Close();
  EXPECT_EQ(c.requests[StorageCounters::kOpenOutput].load(), 2);
  EXPECT_EQ(c.requests[StorageCounters::kUpload].load(), 2);
  EXPECT_EQ(c.errors[StorageCounters::kUpload].load(), 1);
  EXPECT_STREQ(StorageCounters::Name(StorageCounters::kUpload), "upload");
}

}  // namespace floe::storage
