// The PostgreSQL pointer store (pointer_store.h): the Iceberg SQL catalog tables in a
// PostgreSQL database, through libpq. Every operation leases one connection from a small
// pool; a swap is one conditional UPDATE (compare-and-swap in one statement), several
// swaps one transaction.
#include <libpq-fe.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <thread>

#include "floe/catalog/pointer_store.h"
#include "floe/common/log.h"

namespace floe::catalog {
namespace {

constexpr int kLeaseWaitS = 60;

constexpr const char* kCreateTables[] = {
    "CREATE TABLE IF NOT EXISTS iceberg_tables ("
    "catalog_name VARCHAR(255) NOT NULL, table_namespace VARCHAR(255) NOT NULL, "
    "table_name VARCHAR(255) NOT NULL, metadata_location VARCHAR(1000), "
    "previous_metadata_location VARCHAR(1000), iceberg_type VARCHAR(5), "
    "PRIMARY KEY (catalog_name, table_namespace, table_name))",
    "CREATE TABLE IF NOT EXISTS iceberg_namespace_properties ("
    "catalog_name VARCHAR(255) NOT NULL, namespace VARCHAR(255) NOT NULL, "
    "property_key VARCHAR(255) NOT NULL, property_value VARCHAR(1000), "
    "PRIMARY KEY (catalog_name, namespace, property_key))",
    // A catalog an older pyiceberg made (schema v0) lacks iceberg_type.
    "ALTER TABLE iceberg_tables ADD COLUMN IF NOT EXISTS iceberg_type VARCHAR(5)",
};

// The SQLSTATE of a failed statement ("" when the connection failed instead).
std::string SqlState(const PGresult* r) {
  const char* s = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : nullptr;
  return s ? s : "";
}

struct ResultDeleter {
  void operator()(PGresult* r) const { PQclear(r); }
};
using PgResult = std::unique_ptr<PGresult, ResultDeleter>;

// What a statement came back with: the rows, or how it failed.
struct Outcome {
  PgResult result;
  bool ok = false;
  bool connection_lost = false;  // the connection broke (the statement may have run)
  std::string state;             // SQLSTATE
  std::string message;
};

class PostgresStore : public PointerStore {
 public:
  PostgresStore(PostgresOptions options, std::string catalog_name)
      : options_(std::move(options)), catalog_(std::move(catalog_name)) {}

  ~PostgresStore() override {
    for (PGconn* c : idle_) PQfinish(c);
  }

  Status Init() {
    for (int attempt = 0;; ++attempt) {
      Status st = WithConnection([&](PGconn* c) -> Status {
        // Tables another tool made (pyiceberg, a DBA) need no DDL, which a role with only
        // read and write grants may not run.
        Outcome present =
            Run(c,
                "SELECT to_regclass('iceberg_tables') IS NOT NULL AND "
                "to_regclass('iceberg_namespace_properties') IS NOT NULL AND "
                "EXISTS (SELECT 1 FROM information_schema.columns WHERE "
                "table_name = 'iceberg_tables' AND column_name = "
                "'iceberg_type' AND table_schema = current_schema())",
                {});
        if (!present.ok) return Fail(present, "look for the catalog tables", false);
        if (std::string_view(PQgetvalue(present.result.get(), 0, 0)) == "t") {
          return Status::OK();
        }
        for (const char* sql : kCreateTables) {
          Outcome o = Run(c, sql, {});
          // Two processes creating the tables at once: one loses on the catalog's own
          // unique index; the tables are there.
          if (!o.ok && o.state != "23505" && o.state != "42P07") {
            return Fail(o, "create the catalog tables", /*writes=*/false);
          }
        }
        return Status::OK();
      });
      if (st.ok() || attempt >= 2 || KindOf(st) != ErrorKind::kRetriable) return st;
      std::this_thread::sleep_for(std::chrono::milliseconds(200 << attempt));
    }
  }

  Result<std::string> Get(const TableIdent& ident) override {
    std::string location;
    FLOE_RETURN_NOT_OK(WithConnection([&](PGconn* c) -> Status {
      Outcome o =
          Run(c,
              "SELECT metadata_location FROM iceberg_tables WHERE catalog_name=$1 "
              "AND table_namespace=$2 AND table_name=$3 AND (iceberg_type='TABLE' "
              "OR iceberg_type IS NULL)",
              {catalog_, ident.NamespaceString(), ident.name});
      if (!o.ok) return Fail(o, "load pointer of " + ident.ToString(), false);
      if (PQntuples(o.result.get()) == 0) {
        return NotFound("table " + ident.ToString() + " does not exist");
      }
      if (PQgetisnull(o.result.get(), 0, 0)) {
        return NotFound("table " + ident.ToString() + " has no metadata location");
      }
      location = PQgetvalue(o.result.get(), 0, 0);
      return Status::OK();
    }));
    return location;
  }

  Status Create(const TableIdent& ident, const std::string& location) override {
    FLOE_RETURN_NOT_OK(ValidateIdent(ident));
    return WithConnection([&](PGconn* c) { return CreateOn(c, ident, location); });
  }

  Status Swap(const TableIdent& ident, const std::string& expected,
              const std::string& desired) override {
    return WithConnection([&](PGconn* c) { return SwapOn(c, ident, expected, desired); });
  }

  Status SwapAll(const std::vector<SwapOp>& ops) override {
    for (const auto& op : ops) {
      if (op.expected.empty()) FLOE_RETURN_NOT_OK(ValidateIdent(op.ident));
    }
    return WithConnection([&](PGconn* c) -> Status {
      Outcome begin = Run(c, "BEGIN", {});
      if (!begin.ok) return Fail(begin, "begin a transaction", false);
      for (const auto& op : ops) {
        Status st = op.expected.empty() ? CreateOn(c, op.ident, op.desired)
                                        : SwapOn(c, op.ident, op.expected, op.desired);
        if (!st.ok()) {
          // A broken connection rolls back on the server; a failed statement needs it.
          if (PQstatus(c) == CONNECTION_OK) (void)Run(c, "ROLLBACK", {});
          // Nothing is applied before COMMIT: an unknown statement is a failed one.
          if (KindOf(st) == ErrorKind::kStateUnknown) return Retriable(st.message());
          return st;
        }
      }
      Outcome commit = Run(c, "COMMIT", {});
      if (!commit.ok) return Fail(commit, "commit a transaction of swaps", true);
      // COMMIT of a transaction that failed inside reports ROLLBACK.
      if (std::string_view(PQcmdStatus(commit.result.get())) == "ROLLBACK") {
        return Conflict("a transaction of swaps was rolled back by the server");
      }
      return Status::OK();
    });
  }

  Status Rename(const TableIdent& from, const TableIdent& to) override {
    FLOE_RETURN_NOT_OK(ValidateIdent(to));
    return WithConnection([&](PGconn* c) -> Status {
      Outcome o = Run(
          c,
          "UPDATE iceberg_tables SET table_namespace=$1, table_name=$2 WHERE "
          "catalog_name=$3 AND table_namespace=$4 AND table_name=$5",
          {to.NamespaceString(), to.name, catalog_, from.NamespaceString(), from.name});
      if (!o.ok && o.state == "23505") {
        return Conflict("table " + to.ToString() + " already exists");
      }
      if (!o.ok) return Fail(o, "rename table " + from.ToString(), true);
      if (Changed(o) == 0)
        return NotFound("table " + from.ToString() + " does not exist");
      return Status::OK();
    });
  }

  Status Drop(const TableIdent& ident, const std::string& expected) override {
    bool dropped = false;
    FLOE_RETURN_NOT_OK(WithConnection([&](PGconn* c) -> Status {
      Outcome o = Run(c,
                      "DELETE FROM iceberg_tables WHERE catalog_name=$1 AND "
                      "table_namespace=$2 AND table_name=$3 AND "
                      "($4 = '' OR metadata_location = $4)",
                      {catalog_, ident.NamespaceString(), ident.name, expected});
      if (!o.ok) return Fail(o, "drop table " + ident.ToString(), true);
      dropped = Changed(o) != 0;
      return Status::OK();
    }));
    return dropped ? Status::OK() : DropMissed(ident, Get(ident).ok());
  }

  Result<std::vector<TableIdent>> ListTables(
      const std::vector<std::string>& ns) override {
    std::vector<TableIdent> out;
    FLOE_RETURN_NOT_OK(WithConnection([&](PGconn* c) -> Status {
      Outcome o = Run(c,
                      "SELECT table_name FROM iceberg_tables WHERE catalog_name=$1 AND "
                      "table_namespace=$2 ORDER BY table_name",
                      {catalog_, TableIdent{ns, ""}.NamespaceString()});
      if (!o.ok) return Fail(o, "list tables", false);
      for (int i = 0; i < PQntuples(o.result.get()); ++i) {
        out.push_back(TableIdent{ns, PQgetvalue(o.result.get(), i, 0)});
      }
      return Status::OK();
    }));
    return out;
  }

  Status CreateNamespace(const std::vector<std::string>& ns,
                         const std::map<std::string, std::string>& props) override {
    FLOE_RETURN_NOT_OK(ValidateNamespaceLevels(ns));
    // The "exists" row first: of two creators of one namespace exactly one inserts it,
    // so exactly one succeeds.
    std::vector<std::pair<std::string, std::string>> rows = {{"exists", "true"}};
    for (const auto& [k, v] : props) {
      if (k != "exists") rows.emplace_back(k, v);
    }
    const std::string name = TableIdent{ns, ""}.NamespaceString();
    return WithConnection([&](PGconn* c) -> Status {
      for (size_t i = 0; i < rows.size(); ++i) {
        Outcome o =
            Run(c,
                "INSERT INTO iceberg_namespace_properties (catalog_name, "
                "namespace, property_key, property_value) VALUES ($1, $2, $3, $4) "
                "ON CONFLICT DO NOTHING",
                {catalog_, name, rows[i].first, rows[i].second});
        if (!o.ok) return Fail(o, "create namespace " + name, true);
        if (i == 0 && std::string(PQcmdTuples(o.result.get())) == "0") {
          return Conflict("namespace " + name + " already exists");
        }
      }
      return Status::OK();
    });
  }

  Result<bool> NamespaceExists(const std::vector<std::string>& ns) override {
    bool exists = false;
    FLOE_RETURN_NOT_OK(WithConnection([&](PGconn* c) -> Status {
      Outcome o = Run(c,
                      "SELECT 1 FROM iceberg_namespace_properties WHERE catalog_name=$1 "
                      "AND namespace=$2 LIMIT 1",
                      {catalog_, TableIdent{ns, ""}.NamespaceString()});
      if (!o.ok) return Fail(o, "namespace lookup", false);
      exists = PQntuples(o.result.get()) > 0;
      return Status::OK();
    }));
    return exists;
  }

  Result<std::vector<std::vector<std::string>>> ListNamespaces() override {
    std::vector<std::vector<std::string>> out;
    FLOE_RETURN_NOT_OK(WithConnection([&](PGconn* c) -> Status {
      Outcome o = Run(c,
                      "SELECT namespace FROM iceberg_namespace_properties WHERE "
                      "catalog_name=$1 UNION SELECT table_namespace FROM iceberg_tables "
                      "WHERE catalog_name=$1 ORDER BY 1",
                      {catalog_});
      if (!o.ok) return Fail(o, "list namespaces", false);
      for (int i = 0; i < PQntuples(o.result.get()); ++i) {
        const std::string text = PQgetvalue(o.result.get(), i, 0);
        if (!text.empty()) out.push_back(SplitNamespaceString(text));
      }
      return Status::OK();
    }));
    return out;
  }

  Result<std::map<std::string, std::string>> NamespaceProperties(
      const std::vector<std::string>& ns) override {
    std::map<std::string, std::string> out;
    const std::string name = TableIdent{ns, ""}.NamespaceString();
    FLOE_RETURN_NOT_OK(WithConnection([&](PGconn* c) -> Status {
      Outcome o =
          Run(c,
              "SELECT property_key, property_value FROM "
              "iceberg_namespace_properties WHERE catalog_name=$1 AND namespace=$2",
              {catalog_, name});
      if (!o.ok) return Fail(o, "load namespace " + name, false);
      for (int i = 0; i < PQntuples(o.result.get()); ++i) {
        out[PQgetvalue(o.result.get(), i, 0)] = PQgetvalue(o.result.get(), i, 1);
      }
      if (PQntuples(o.result.get()) == 0) {
        return NotFound("namespace " + name + " does not exist");
      }
      return Status::OK();
    }));
    return out;
  }

  Status UpdateNamespaceProperties(const std::vector<std::string>& ns,
                                   const std::map<std::string, std::string>& updates,
                                   const std::vector<std::string>& removals) override {
    const std::string name = TableIdent{ns, ""}.NamespaceString();
    return WithConnection([&](PGconn* c) -> Status {
      Outcome begin = Run(c, "BEGIN", {});
      if (!begin.ok) return Fail(begin, "begin a transaction", false);
      auto fail = [&](const Outcome& o, const std::string& what) {
        if (PQstatus(c) == CONNECTION_OK) (void)Run(c, "ROLLBACK", {});
        return Fail(o, what, false);  // nothing applied before COMMIT
      };
      for (const auto& key : removals) {
        Outcome o = Run(c,
                        "DELETE FROM iceberg_namespace_properties WHERE catalog_name=$1 "
                        "AND namespace=$2 AND property_key=$3",
                        {catalog_, name, key});
        if (!o.ok) return fail(o, "remove namespace property " + key);
      }
      for (const auto& [k, v] : updates) {
        Outcome o =
            Run(c,
                "INSERT INTO iceberg_namespace_properties (catalog_name, "
                "namespace, property_key, property_value) VALUES ($1, $2, $3, $4) "
                "ON CONFLICT (catalog_name, namespace, property_key) DO UPDATE SET "
                "property_value=excluded.property_value",
                {catalog_, name, k, v});
        if (!o.ok) return fail(o, "set namespace property " + k);
      }
      // The namespace keeps a row, or it would vanish (SQL catalog convention).
      Outcome keep = Run(c,
                         "INSERT INTO iceberg_namespace_properties (catalog_name, "
                         "namespace, property_key, property_value) VALUES ($1, $2, "
                         "'exists', 'true') ON CONFLICT DO NOTHING",
                         {catalog_, name});
      if (!keep.ok) return fail(keep, "keep namespace " + name);
      Outcome commit = Run(c, "COMMIT", {});
      if (!commit.ok) return Fail(commit, "commit namespace properties of " + name, true);
      return Status::OK();
    });
  }

  Status DropNamespace(const std::vector<std::string>& ns) override {
    const std::string name = TableIdent{ns, ""}.NamespaceString();
    return WithConnection([&](PGconn* c) -> Status {
      Outcome o =
          Run(c,
              "DELETE FROM iceberg_namespace_properties WHERE catalog_name=$1 AND "
              "namespace=$2",
              {catalog_, name});
      if (!o.ok) return Fail(o, "drop namespace " + name, true);
      if (Changed(o) == 0) return NotFound("namespace " + name + " does not exist");
      return Status::OK();
    });
  }

  Status CheckWritable() override {
    return WithConnection([&](PGconn* c) -> Status {
      Outcome o = Run(c, "SELECT pg_is_in_recovery()", {});
      if (!o.ok) return Fail(o, "check the catalog", false);
      if (std::string_view(PQgetvalue(o.result.get(), 0, 0)) == "t") {
        return Retriable("catalog " + Where() +
                         " is a read-only standby (in recovery); nothing was changed, "
                         "commits are retried until it takes writes");
      }
      return Status::OK();
    });
  }

 private:
  Status CreateOn(PGconn* c, const TableIdent& ident, const std::string& location) {
    Outcome o = Run(c,
                    "INSERT INTO iceberg_tables (catalog_name, table_namespace, "
                    "table_name, metadata_location, previous_metadata_location, "
                    "iceberg_type) VALUES ($1, $2, $3, $4, NULL, 'TABLE')",
                    {catalog_, ident.NamespaceString(), ident.name, location});
    if (!o.ok && o.state == "23505") {
      return Conflict("table " + ident.ToString() + " already exists");
    }
    if (!o.ok) return Fail(o, "create table " + ident.ToString(), true);
    return Status::OK();
  }

  Status SwapOn(PGconn* c, const TableIdent& ident, const std::string& expected,
                const std::string& desired) {
    Outcome o = Run(c,
                    "UPDATE iceberg_tables SET metadata_location=$1, "
                    "previous_metadata_location=$2 WHERE catalog_name=$3 AND "
                    "table_namespace=$4 AND table_name=$5 AND metadata_location=$2",
                    {desired, expected, catalog_, ident.NamespaceString(), ident.name});
    if (!o.ok) return Fail(o, "pointer swap of " + ident.ToString(), true);
    if (Changed(o) != 1) {
      return Conflict("table " + ident.ToString() + " was changed by another writer");
    }
    return Status::OK();
  }

  static int64_t Changed(const Outcome& o) {
    const char* n = PQcmdTuples(o.result.get());
    return (n == nullptr || *n == '\0') ? 0 : std::strtoll(n, nullptr, 10);
  }

  // "host:port/db" for messages (never the password).
  std::string Where() const {
    std::lock_guard lock(mu_);
    return where_.empty() ? "postgresql" : where_;
  }

  Outcome Run(PGconn* c, const char* sql, const std::vector<std::string>& params) {
    std::vector<const char*> values;
    values.reserve(params.size());
    for (const auto& p : params) values.push_back(p.c_str());
    Outcome o;
    o.result.reset(PQexecParams(c, sql, static_cast<int>(values.size()), nullptr,
                                values.data(), nullptr, nullptr, 0));
    const ExecStatusType status =
        o.result ? PQresultStatus(o.result.get()) : PGRES_FATAL_ERROR;
    o.ok = status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK;
    if (!o.ok) {
      o.state = SqlState(o.result.get());
      o.message = PQerrorMessage(c);
      while (!o.message.empty() &&
             (o.message.back() == '\n' || o.message.back() == ' ')) {
        o.message.pop_back();
      }
      o.connection_lost = PQstatus(c) != CONNECTION_OK || o.state.starts_with("08") ||
                          o.state == "57P01" || o.state == "57P02" || o.state == "57P03";
    }
    return o;
  }

  // The error of a failed statement. `writes`: a write whose connection broke after it
  // was sent may have been applied (kStateUnknown); anything else that a retry can fix
  // (a lost connection, a conflict between transactions, an overloaded server, a
  // read-only standby) is kRetriable; the rest is the server's (kInternal).
  Status Fail(const Outcome& o, const std::string& what, bool writes) {
    const std::string msg = "catalog " + Where() + ": " + what + ": " + o.message +
                            (o.state.empty() ? "" : " (SQLSTATE " + o.state + ")");
    if (o.connection_lost) return writes ? StateUnknown(msg) : Retriable(msg);
    const std::string cls = o.state.substr(0, 2);
    if (o.state == "40001" || o.state == "40P01" || o.state == "55P03" || cls == "53" ||
        o.state == "25006" || o.state == "57014") {
      return Retriable(msg);
    }
    if (cls == "28" || o.state == "42501") return InvalidInput(msg);  // no access
    return Internal(msg);
  }

  // Runs `fn` on a leased connection; a connection that broke is closed, not returned.
  Status WithConnection(const std::function<Status(PGconn*)>& fn) {
    FLOE_ASSIGN_OR_RAISE(PGconn * c, Lease());
    Status st = fn(c);
    Return(c);
    return st;
  }

  Result<PGconn*> Lease() {
    std::unique_lock lock(mu_);
    // Every connection busy for this long: a statement is stuck (its own timeouts end
    // it).
    if (!cv_.wait_for(lock, std::chrono::seconds(kLeaseWaitS),
                      [&] { return !idle_.empty() || open_ < options_.pool_size; })) {
      return Retriable(
          "catalog " + where_ + ": all " + std::to_string(options_.pool_size) +
          " connections stayed busy for " + std::to_string(kLeaseWaitS) + " s");
    }
    if (!idle_.empty()) {
      PGconn* c = idle_.back();
      idle_.pop_back();
      return c;
    }
    ++open_;
    lock.unlock();
    auto c = Connect();
    if (!c.ok()) {
      lock.lock();
      --open_;
      cv_.notify_one();
    }
    return c;
  }

  void Return(PGconn* c) {
    std::lock_guard lock(mu_);
    if (PQstatus(c) == CONNECTION_OK && PQtransactionStatus(c) == PQTRANS_IDLE) {
      idle_.push_back(c);
    } else {
      PQfinish(c);
      --open_;
    }
    cv_.notify_one();
  }

  Result<PGconn*> Connect() {
    const std::string timeout = std::to_string(options_.connect_timeout_s);
    // expand_dbname: `dbname` is the whole connection string or URI; the keys after it
    // override what it says.
    // A server that vanishes without closing (a partition, a failover) is noticed within
    // ~30 s (TCP keepalives, tcp_user_timeout), and a statement blocked behind another
    // writer's lock ends after 30 s (SQLSTATE 57014: retried), so no commit hangs.
    std::vector<const char*> keys = {
        "dbname",           "connect_timeout",  "application_name",
        "keepalives",       "keepalives_idle",  "keepalives_interval",
        "keepalives_count", "tcp_user_timeout", "options"};
    std::vector<const char*> values = {options_.conninfo.c_str(),
                                       timeout.c_str(),
                                       "floe",
                                       "1",
                                       "10",
                                       "5",
                                       "3",
                                       "30000",
                                       "-c statement_timeout=30000"};
    if (!options_.password.empty()) {
      keys.push_back("password");
      values.push_back(options_.password.c_str());
    }
    keys.push_back(nullptr);
    values.push_back(nullptr);
    PGconn* c = PQconnectdbParams(keys.data(), values.data(), /*expand_dbname=*/1);
    if (c == nullptr) return Retriable("catalog postgresql: out of memory connecting");
    if (PQstatus(c) != CONNECTION_OK) {
      std::string msg = PQerrorMessage(c);
      while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' ')) msg.pop_back();
      PQfinish(c);
      const bool refused_login =
          msg.find("password authentication failed") != std::string::npos ||
          msg.find("does not exist") != std::string::npos;
      std::string text = "catalog postgresql: cannot connect: " + msg;
      return refused_login ? InvalidInput(text) : Retriable(text);
    }
    {
      std::lock_guard lock(mu_);
      if (where_.empty()) {
        where_ = std::string(PQhost(c)) + ":" + PQport(c) + "/" + PQdb(c);
      }
    }
    return c;
  }

  const PostgresOptions options_;
  const std::string catalog_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<PGconn*> idle_;
  int open_ = 0;
  std::string where_;
};

}  // namespace

Result<std::unique_ptr<PointerStore>> OpenPostgresStore(const PostgresOptions& options,
                                                        const std::string& catalog_name) {
  if (options.conninfo.empty()) {
    return InvalidInput(
        "catalog.uri: a PostgreSQL connection URI is required, e.g. "
        "postgresql://floe@127.0.0.1:5432/lake");
  }
  if (options.pool_size < 1) return InvalidInput("catalog pool size must be at least 1");
  auto store = std::make_unique<PostgresStore>(options, catalog_name);
  FLOE_RETURN_NOT_OK(store->Init());
  return std::unique_ptr<PointerStore>(std::move(store));
}

}  // namespace floe::catalog
