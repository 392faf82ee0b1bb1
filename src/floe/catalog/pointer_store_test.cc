// The pointer store contract, on SQLite and on PostgreSQL. PostgreSQL needs a real
// server: tests/integration/test_postgres.py starts one and runs these with
// FLOE_TEST_POSTGRES_URI; without it the PostgreSQL cases are skipped. Each PostgreSQL
// test uses a catalog name of its own in the shared database.
#include "floe/catalog/pointer_store.h"

#include <gtest/gtest.h>
#include <libpq-fe.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "floe/common/util.h"

namespace floe::catalog {
namespace {

std::string Uri() {
  const char* uri = std::getenv("FLOE_TEST_POSTGRES_URI");
  return uri ? uri : "";
}

enum class Backend { kSqlite, kPostgres };

class PointerStoreContract : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    if (GetParam() == Backend::kPostgres && Uri().empty()) {
      GTEST_SKIP() << "FLOE_TEST_POSTGRES_URI is not set";
    }
    name_ = "test-" + NewUuid();
    path_ = std::filesystem::temp_directory_path() / ("floe-contract-" + name_ + ".db");
    store_ = Open();
  }
  void TearDown() override {
    store_.reset();
    for (const char* suffix : {"", "-wal", "-shm"}) {
      std::filesystem::remove(path_.string() + suffix);
    }
  }

  // Another store over the same catalog (another process's, as far as it can tell).
  std::unique_ptr<PointerStore> Open() {
    if (GetParam() == Backend::kSqlite) {
      auto store = OpenSqliteStore(path_.string(), "floe");
      EXPECT_TRUE(store.ok()) << store.status().ToString();
      return store.ok() ? std::move(*store) : nullptr;
    }
    PostgresOptions options;
    options.conninfo = Uri();
    auto store = OpenPostgresStore(options, name_);
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    return store.ok() ? std::move(*store) : nullptr;
  }

  // Runs `sql` on a connection of its own (not the store's).
  void Admin(const std::string& sql) {
    PGconn* c = PQconnectdb(Uri().c_str());
    ASSERT_EQ(PQstatus(c), CONNECTION_OK) << PQerrorMessage(c);
    PGresult* r = PQexec(c, sql.c_str());
    EXPECT_TRUE(PQresultStatus(r) == PGRES_TUPLES_OK ||
                PQresultStatus(r) == PGRES_COMMAND_OK)
        << PQerrorMessage(c);
    PQclear(r);
    PQfinish(c);
  }

  std::string name_;
  std::filesystem::path path_;
  std::unique_ptr<PointerStore> store_;
};

INSTANTIATE_TEST_SUITE_P(Backends, PointerStoreContract,
                         ::testing::Values(Backend::kSqlite, Backend::kPostgres),
                         [](const auto& param_info) {
                           return param_info.param == Backend::kSqlite ? "Sqlite"
                                                                       : "Postgres";
                         });

TEST_P(PointerStoreContract, CreateGetSwapDropRename) {
  TableIdent t{{"kafka"}, "orders"};
  EXPECT_EQ(KindOf(store_->Get(t).status()), ErrorKind::kNotFound);
  ASSERT_TRUE(store_->CreateNamespace({"kafka"}, {{"owner", "floe"}}).ok());
  EXPECT_EQ(KindOf(store_->CreateNamespace({"kafka"}, {})), ErrorKind::kConflict);
  EXPECT_TRUE(*store_->NamespaceExists({"kafka"}));
  EXPECT_FALSE(*store_->NamespaceExists({"other"}));
  ASSERT_TRUE(store_->Create(t, "file:///m1").ok());
  EXPECT_EQ(KindOf(store_->Create(t, "file:///m1")), ErrorKind::kConflict);
  EXPECT_EQ(*store_->Get(t), "file:///m1");
  ASSERT_TRUE(store_->Swap(t, "file:///m1", "file:///m2").ok());
  EXPECT_EQ(KindOf(store_->Swap(t, "file:///m1", "file:///m3")), ErrorKind::kConflict);
  EXPECT_EQ(*store_->Get(t), "file:///m2");
  auto tables = *store_->ListTables({"kafka"});
  ASSERT_EQ(tables.size(), 1u);
  EXPECT_EQ(tables[0].name, "orders");

  TableIdent other{{"kafka"}, "other"};
  ASSERT_TRUE(store_->Create(other, "file:///o1").ok());
  EXPECT_EQ(KindOf(store_->Rename(t, other)), ErrorKind::kConflict);
  TableIdent moved{{"kafka"}, "moved"};
  ASSERT_TRUE(store_->Rename(t, moved).ok());
  EXPECT_EQ(*store_->Get(moved), "file:///m2");
  EXPECT_EQ(KindOf(store_->Rename(t, moved)), ErrorKind::kNotFound);
  const std::string now = *store_->Get(moved);
  EXPECT_EQ(KindOf(store_->Drop(moved, now + ".older")), ErrorKind::kConflict);
  ASSERT_TRUE(store_->Get(moved).ok())
      << "a drop expecting another pointer drops nothing";
  ASSERT_TRUE(store_->Drop(moved, now).ok());
  EXPECT_EQ(KindOf(store_->Drop(moved, "")), ErrorKind::kNotFound);
  EXPECT_EQ(KindOf(store_->Create({{"kafka"}, "a/b"}, "x")), ErrorKind::kInvalidInput);
}

TEST_P(PointerStoreContract, NamespacesAndTheirProperties) {
  ASSERT_TRUE(store_->CreateNamespace({"raw", "events"}, {{"a", "1"}}).ok());
  ASSERT_TRUE(store_->Create({{"kafka"}, "t"}, "file:///t").ok());  // a table alone
  auto all = *store_->ListNamespaces();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0], (std::vector<std::string>{"kafka"}));
  EXPECT_EQ(all[1], (std::vector<std::string>{"raw", "events"}));
  ASSERT_TRUE(
      store_->UpdateNamespaceProperties({"raw", "events"}, {{"b", "2"}}, {"a"}).ok());
  auto props = *store_->NamespaceProperties({"raw", "events"});
  EXPECT_EQ(props, (std::map<std::string, std::string>{{"b", "2"}, {"exists", "true"}}));
  EXPECT_EQ(KindOf(store_->NamespaceProperties({"kafka"}).status()),
            ErrorKind::kNotFound);
  ASSERT_TRUE(store_->DropNamespace({"raw", "events"}).ok());
  EXPECT_EQ(KindOf(store_->DropNamespace({"raw", "events"})), ErrorKind::kNotFound);
}

// Two stores (two processes' worth of connections) race eight swaps from one base:
// exactly one wins, the rest are conflicts.
TEST_P(PointerStoreContract, ConcurrentSwapsFromTwoStoresExactlyOneWinsPerBase) {
  auto second = Open();
  TableIdent t{{"ns"}, "t"};
  ASSERT_TRUE(store_->Create(t, "v0").ok());
  for (int round = 0; round < 5; ++round) {
    const std::string base = *store_->Get(t);
    std::atomic<int> wins{0}, conflicts{0};
    std::vector<std::thread> threads;
    for (int i = 0; i < 8; ++i) {
      threads.emplace_back([&, i] {
        PointerStore& s = i % 2 ? *second : *store_;
        auto st =
            s.Swap(t, base, "v" + std::to_string(round + 1) + "-" + std::to_string(i));
        if (st.ok()) {
          wins++;
        } else if (KindOf(st) == ErrorKind::kConflict) {
          conflicts++;
        }
      });
    }
    for (auto& th : threads) th.join();
    EXPECT_EQ(wins.load(), 1);
    EXPECT_EQ(conflicts.load(), 7);
  }
}

TEST_P(PointerStoreContract, SwapAllIsAllOrNothing) {
  TableIdent a{{"ns"}, "a"}, b{{"ns"}, "b"}, c{{"ns"}, "c"};
  ASSERT_TRUE(store_->Create(a, "a0").ok());
  ASSERT_TRUE(store_->Create(b, "b0").ok());
  // b's expectation is stale: nothing of the three happens.
  auto lost = store_->SwapAll({{a, "a0", "a1"}, {c, "", "c0"}, {b, "stale", "b1"}});
  EXPECT_EQ(KindOf(lost), ErrorKind::kConflict);
  EXPECT_EQ(*store_->Get(a), "a0");
  EXPECT_EQ(KindOf(store_->Get(c).status()), ErrorKind::kNotFound);
  ASSERT_TRUE(store_->SwapAll({{a, "a0", "a1"}, {c, "", "c0"}, {b, "b0", "b1"}}).ok());
  EXPECT_EQ(*store_->Get(a), "a1");
  EXPECT_EQ(*store_->Get(b), "b1");
  EXPECT_EQ(*store_->Get(c), "c0");
}

// The server drops every connection (a restart, a failover): the next operations open
// new ones; at most the first after the drop reports it, as retriable.
TEST_P(PointerStoreContract, ReconnectsAfterTheServerDropsItsConnections) {
  if (GetParam() != Backend::kPostgres) GTEST_SKIP() << "a server's connections only";
  TableIdent t{{"ns"}, "t"};
  ASSERT_TRUE(store_->Create(t, "v0").ok());
  Admin(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE "
      "application_name = 'floe' AND pid <> pg_backend_pid()");
  auto first = store_->Get(t);
  if (!first.ok()) {
    EXPECT_EQ(KindOf(first.status()), ErrorKind::kRetriable);
  }
  EXPECT_EQ(*store_->Get(t), "v0");
  ASSERT_TRUE(store_->Swap(t, "v0", "v1").ok());
  EXPECT_TRUE(store_->CheckWritable().ok());
}

TEST(PostgresStoreOpenTest, ErrorsNameTheServerAndTheCause) {
  PostgresOptions options;
  auto empty = OpenPostgresStore(options, "floe");
  EXPECT_EQ(KindOf(empty.status()), ErrorKind::kInvalidInput);
  // Nothing listens there: retriable, naming the cause.
  options.conninfo = "postgresql://floe@127.0.0.1:1/none";
  options.connect_timeout_s = 2;
  auto down = OpenPostgresStore(options, "floe");
  ASSERT_FALSE(down.ok());
  EXPECT_EQ(KindOf(down.status()), ErrorKind::kRetriable);
  EXPECT_NE(down.status().message().find("cannot connect"), std::string::npos)
      << down.status().ToString();
}

}  // namespace
}  // namespace floe::catalog
