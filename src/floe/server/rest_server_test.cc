#include "floe/server/rest_server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "floe/catalog/catalog.h"
#include "floe/catalog/pointer_store.h"
#include "floe/server/iceberg_routes.h"
#include "floe/storage/file_io.h"
#include "floe/storage/file_io_test_util.h"

namespace floe::server {
namespace {

namespace fs = std::filesystem;
using Json = ::nlohmann::json;

const char* kSchemaJson = R"({"type": "struct", "schema-id": 0, "fields": [
  {"id": 1, "name": "id", "type": "long", "required": true},
  {"id": 2, "name": "data", "type": "string", "required": false}]})";

// A connected socket to 127.0.0.1:port with a receive timeout; -1 on failure.
int Connect(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  timeval tv{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// A connected socket from `source` (another loopback address, e.g. 127.0.0.2, to stand
// for another client) to 127.0.0.1:port; -1 on failure.
int ConnectFrom(const char* source, int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  timeval tv{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  sockaddr_in from{};
  from.sin_family = AF_INET;
  ::inet_pton(AF_INET, source, &from.sin_addr);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&from), sizeof(from)) != 0 ||
      ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// The status of the response waiting on `fd` (0 if the server closed without one).
int ReadStatus(int fd) {
  std::string response;
  char buf[4096];
  while (response.find("\r\n") == std::string::npos) {
    ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) break;
    response.append(buf, static_cast<size_t>(n));
  }
  if (response.rfind("HTTP/1.1 ", 0) != 0) return 0;
  return std::atoi(response.c_str() + 9);
}

// Sends raw bytes and returns the status code of the response (0 if none came).
int RawStatus(int port, const std::string& data) {
  int fd = Connect(port);
  if (fd < 0) return 0;
  (void)::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
  std::string response;
  char buf[4096];
  while (response.find("\r\n") == std::string::npos) {
    ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) break;
    response.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  if (response.rfind("HTTP/1.1 ", 0) != 0) return 0;
  return std::atoi(response.c_str() + 9);
}

// An extra route set, as admin or metrics endpoints will be: GET /v1/floe/ping, and
// GET /v1/floe/fail/{kind}, which fails with a status of that kind.
class PingRoutes : public RouteSet {
 public:
  std::vector<Route> Routes() override {
    return {{"GET", "/v1/floe/ping",
             [](const HttpRequest&, HttpResponse* res) {
               res->SendJson(200, R"({"pong":true})");
               return Status::OK();
             }},
            {"GET", "/v1/floe/fail/{kind}",
             [](const HttpRequest& req, HttpResponse*) -> Status {
               const std::string& kind = req.Capture("kind");
               if (kind == "retriable") return Retriable("broker unreachable");
               if (kind == "state-unknown") return StateUnknown("commit outcome unknown");
               if (kind == "invalid-input") return InvalidInput("bad request");
               if (kind == "invalid-record") return InvalidRecord("a bad Kafka record");
               if (kind == "not-found") return NotFound("nothing here");
               if (kind == "conflict") return Conflict("lost a race");
               if (kind == "forbidden") return Forbidden("not for you");
               if (kind == "arrow-io") return Status::IOError("disk gone");
               if (kind == "arrow-invalid") return Status::Invalid("bad value");
               return Internal("a bug");
             }}};
  }
};

int64_t NowMillis() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// A server on a free port over a real catalog: SQLite pointer store and a local
// warehouse, both in a fresh temporary directory.
class RestServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "floe-server-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    fs::create_directories(dir_ + "/warehouse");
    warehouse_uri_ = storage::PathToFileUri(dir_ + "/warehouse");
    auto store = catalog::OpenSqliteStore(dir_ + "/catalog.db", "floe");
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(*store);
    auto faulty =
        std::make_unique<storage::FaultyFileIO>(storage::MakeLocalFileIO(warehouse_uri_));
    faulty_ = faulty.get();
    io_ = std::move(faulty);
    catalog_ =
        std::make_unique<catalog::StoreCatalog>(store_.get(), io_.get(), warehouse_uri_);
    StartServer(RestOptions{});
  }

  void TearDown() override {
    client_.reset();
    server_.reset();
    catalog_.reset();
    io_.reset();
    store_.reset();
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  void StartServer(RestOptions options,
                   std::vector<std::unique_ptr<RouteSet>> extra_route_sets = {}) {
    client_.reset();
    server_.reset();
    options.port = 0;
    options.threads = 4;
    std::vector<std::unique_ptr<RouteSet>> route_sets;
    route_sets.push_back(MakeIcebergRoutes(catalog_.get(), client_storage_));
    for (auto& set : extra_route_sets) route_sets.push_back(std::move(set));
    auto server = RestServer::Start(std::move(route_sets), std::move(options));
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(*server);
    ASSERT_GT(server_->port(), 0);
    client_ = NewClient();
  }

  std::unique_ptr<httplib::Client> NewClient() {
    auto c = std::make_unique<httplib::Client>("127.0.0.1", server_->port());
    c->set_read_timeout(20, 0);
    c->set_url_encode(
        false);  // the tests' paths are already encoded, as clients send them
    c->set_default_headers(headers_);
    return c;
  }

  httplib::Result Get(const std::string& path, httplib::Headers h = {}) {
    return client_->Get(path.c_str(), h);
  }
  httplib::Result Head(const std::string& path) { return client_->Head(path.c_str()); }
  httplib::Result Delete(const std::string& path) {
    return client_->Delete(path.c_str());
  }
  httplib::Result Post(const std::string& path, const std::string& body) {
    return client_->Post(path.c_str(), body, "application/json");
  }
  httplib::Result Post(const std::string& path, const Json& body) {
    return Post(path, body.dump());
  }

  static Json BodyOf(const httplib::Result& r) { return Json::parse(r->body); }

  // The response is `code` with the Iceberg error body of `type`.
  static void ExpectError(const httplib::Result& r, int code, const std::string& type) {
    ASSERT_TRUE(r) << httplib::to_string(r.error());
    EXPECT_EQ(r->status, code) << r->body;
    Json j = Json::parse(r->body, nullptr, false);
    ASSERT_TRUE(j.is_object()) << r->body;
    ASSERT_TRUE(j.contains("error")) << r->body;
    EXPECT_EQ(j["error"]["code"], code);
    EXPECT_EQ(j["error"]["type"], type) << r->body;
    EXPECT_TRUE(j["error"]["message"].is_string());
  }

  void ExpectAlive() {
    auto r = Get("/v1/config");
    ASSERT_TRUE(r) << httplib::to_string(r.error());
    EXPECT_EQ(r->status, 200);
  }

  void CreateNamespace(const Json& ns) {
    auto r = Post("/v1/namespaces", Json{{"namespace", ns}});
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200) << r->body;
  }

  // Creates ns.name and returns its LoadTableResult.
  Json CreateTable(const std::string& ns, const std::string& name) {
    Json req = {{"name", name}, {"schema", Json::parse(kSchemaJson)}};
    auto r = Post("/v1/namespaces/" + ns + "/tables", req);
    EXPECT_TRUE(r);
    if (!r) return Json();
    EXPECT_EQ(r->status, 200) << r->body;
    return BodyOf(r);
  }

  // add-snapshot + set-snapshot-ref main, asserting main is `expected_main`.
  static Json AppendCommit(const Json& metadata, int64_t snapshot_id,
                           std::optional<int64_t> expected_main) {
    Json snap = {
        {"snapshot-id", snapshot_id},
        {"sequence-number", metadata["last-sequence-number"].get<int64_t>() + 1},
        {"timestamp-ms", NowMillis()},
        {"manifest-list", metadata["location"].get<std::string>() + "/metadata/snap-" +
                              std::to_string(snapshot_id) + ".avro"},
        {"summary", {{"operation", "append"}}},
        {"schema-id", 0}};
    if (expected_main) snap["parent-snapshot-id"] = *expected_main;
    Json req = {{"type", "assert-ref-snapshot-id"}, {"ref", "main"}};
    req["snapshot-id"] = expected_main ? Json(*expected_main) : Json(nullptr);
    return {{"requirements", Json::array({req})},
            {"updates", Json::array({{{"action", "add-snapshot"}, {"snapshot", snap}},
                                     {{"action", "set-snapshot-ref"},
                                      {"ref-name", "main"},
                                      {"type", "branch"},
                                      {"snapshot-id", snapshot_id}}})}};
  }

  std::string dir_;
  std::string warehouse_uri_;
  std::unique_ptr<catalog::PointerStore> store_;
  std::unique_ptr<storage::FileIO> io_;
  storage::FaultyFileIO* faulty_ = nullptr;  // io_
  std::unique_ptr<catalog::Catalog> catalog_;
  std::unique_ptr<RestServer> server_;
  std::unique_ptr<httplib::Client> client_;
  httplib::Headers headers_;
  ClientStorage client_storage_;
};

TEST_F(RestServerTest, ClientsLearnTheStoreAndGetCredentialsOnlyWhenTheyAsk) {
  client_storage_.config = {{"s3.endpoint", "http://127.0.0.1:8333"},
                            {"s3.path-style-access", "true"},
                            {"client.region", "us-east-1"}};
  client_storage_.credentials = {{"s3.access-key-id", "READER"},
                                 {"s3.secret-access-key", "reader-secret"}};
  client_storage_.prefix = "s3://lake/floe";
  StartServer(RestOptions{});
  Json config = BodyOf(Get("/v1/config"));
  EXPECT_EQ(config["defaults"]["s3.endpoint"], "http://127.0.0.1:8333");
  EXPECT_FALSE(config["defaults"].contains("s3.access-key-id"));
  EXPECT_EQ(config["overrides"], Json::object());
  CreateNamespace(Json::array({"ns"}));
  Json created = CreateTable("ns", "t");
  EXPECT_EQ(created["config"]["s3.path-style-access"], "true");
  EXPECT_FALSE(created["config"].contains("s3.secret-access-key"));

  Json plain = BodyOf(Get("/v1/namespaces/ns/tables/t"));
  EXPECT_EQ(plain["config"]["s3.endpoint"], "http://127.0.0.1:8333");
  EXPECT_EQ(plain["config"]["client.region"], "us-east-1");
  EXPECT_FALSE(plain["config"].contains("s3.access-key-id"));
  EXPECT_FALSE(plain.contains("storage-credentials"));
  // Other delegation mechanisms get nothing either.
  Json remote = BodyOf(Get("/v1/namespaces/ns/tables/t",
                           {{"X-Iceberg-Access-Delegation", "remote-signing"}}));
  EXPECT_FALSE(remote["config"].contains("s3.access-key-id"));

  auto plain_r = Get("/v1/namespaces/ns/tables/t");
  auto vended_r =
      Get("/v1/namespaces/ns/tables/t",
          {{"X-Iceberg-Access-Delegation", "remote-signing, vended-credentials"}});
  ASSERT_TRUE(plain_r && vended_r);
  // Two representations: a cached plain answer is never revalidated into one without
  // the credentials that were asked for.
  EXPECT_NE(plain_r->get_header_value("ETag"), vended_r->get_header_value("ETag"));
  EXPECT_EQ(vended_r->get_header_value("Vary"), "X-Iceberg-Access-Delegation");
  EXPECT_EQ(Get("/v1/namespaces/ns/tables/t",
                {{"X-Iceberg-Access-Delegation", "vended-credentials"},
                 {"If-None-Match", plain_r->get_header_value("ETag")}})
                ->status,
            200);
  Json vended = BodyOf(vended_r);
  EXPECT_EQ(vended["config"]["s3.access-key-id"], "READER");
  EXPECT_EQ(vended["config"]["s3.secret-access-key"], "reader-secret");
  EXPECT_EQ(vended["config"]["s3.endpoint"], "http://127.0.0.1:8333");
  ASSERT_EQ(vended["storage-credentials"].size(), 1u);
  EXPECT_EQ(vended["storage-credentials"][0]["prefix"], "s3://lake/floe");
  EXPECT_EQ(vended["storage-credentials"][0]["config"]["s3.access-key-id"], "READER");
}

TEST_F(RestServerTest, ConfigListsEveryServedEndpointWithoutPrefix) {
  auto r = Get("/v1/config?warehouse=anything");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200);
  EXPECT_EQ(r->get_header_value("Content-Type"), "application/json");
  Json j = BodyOf(r);
  EXPECT_EQ(j["defaults"], Json::object());
  EXPECT_EQ(j["overrides"], Json::object());  // no prefix: clients call /v1/namespaces
  std::vector<std::string> endpoints = j["endpoints"];
  EXPECT_EQ(endpoints.size(), 16u);
  for (const char* e :
       {"GET /v1/{prefix}/namespaces", "POST /v1/{prefix}/namespaces",
        "GET /v1/{prefix}/namespaces/{namespace}",
        "HEAD /v1/{prefix}/namespaces/{namespace}",
        "DELETE /v1/{prefix}/namespaces/{namespace}",
        "POST /v1/{prefix}/namespaces/{namespace}/properties",
        "GET /v1/{prefix}/namespaces/{namespace}/tables",
        "POST /v1/{prefix}/namespaces/{namespace}/tables",
        "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}",
        "HEAD /v1/{prefix}/namespaces/{namespace}/tables/{table}",
        "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}",
        "DELETE /v1/{prefix}/namespaces/{namespace}/tables/{table}",
        "POST /v1/{prefix}/namespaces/{namespace}/register",
        "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/metrics",
        "POST /v1/{prefix}/tables/rename", "POST /v1/{prefix}/transactions/commit"}) {
    EXPECT_NE(std::find(endpoints.begin(), endpoints.end(), e), endpoints.end()) << e;
  }
}

TEST_F(RestServerTest, NamespaceCrud) {
  auto r = Post("/v1/namespaces",
                Json{{"namespace", {"sales"}}, {"properties", {{"owner", "ann"}}}});
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(BodyOf(r)["namespace"], Json({"sales"}));
  EXPECT_EQ(BodyOf(r)["properties"]["owner"], "ann");
  ExpectError(Post("/v1/namespaces", Json{{"namespace", {"sales"}}}), 409,
              "AlreadyExistsException");
  CreateNamespace({"sales", "eu"});

  r = Get("/v1/namespaces");
  ASSERT_EQ(r->status, 200);
  EXPECT_EQ(BodyOf(r)["namespaces"], Json::array({Json({"sales"})}));
  EXPECT_TRUE(BodyOf(r)["next-page-token"].is_null());
  r = Get("/v1/namespaces?parent=sales&pageToken=&pageSize=10");
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(BodyOf(r)["namespaces"], Json::array({Json({"sales", "eu"})}));
  r = Get("/v1/namespaces?parent=sales%1Feu");
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(BodyOf(r)["namespaces"], Json::array());
  ExpectError(Get("/v1/namespaces?parent=nope"), 404, "NoSuchNamespaceException");
  ExpectError(Get("/v1/namespaces?pageSize=0"), 400, "BadRequestException");

  r = Get("/v1/namespaces/sales");
  ASSERT_EQ(r->status, 200);
  EXPECT_EQ(BodyOf(r)["properties"], Json({{"owner", "ann"}}));
  r = Get("/v1/namespaces/sales%1Feu");
  ASSERT_EQ(r->status, 200);
  EXPECT_EQ(BodyOf(r)["namespace"], Json({"sales", "eu"}));
  EXPECT_EQ(Head("/v1/namespaces/sales")->status, 204);
  EXPECT_EQ(Head("/v1/namespaces/sales%1Feu")->status, 204);
  EXPECT_EQ(Head("/v1/namespaces/nope")->status, 404);
  ExpectError(Get("/v1/namespaces/nope"), 404, "NoSuchNamespaceException");

  r = Post("/v1/namespaces/sales/properties",
           Json{{"removals", {"owner", "gone"}}, {"updates", {{"tier", "gold"}}}});
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(BodyOf(r)["updated"], Json({"tier"}));
  EXPECT_EQ(BodyOf(r)["removed"], Json({"owner"}));
  EXPECT_EQ(BodyOf(r)["missing"], Json({"gone"}));
  EXPECT_EQ(BodyOf(Get("/v1/namespaces/sales"))["properties"], Json({{"tier", "gold"}}));
  ExpectError(Post("/v1/namespaces/sales/properties",
                   Json{{"removals", {"tier"}}, {"updates", {{"tier", "x"}}}}),
              422, "UnprocessableEntityException");
  ExpectError(Post("/v1/namespaces/nope/properties", Json{{"updates", {{"a", "b"}}}}),
              404, "NoSuchNamespaceException");

  ExpectError(Delete("/v1/namespaces/sales"), 409, "NamespaceNotEmptyException");
  EXPECT_EQ(Delete("/v1/namespaces/sales%1Feu")->status, 204);
  EXPECT_EQ(Delete("/v1/namespaces/sales")->status, 204);
  ExpectError(Delete("/v1/namespaces/sales"), 404, "NoSuchNamespaceException");
  EXPECT_EQ(BodyOf(Get("/v1/namespaces"))["namespaces"], Json::array());
}

TEST_F(RestServerTest, PlusInAPathSegmentIsASpaceAsJavaEncodesIt) {
  CreateNamespace({"my ns"});
  auto r = Get("/v1/namespaces/my+ns");
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(BodyOf(r)["namespace"], Json({"my ns"}));
  EXPECT_EQ(Get("/v1/namespaces/my%20ns")->status, 200);
}

TEST_F(RestServerTest, TableCreateLoadEtagCommitConflict) {
  CreateNamespace({"db"});
  Json created = CreateTable("db", "events");
  ASSERT_TRUE(created.contains("metadata-location"));
  EXPECT_EQ(created["metadata"]["format-version"], 2);
  EXPECT_EQ(created["config"], Json::object());
  ExpectError(Post("/v1/namespaces/db/tables",
                   Json{{"name", "events"}, {"schema", Json::parse(kSchemaJson)}}),
              409, "AlreadyExistsException");
  ExpectError(Post("/v1/namespaces/nope/tables",
                   Json{{"name", "events"}, {"schema", Json::parse(kSchemaJson)}}),
              404, "NoSuchNamespaceException");
  ExpectError(
      Post("/v1/namespaces/db/tables", Json{{"name", "x"}, {"schema", {{"type", 3}}}}),
      400, "BadRequestException");

  auto r = Get("/v1/namespaces/db/tables");
  ASSERT_EQ(r->status, 200);
  EXPECT_EQ(BodyOf(r)["identifiers"],
            Json::array({Json{{"namespace", {"db"}}, {"name", "events"}}}));
  EXPECT_TRUE(BodyOf(r)["next-page-token"].is_null());
  ExpectError(Get("/v1/namespaces/nope/tables"), 404, "NoSuchNamespaceException");

  // Load, ETag and conditional load.
  r = Get("/v1/namespaces/db/tables/events?snapshots=all");
  ASSERT_EQ(r->status, 200) << r->body;
  Json loaded = BodyOf(r);
  EXPECT_EQ(loaded["metadata-location"], created["metadata-location"]);
  std::string etag = r->get_header_value("ETag");
  ASSERT_FALSE(etag.empty());
  EXPECT_EQ(etag.front(), '"');
  r = Get("/v1/namespaces/db/tables/events", {{"If-None-Match", etag}});
  EXPECT_EQ(r->status, 304);
  EXPECT_TRUE(r->body.empty());
  EXPECT_EQ(
      Get("/v1/namespaces/db/tables/events", {{"If-None-Match", "\"other\""}})->status,
      200);
  EXPECT_EQ(Get("/v1/namespaces/db/tables/events?snapshots=refs")->status, 200);
  ExpectError(Get("/v1/namespaces/db/tables/events?snapshots=some"), 400,
              "BadRequestException");
  EXPECT_EQ(Head("/v1/namespaces/db/tables/events")->status, 204);
  EXPECT_EQ(Head("/v1/namespaces/db/tables/nope")->status, 404);
  ExpectError(Get("/v1/namespaces/db/tables/nope"), 404, "NoSuchTableException");
  // loadTable in a missing namespace: NoSuchTable (what Spark's metadata-table fallback
  // needs, and what the specification lists for loadTable).
  ExpectError(Get("/v1/namespaces/nope/tables/events"), 404, "NoSuchTableException");
  ExpectError(Get("/v1/namespaces/db%1Fevents/tables/files"), 404,
              "NoSuchTableException");

  // A commit that adds a snapshot; the same commit again has a stale base: 409.
  Json commit = AppendCommit(loaded["metadata"], 1001, std::nullopt);
  commit["identifier"] = {{"namespace", {"db"}}, {"name", "events"}};
  r = Post("/v1/namespaces/db/tables/events", commit);
  ASSERT_EQ(r->status, 200) << r->body;
  Json committed = BodyOf(r);
  EXPECT_EQ(committed["metadata"]["current-snapshot-id"], 1001);
  EXPECT_NE(committed["metadata-location"], created["metadata-location"]);
  ExpectError(Post("/v1/namespaces/db/tables/events",
                   AppendCommit(loaded["metadata"], 1002, std::nullopt)),
              409, "CommitFailedException");
  r = Post("/v1/namespaces/db/tables/events",
           AppendCommit(committed["metadata"], 1002, int64_t{1001}));
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(BodyOf(r)["metadata"]["current-snapshot-id"], 1002);

  // The old ETag no longer matches.
  r = Get("/v1/namespaces/db/tables/events", {{"If-None-Match", etag}});
  ASSERT_EQ(r->status, 200);
  EXPECT_NE(r->get_header_value("ETag"), etag);

  ExpectError(Post("/v1/namespaces/db/tables/events",
                   Json{{"requirements", Json::array()},
                        {"updates", Json::array({{{"action", "frobnicate"}}})}}),
              400, "BadRequestException");
  ExpectError(Post("/v1/namespaces/db/tables/events",
                   Json{{"requirements", Json::array({{{"type", "assert-nothing"}}})},
                        {"updates", Json::array()}}),
              400, "BadRequestException");
  ExpectError(Post("/v1/namespaces/db/tables/nope",
                   Json{{"requirements", Json::array()}, {"updates", Json::array()}}),
              404, "NoSuchTableException");

  // Metrics reports are accepted and dropped, but must be JSON.
  r = Post("/v1/namespaces/db/tables/events/metrics",
           Json{{"report-type", "scan-report"}, {"table-name", "db.events"}});
  EXPECT_EQ(r->status, 204);
  ExpectError(Post("/v1/namespaces/db/tables/events/metrics", std::string("{nope")), 400,
              "BadRequestException");
  ExpectAlive();
}

TEST_F(RestServerTest, StageCreateThenCreateTransaction) {
  CreateNamespace({"db"});
  auto r = Post("/v1/namespaces/db/tables", Json{{"name", "staged"},
                                                 {"schema", Json::parse(kSchemaJson)},
                                                 {"stage-create", true},
                                                 {"properties", {{"k", "v"}}}});
  ASSERT_EQ(r->status, 200) << r->body;
  Json staged = BodyOf(r);
  EXPECT_FALSE(staged.contains("metadata-location"));
  EXPECT_EQ(Head("/v1/namespaces/db/tables/staged")->status, 404);

  // What Java sends to finish a create transaction.
  const Json& md = staged["metadata"];
  Json updates = Json::array(
      {{{"action", "assign-uuid"}, {"uuid", md["table-uuid"]}},
       {{"action", "upgrade-format-version"}, {"format-version", 2}},
       {{"action", "add-schema"},
        {"schema", Json::parse(kSchemaJson)},
        {"last-column-id", 2}},
       {{"action", "set-current-schema"}, {"schema-id", -1}},
       {{"action", "add-spec"}, {"spec", {{"spec-id", 0}, {"fields", Json::array()}}}},
       {{"action", "set-default-spec"}, {"spec-id", -1}},
       {{"action", "add-sort-order"},
        {"sort-order", {{"order-id", 0}, {"fields", Json::array()}}}},
       {{"action", "set-default-sort-order"}, {"sort-order-id", -1}},
       {{"action", "set-location"}, {"location", md["location"]}},
       {{"action", "set-properties"}, {"updates", {{"k", "v"}}}}});
  Json commit = {{"requirements", Json::array({{{"type", "assert-create"}}})},
                 {"updates", updates}};
  r = Post("/v1/namespaces/db/tables/staged", commit);
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(BodyOf(r)["metadata"]["properties"]["k"], "v");
  EXPECT_EQ(Head("/v1/namespaces/db/tables/staged")->status, 204);
  ExpectError(Post("/v1/namespaces/db/tables/staged", commit), 409,
              "CommitFailedException");
}

TEST_F(RestServerTest, RenameDropRegister) {
  CreateNamespace({"a"});
  CreateNamespace({"b"});
  Json created = CreateTable("a", "t");
  CreateTable("a", "other");

  auto rename = [&](const Json& from_ns, const std::string& from, const Json& to_ns,
                    const std::string& to) {
    return Post("/v1/tables/rename",
                Json{{"source", {{"namespace", from_ns}, {"name", from}}},
                     {"destination", {{"namespace", to_ns}, {"name", to}}}});
  };
  EXPECT_EQ(rename({"a"}, "t", {"b"}, "t2")->status, 204);
  EXPECT_EQ(Head("/v1/namespaces/a/tables/t")->status, 404);
  EXPECT_EQ(Get("/v1/namespaces/b/tables/t2")->status, 200);
  ExpectError(rename({"a"}, "missing", {"b"}, "x"), 404, "NoSuchTableException");
  ExpectError(rename({"b"}, "t2", {"nope"}, "x"), 404, "NoSuchNamespaceException");
  ExpectError(rename({"a"}, "other", {"b"}, "t2"), 409, "AlreadyExistsException");
  ExpectError(rename({"b"}, "t2", {"b"}, ".."), 400, "BadRequestException");
  ExpectError(Post("/v1/tables/rename", Json{{"source", {{"name", "t"}}}}), 400,
              "BadRequestException");

  // Drop without purge keeps the files: the metadata file can be registered again.
  std::string location = created["metadata-location"];
  EXPECT_EQ(Delete("/v1/namespaces/b/tables/t2?purgeRequested=false")->status, 204);
  ExpectError(Delete("/v1/namespaces/b/tables/t2"), 404, "NoSuchTableException");
  ExpectError(Delete("/v1/namespaces/b/tables/t2?purgeRequested=maybe"), 400,
              "BadRequestException");
  auto r = Post("/v1/namespaces/b/register",
                Json{{"name", "back"}, {"metadata-location", location}});
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(BodyOf(r)["metadata-location"], location);
  EXPECT_EQ(BodyOf(r)["metadata"]["table-uuid"], created["metadata"]["table-uuid"]);
  EXPECT_EQ(Get("/v1/namespaces/b/tables/back")->status, 200);
  ExpectError(Post("/v1/namespaces/b/register",
                   Json{{"name", "back"}, {"metadata-location", location}}),
              409, "AlreadyExistsException");
  ExpectError(Post("/v1/namespaces/nope/register",
                   Json{{"name", "x"}, {"metadata-location", location}}),
              404, "NoSuchNamespaceException");
  ExpectError(Post("/v1/namespaces/b/register",
                   Json{{"name", "x"}, {"metadata-location", "file:///etc/passwd"}}),
              400, "BadRequestException");

  // pyiceberg sends purgeRequested=True.
  EXPECT_EQ(Delete("/v1/namespaces/b/tables/back?purgeRequested=True")->status, 204);
  EXPECT_EQ(Head("/v1/namespaces/b/tables/back")->status, 404);
  ExpectAlive();
}

TEST_F(RestServerTest, TransactionsCommitAllOrNothing) {
  CreateNamespace({"db"});
  Json t1 = CreateTable("db", "t1");
  Json t2 = CreateTable("db", "t2");
  auto change = [](const std::string& name, const Json& uuid, const std::string& value) {
    return Json{
        {"identifier", {{"namespace", {"db"}}, {"name", name}}},
        {"requirements", Json::array({{{"type", "assert-table-uuid"}, {"uuid", uuid}}})},
        {"updates",
         Json::array({{{"action", "set-properties"}, {"updates", {{"owner", value}}}}})}};
  };
  const Json& u1 = t1["metadata"]["table-uuid"];
  const Json& u2 = t2["metadata"]["table-uuid"];
  auto r = Post("/v1/transactions/commit",
                Json{{"table-changes", {change("t1", u1, "x"), change("t2", u2, "x")}}});
  ASSERT_EQ(r->status, 204) << r->body;
  EXPECT_EQ(BodyOf(Get("/v1/namespaces/db/tables/t1"))["metadata"]["properties"]["owner"],
            "x");
  EXPECT_EQ(BodyOf(Get("/v1/namespaces/db/tables/t2"))["metadata"]["properties"]["owner"],
            "x");

  // One stale requirement: nothing is applied.
  ExpectError(
      Post("/v1/transactions/commit",
           Json{{"table-changes", {change("t1", u1, "y"), change("t2", u1, "y")}}}),
      409, "CommitFailedException");
  EXPECT_EQ(BodyOf(Get("/v1/namespaces/db/tables/t1"))["metadata"]["properties"]["owner"],
            "x");
  ExpectError(Post("/v1/transactions/commit", Json{{"table-changes", Json::array()}}),
              400, "BadRequestException");
  ExpectError(
      Post("/v1/transactions/commit",
           Json{{"table-changes",
                 {{{"requirements", Json::array()}, {"updates", Json::array()}}}}}),
      400, "BadRequestException");
  ExpectError(Post("/v1/transactions/commit",
                   Json{{"table-changes", {change("missing", u1, "y")}}}),
              404, "NoSuchTableException");
}

TEST_F(RestServerTest, BearerTokens) {
  RestOptions options;
  options.auth_tokens = {"s3cret", "other-token"};
  StartServer(options);
  ExpectError(Get("/v1/config"), 401, "NotAuthorizedException");
  EXPECT_EQ(Get("/v1/config")->get_header_value("WWW-Authenticate"), "Bearer");
  ExpectError(Get("/v1/no/such/route"), 401, "NotAuthorizedException");
  ExpectError(Post("/v1/namespaces", Json{{"namespace", {"x"}}}), 401,
              "NotAuthorizedException");
  ExpectError(Get("/v1/config", {{"Authorization", "Bearer s3cre"}}), 401,
              "NotAuthorizedException");
  ExpectError(Get("/v1/config", {{"Authorization", "Basic s3cret"}}), 401,
              "NotAuthorizedException");
  ExpectError(Get("/v1/config", {{"Authorization", "Bearer "}}), 401,
              "NotAuthorizedException");
  EXPECT_EQ(Get("/v1/config", {{"Authorization", "Bearer s3cret"}})->status, 200);
  EXPECT_EQ(Get("/v1/config", {{"Authorization", "bearer other-token"}})->status, 200);

  headers_ = {{"Authorization", "Bearer s3cret"}};
  client_ = NewClient();
  CreateNamespace({"x"});
  ExpectError(Get("/v1/no/such/route"), 404, "NotFoundException");
}

TEST_F(RestServerTest, ReadOnlyTokensReadAndReportButNeverChange) {
  RestOptions options;
  options.auth_tokens = {"writer-token"};
  options.read_tokens = {"reader-token"};
  StartServer(options);
  headers_ = {{"Authorization", "Bearer writer-token"}};
  client_ = NewClient();
  CreateNamespace({"db"});
  CreateTable("db", "t");
  headers_ = {{"Authorization", "Bearer reader-token"}};
  client_ = NewClient();
  EXPECT_EQ(Get("/v1/config")->status, 200);
  EXPECT_EQ(Get("/v1/namespaces/db/tables/t")->status, 200);
  EXPECT_EQ(Head("/v1/namespaces/db/tables/t")->status, 204);
  EXPECT_EQ(
      Post("/v1/namespaces/db/tables/t/metrics", Json{{"report-type", "scan-report"}})
          ->status,
      204);
  ExpectError(Post("/v1/namespaces", Json{{"namespace", {"y"}}}), 403,
              "ForbiddenException");
  ExpectError(Post("/v1/namespaces/db/tables/t",
                   Json{{"requirements", Json::array()},
                        {"updates", Json::array({{{"action", "set-properties"},
                                                  {"updates", {{"a", "b"}}}}})}}),
              403, "ForbiddenException");
  ExpectError(Delete("/v1/namespaces/db/tables/t?purgeRequested=true"), 403,
              "ForbiddenException");
  ExpectError(Post("/v1/namespaces/db/tables/t?x=/metrics", Json::object()), 403,
              "ForbiddenException");
  EXPECT_EQ(Get("/v1/namespaces/db/tables/t")->status, 200);
  headers_ = {{"Authorization", "Bearer nobody"}};
  client_ = NewClient();
  ExpectError(Get("/v1/config"), 401, "NotAuthorizedException");
}

TEST_F(RestServerTest, OversizeChunkedAndMalformedBodies) {
  RestOptions options;
  options.max_body_bytes = 1024;
  StartServer(options);
  std::string big =
      Json{{"namespace", {"x"}}, {"properties", {{"k", std::string(2048, 'v')}}}}.dump();
  ExpectError(Post("/v1/namespaces", big), 413, "BadRequestException");
  ExpectAlive();

  // Chunked bodies are read under the same limit.
  auto chunked = [&](std::string body) {
    return client_->Post(
        "/v1/namespaces",
        [body](size_t offset, httplib::DataSink& sink) {
          for (size_t i = offset; i < body.size(); i += 100) {
            sink.write(body.data() + i, std::min<size_t>(100, body.size() - i));
          }
          sink.done();
          return true;
        },
        "application/json");
  };
  auto r = chunked(R"({"namespace": ["chunked"]})");
  ASSERT_TRUE(r) << httplib::to_string(r.error());
  EXPECT_EQ(r->status, 200) << r->body;
  r = chunked(big);
  // The server stops reading at the limit, so the client may see the connection reset
  // before it reads the 413.
  if (r) ExpectError(r, 413, "BadRequestException");
  ExpectAlive();
  EXPECT_EQ(Head("/v1/namespaces/x")->status, 404);

  ExpectError(Post("/v1/namespaces", std::string("{\"namespace\": [")), 400,
              "BadRequestException");
  ExpectError(Post("/v1/namespaces", std::string("")), 400, "BadRequestException");
  ExpectError(Post("/v1/namespaces", std::string("{\"namespace\": [\"z\"]}\0x", 22)), 400,
              "BadRequestException");
  EXPECT_EQ(Head("/v1/namespaces/z")->status, 404);
  ExpectError(Post("/v1/namespaces", std::string("[\"x\"]")), 400, "BadRequestException");
  ExpectError(Post("/v1/namespaces", Json{{"namespace", "x"}}), 400,
              "BadRequestException");
  ExpectError(
      Post("/v1/namespaces", Json{{"namespace", {"x"}}, {"properties", {{"k", 1}}}}), 400,
      "BadRequestException");
  std::string deep =
      "{\"namespace\": " + std::string(100, '[') + std::string(100, ']') + "}";
  ExpectError(Post("/v1/namespaces", deep), 400, "BadRequestException");
  // Brackets inside strings do not count as nesting.
  r = Post("/v1/namespaces",
           Json{{"namespace", {"y"}}, {"properties", {{"k", std::string(100, '[')}}}});
  EXPECT_EQ(r->status, 200) << r->body;
  ExpectError(Post("/v1/namespaces", std::string("{\"namespace\": [\"\xff\"]}")), 400,
              "BadRequestException");
  ExpectAlive();
}

TEST_F(RestServerTest, TraversalAndBadNamesAreRefused) {
  CreateNamespace({"db"});
  for (const char* ns : {"..", ".", "a/b", "a\\b", "", "a.b"}) {
    ExpectError(Post("/v1/namespaces", Json{{"namespace", {ns}}}), 400,
                "BadRequestException");
  }
  ExpectError(Post("/v1/namespaces", Json{{"namespace", Json::array()}}), 400,
              "BadRequestException");
  for (const char* path :
       {"/v1/namespaces/%2E%2E", "/v1/namespaces/..", "/v1/namespaces/a%2Fb",
        "/v1/namespaces/a%5Cb", "/v1/namespaces/db%1F..", "/v1/namespaces/db%1F",
        "/v1/namespaces/db/tables/..%2F..%2Fetc", "/v1/namespaces/db/tables/%2E%2E",
        "/v1/namespaces/db/tables/a%00b", "/v1/namespaces/%zz", "/v1/namespaces/%ff",
        "/v1/namespaces/db/tables/a%2"}) {
    ExpectError(Get(path), 400, "BadRequestException");
    ExpectAlive();
  }
  for (const char* name : {"..", "a/b", "x.y"}) {
    ExpectError(Post("/v1/namespaces/db/tables",
                     Json{{"name", name}, {"schema", Json::parse(kSchemaJson)}}),
                400, "BadRequestException");
  }
  ExpectError(
      Post("/v1/namespaces/db/tables", Json{{"name", "t"},
                                            {"location", "file:///etc"},
                                            {"schema", Json::parse(kSchemaJson)}}),
      400, "BadRequestException");
  EXPECT_EQ(BodyOf(Get("/v1/namespaces"))["namespaces"], Json::array({Json({"db"})}));
}

TEST_F(RestServerTest, UnknownRoutesAndMethods) {
  ExpectError(Get("/v1/nope"), 404, "NotFoundException");
  ExpectError(Get("/"), 404, "NotFoundException");
  ExpectError(Get("/v1/namespaces/db/tables/t/unknown"), 404, "NotFoundException");
  auto r = client_->Put("/v1/namespaces", "{}", "application/json");
  ExpectError(r, 405, "UnsupportedOperationException");
  EXPECT_EQ(r->get_header_value("Allow"), "GET, POST");
  ExpectError(Delete("/v1/config"), 405, "UnsupportedOperationException");
  EXPECT_EQ(Head("/v1/config")->status, 200);  // HEAD of a GET resource
  ExpectAlive();
}

TEST_F(RestServerTest, ServerFaultsAre5xxAndBadRequests400) {
  CreateNamespace({"db"});
  CreateTable("db", "t");
  // A storage outage reading the table's metadata: 503, which clients retry.
  faulty_->FailReads(Retriable("object store timed out"));
  ExpectError(Get("/v1/namespaces/db/tables/t"), 503, "ServiceUnavailableException");
  // An unexpected failure is the server's, not the client's.
  faulty_->FailReads(Internal("unexpected library error"));
  ExpectError(Get("/v1/namespaces/db/tables/t"), 500, "ServiceFailureException");
  // So is a table whose metadata file is gone (a broken table, not a missing one).
  faulty_->FailReads(NotFound("no such file"));
  ExpectError(Get("/v1/namespaces/db/tables/t"), 500, "ServiceFailureException");
  faulty_->FailReads(Status::OK());
  EXPECT_EQ(Get("/v1/namespaces/db/tables/t")->status, 200);
  // A malformed body is the client's fault.
  ExpectError(Post("/v1/namespaces/db/tables/t", std::string("{\"updates\": [}")), 400,
              "BadRequestException");
  ExpectError(Post("/v1/namespaces/db/tables/t",
                   Json{{"updates", Json::array({{{"action", "no-such-update"}}})}}),
              400, "BadRequestException");
}

TEST_F(RestServerTest, ExtraRouteSetsAreServedBesideIceberg) {
  std::vector<std::unique_ptr<RouteSet>> extra;
  extra.push_back(std::make_unique<PingRoutes>());
  StartServer(RestOptions{}, std::move(extra));
  auto r = Get("/v1/floe/ping");
  ASSERT_TRUE(r) << httplib::to_string(r.error());
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(BodyOf(r)["pong"], true);
  EXPECT_EQ(r->get_header_value("Content-Type"), "application/json");
  EXPECT_EQ(Head("/v1/floe/ping")->status, 200);
  auto post = Post("/v1/floe/ping", std::string("{}"));
  ExpectError(post, 405, "UnsupportedOperationException");
  EXPECT_EQ(post->get_header_value("Allow"), "GET");
  // The Iceberg routes are unchanged, and do not advertise the others.
  ExpectAlive();
  CreateNamespace({"db"});
  for (const auto& e : BodyOf(Get("/v1/config"))["endpoints"]) {
    EXPECT_EQ(e.get<std::string>().find("floe"), std::string::npos) << e;
  }

  // Every route set's errors map by kind (server/README.md).
  const std::pair<const char*, std::pair<int, const char*>> kCases[] = {
      {"retriable", {503, "ServiceUnavailableException"}},
      {"arrow-io", {503, "ServiceUnavailableException"}},
      {"state-unknown", {500, "CommitStateUnknownException"}},
      {"internal", {500, "ServiceFailureException"}},
      {"invalid-record", {500, "ServiceFailureException"}},
      {"invalid-input", {400, "BadRequestException"}},
      {"arrow-invalid", {400, "BadRequestException"}},
      {"not-found", {404, "NotFoundException"}},
      {"conflict", {409, "AlreadyExistsException"}},
      {"forbidden", {403, "ForbiddenException"}},
  };
  for (const auto& [kind, expected] : kCases) {
    SCOPED_TRACE(kind);
    ExpectError(Get(std::string("/v1/floe/fail/") + kind), expected.first,
                expected.second);
  }
  ExpectAlive();
}

TEST_F(RestServerTest, DeleteWithoutContentLengthAnswersAtOnce) {
  // httplib's client sends DELETE without Content-Length, as Java's does.
  CreateNamespace({"db"});
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(Delete("/v1/namespaces/db")->status, 204);
  // Waiting for a body would last until the 30 s body deadline; 5 s tells the two apart
  // with the machine's other core busy.
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST_F(RestServerTest, ConcurrentClients) {
  CreateNamespace({"db"});
  CreateTable("db", "t");
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&] {
      auto c = NewClient();
      for (int k = 0; k < 10; ++k) {
        auto r = c->Get("/v1/namespaces/db/tables/t");
        if (r && r->status == 200) ++ok;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 40);
}

TEST_F(RestServerTest, AmbiguousOrOversizedFramingIsRefusedBeforeReading) {
  const int port = server_->port();
  const std::string head =
      "POST /v1/namespaces HTTP/1.1\r\nHost: x\r\nConnection: close\r\n";
  EXPECT_EQ(RawStatus(port, head + "Content-Length: abc\r\n\r\n{}"), 400);
  EXPECT_EQ(RawStatus(port, head + "Content-Length: -1\r\n\r\n{}"), 400);
  EXPECT_EQ(RawStatus(port, head + "Content-Length: 2\r\nContent-Length: 40\r\n\r\n{}"),
            400);
  EXPECT_EQ(
      RawStatus(port, head + "Content-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n{}"),
      400);
  EXPECT_EQ(RawStatus(port, head + "Transfer-Encoding: gzip\r\n\r\n{}"), 400);
  EXPECT_EQ(
      RawStatus(port, head + "Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n"),
      400);
  // Refused at once, not after reading (or waiting for) 4 EiB.
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(RawStatus(port, head + "Content-Length: 4611686018427387904\r\n\r\n{}"), 413);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  std::string many = "GET /v1/config HTTP/1.1\r\nConnection: close\r\n";
  for (int i = 0; i < 200; ++i) many += "X-H" + std::to_string(i) + ": v\r\n";
  EXPECT_EQ(RawStatus(port, many + "\r\n"), 431);
  EXPECT_EQ(RawStatus(port, std::string("GET /v1/con\0fig HTTP/1.1\r\n\r\n", 28)), 400);
  EXPECT_EQ(RawStatus(port, "GET /v1/config HTTP/9.9\r\n\r\n"), 400);
  EXPECT_EQ(
      RawStatus(port,
                "GET /v1/namespaces/%C0%AE%C0%AE HTTP/1.1\r\nConnection: close\r\n\r\n"),
      400);
  ExpectAlive();
}

TEST_F(RestServerTest, StalledClientsDoNotStarveOthers) {
  // More half-sent requests than warm threads (4 in these tests).
  std::vector<int> stalled;
  for (int i = 0; i < 12; ++i) {
    int fd = Connect(server_->port());
    ASSERT_GE(fd, 0);
    std::string part =
        i % 2 ? "GET /v1/conf"
              : "POST /v1/namespaces HTTP/1.1\r\nContent-Length: 100\r\n\r\n{";
    (void)::send(fd, part.data(), part.size(), MSG_NOSIGNAL);
    stalled.push_back(fd);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  auto start = std::chrono::steady_clock::now();
  ExpectAlive();
  // Starved, it would be served only when the 10 s header deadline frees a thread; 5 s
  // tells the two apart with the machine's other core busy.
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  for (int fd : stalled) ::close(fd);
}

TEST_F(RestServerTest, ConnectionCapsPerClientAndInTotal) {
  RestOptions options;
  options.max_connections_per_client = 4;
  options.max_connections = 8;
  // The stalled connections must outlive the whole test, also on a loaded machine: the
  // header deadline (HeadersAndBodiesHaveDeadlines) would otherwise close them and empty
  // the server before the caps are reached.
  options.header_timeout_s = 300;
  StartServer(options);
  const int port = server_->port();
  // Four stalled connections from one client: the fifth is refused at once (429).
  std::vector<int> stalled;
  for (int i = 0; i < 4; ++i) {
    int fd = ConnectFrom("127.0.0.2", port);
    ASSERT_GE(fd, 0);
    (void)::send(fd, "GET /v1/conf", 12, MSG_NOSIGNAL);
    stalled.push_back(fd);
  }
  // Not a sleep: under load the server may take a while to accept them.
  auto accepted = [&](int n) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (server_->OpenConnections() < n &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return server_->OpenConnections();
  };
  ASSERT_EQ(accepted(4), 4);
  int over = ConnectFrom("127.0.0.2", port);
  ASSERT_GE(over, 0);
  EXPECT_EQ(ReadStatus(over), 429);
  ::close(over);
  // Another client is served (not after the 10 s header deadline; a busy core's margin).
  auto start = std::chrono::steady_clock::now();
  ExpectAlive();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  // The total cap: 4 more from a third address fill it (the test client closes its
  // connections), the next is refused with 503.
  for (int i = 0; i < 4; ++i) {
    int fd = ConnectFrom("127.0.0.3", port);
    ASSERT_GE(fd, 0);
    stalled.push_back(fd);
  }
  ASSERT_EQ(accepted(8), 8);
  int full = ConnectFrom("127.0.0.4", port);
  ASSERT_GE(full, 0);
  EXPECT_EQ(ReadStatus(full), 503);
  ::close(full);
  for (int fd : stalled) ::close(fd);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  client_ = NewClient();
  ExpectAlive();
}

TEST_F(RestServerTest, HeadersAndBodiesHaveDeadlines) {
  RestOptions options;
  options.header_timeout_s = 1;
  options.body_timeout_s = 1;
  StartServer(options);
  const int port = server_->port();
  for (std::string part : {std::string("GET /v1/config HTTP/1.1\r\nX-Slow: "),
                           std::string("POST /v1/namespaces HTTP/1.1\r\n"
                                       "Content-Length: 100\r\n\r\n{"),
                           std::string()}) {
    int fd = Connect(port);
    ASSERT_GE(fd, 0);
    if (!part.empty()) (void)::send(fd, part.data(), part.size(), MSG_NOSIGNAL);
    auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(ReadStatus(fd), 408) << part;
    auto waited = std::chrono::steady_clock::now() - start;
    // Never before the 1 s deadline; after it within a margin that holds with the other
    // core busy (the loop looks at deadlines every second).
    EXPECT_GE(waited, std::chrono::milliseconds(800)) << part;
    EXPECT_LT(waited, std::chrono::seconds(6)) << part;
    ::close(fd);
  }
  // A slow but steady client that finishes in time is served: three pieces 100 ms
  // apart leave 800 ms of the 1 s deadline to a busy machine's scheduling.
  int fd = Connect(port);
  ASSERT_GE(fd, 0);
  for (std::string piece :
       {"GET /v1/con", "fig HTTP/1.1\r\nHost: x\r\n", "Connection: close\r\n\r\n"}) {
    (void)::send(fd, piece.data(), piece.size(), MSG_NOSIGNAL);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(ReadStatus(fd), 200);
  ::close(fd);
}

TEST_F(RestServerTest, KeepAliveAndPipelinedRequestsAreServedInOrder) {
  int fd = Connect(server_->port());
  ASSERT_GE(fd, 0);
  std::string two =
      "GET /v1/config HTTP/1.1\r\nHost: x\r\n\r\n"
      "GET /v1/namespaces/none HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
  (void)::send(fd, two.data(), two.size(), MSG_NOSIGNAL);
  std::string response;
  char buf[4096];
  while (true) {
    ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) break;
    response.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  size_t first = response.find("HTTP/1.1 200");
  size_t second = response.find("HTTP/1.1 404");
  EXPECT_EQ(first, 0u) << response;
  EXPECT_NE(second, std::string::npos) << response;
  // A body sent with a request answered without reading it (401) is not taken for the
  // next request.
  headers_ = {};
  RestOptions options;
  options.auth_tokens = {"secret"};
  StartServer(options);
  fd = Connect(server_->port());
  ASSERT_GE(fd, 0);
  std::string smuggle = "GET /v1/config HTTP/1.1\r\nHost: x\r\n\r\n";
  std::string req = "POST /v1/namespaces HTTP/1.1\r\nContent-Length: " +
                    std::to_string(smuggle.size()) + "\r\n\r\n" + smuggle +
                    "GET /v1/config HTTP/1.1\r\nConnection: close\r\n\r\n";
  (void)::send(fd, req.data(), req.size(), MSG_NOSIGNAL);
  response.clear();
  while (true) {
    ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) break;
    response.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  size_t answers = 0;
  for (size_t at = response.find("HTTP/1.1 401"); at != std::string::npos;
       at = response.find("HTTP/1.1 ", at + 1)) {
    ++answers;
  }
  EXPECT_EQ(answers, 2u) << response;
}

TEST_F(RestServerTest, StopIsIdempotentAndRefusesAfterwards) {
  int port = server_->port();
  server_->Stop();
  server_->Stop();
  httplib::Client c("127.0.0.1", port);
  c.set_connection_timeout(1, 0);
  EXPECT_FALSE(c.Get("/v1/config"));
}

TEST_F(RestServerTest, StartRejectsBadOptionsAndBusyPorts) {
  RestOptions options;
  options.threads = 0;
  EXPECT_EQ(KindOf(RestServer::Start(catalog_.get(), options).status()),
            ErrorKind::kInvalidConfig);
  options = RestOptions{};
  for (const char* bad : {"", "a b", "50%", "tok\n", "=abc"}) {
    options.auth_tokens = {"good-token", bad};
    EXPECT_EQ(KindOf(RestServer::Start(catalog_.get(), options).status()),
              ErrorKind::kInvalidConfig)
        << bad;
    options.auth_tokens = {"good-token"};
    options.read_tokens = {bad};
    EXPECT_EQ(KindOf(RestServer::Start(catalog_.get(), options).status()),
              ErrorKind::kInvalidConfig)
        << bad;
    options.read_tokens.clear();
  }
  options = RestOptions{};
  options.port = server_->port();  // taken
  EXPECT_EQ(KindOf(RestServer::Start(catalog_.get(), options).status()),
            ErrorKind::kInvalidConfig);
}

}  // namespace
}  // namespace floe::server
