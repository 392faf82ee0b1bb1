// The registry client against the in-repo Confluent-compatible registry
// (tools/registry/floe_registry.py), started as a real process on loopback: lookups by
// id, GUID and subject version, the cache, schema types and references, and the error
// kinds the pipeline reacts to (not found, outage, unauthorized, unreachable).
#include "floe/registry/client.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <string>

namespace floe::registry {
namespace {

// One registry process; stopped with SIGTERM when the object goes away.
class RegistryProcess {
 public:
  explicit RegistryProcess(const std::string& basic_auth = "") {
    int fds[2];
    if (::pipe(fds) != 0) throw std::runtime_error("pipe");
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(fds[1], 1);
      ::close(fds[0]);
      const std::string script =
          std::string(FLOE_SOURCE_DIR) + "/tools/registry/floe_registry.py";
      if (basic_auth.empty()) {
        ::execlp("python3", "python3", "-u", script.c_str(), "--host", "127.0.0.1",
                 "--port", "0", static_cast<char*>(nullptr));
      } else {
        ::execlp("python3", "python3", "-u", script.c_str(), "--host", "127.0.0.1",
                 "--port", "0", "--basic-auth", basic_auth.c_str(),
                 static_cast<char*>(nullptr));
      }
      ::_exit(127);
    }
    ::close(fds[1]);
    std::string out;
    char c;
    while (::read(fds[0], &c, 1) == 1) {
      if (c != '\n') {
        out += c;
        continue;
      }
      if (out.rfind("LISTENING ", 0) == 0) {
        port_ = std::stoi(out.substr(10));
        break;
      }
      out.clear();
    }
    out_fd_ = fds[0];
    if (port_ == 0) throw std::runtime_error("floe_registry did not start");
  }
  ~RegistryProcess() {
    ::kill(pid_, SIGTERM);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    ::close(out_fd_);
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int port() const { return port_; }

  // Registers a schema under `subject`; returns {id, guid}.
  std::pair<int, std::string> Register(const std::string& subject,
                                       const nlohmann::json& body,
                                       const std::string& auth = "") {
    httplib::Client cli("127.0.0.1", port_);
    if (!auth.empty()) {
      auto colon = auth.find(':');
      cli.set_basic_auth(auth.substr(0, colon), auth.substr(colon + 1));
    }
    auto res = cli.Post("/subjects/" + subject + "/versions", body.dump(),
                        "application/vnd.schemaregistry.v1+json");
    if (!res || res->status != 200) throw std::runtime_error("register failed");
    auto j = nlohmann::json::parse(res->body);
    return {j["id"].get<int>(), j.value("guid", std::string())};
  }
  // GET requests the registry served for `path_prefix` (its /__admin/requests log).
  int Requests(const std::string& path_prefix) {
    httplib::Client cli("127.0.0.1", port_);
    auto res = cli.Get("/__admin/requests");
    int n = 0;
    for (const auto& r : nlohmann::json::parse(res->body)) {
      if (r["path"].get<std::string>().rfind(path_prefix, 0) == 0) n++;
    }
    return n;
  }
  void Outage(int status, int count) {
    httplib::Client cli("127.0.0.1", port_);
    nlohmann::json body = {{"status", status}, {"count", count}};
    cli.Post("/__admin/outage", body.dump(), "application/json");
  }

 private:
  pid_t pid_ = -1;
  int port_ = 0;
  int out_fd_ = -1;
};

// A record schema; different names make different schemas (and ids).
std::string Avro(const std::string& name) {
  return R"({"type":"record","name":")" + name +
         R"(","fields":[{"name":"id","type":"long"}]})";
}

std::unique_ptr<SchemaSource> Client(const std::string& url,
                                     const std::string& auth = "") {
  ClientOptions o;
  o.url = url;
  o.basic_auth_user_info = auth;
  o.timeout_ms = 3000;
  return *MakeRegistryClient(o);
}

class RegistryClientTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { registry_ = new RegistryProcess(); }
  static void TearDownTestSuite() { delete registry_; }
  static RegistryProcess* registry_;
};
RegistryProcess* RegistryClientTest::registry_ = nullptr;

TEST_F(RegistryClientTest, FetchesById) {
  auto [id, guid] = registry_->Register("by-id-value", {{"schema", Avro("plain")}});
  auto client = Client(registry_->url());
  auto s = client->ById(id);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ((*s)->id, id);
  EXPECT_EQ((*s)->type, SchemaType::kAvro);  // schemaType absent = AVRO
  EXPECT_NE((*s)->schema.find("\"name\":\"plain\""), std::string::npos);
}

TEST_F(RegistryClientTest, SubjectVersionsOfAnId) {
  const std::string text = Avro("shared_between_subjects");
  auto [id, guid] = registry_->Register("first-value", {{"schema", text}});
  auto client = Client(registry_->url());
  auto subjects = client->SubjectVersionsOf(id);
  ASSERT_TRUE(subjects.ok()) << subjects.status().ToString();
  EXPECT_EQ(*subjects, (std::vector<SubjectVersion>{{"first-value", 1}}));
  // The same schema under a second subject keeps its id; the answer is not cached.
  auto [again, guid2] = registry_->Register("second-value", {{"schema", text}});
  ASSERT_EQ(again, id);
  subjects = client->SubjectVersionsOf(id);
  ASSERT_TRUE(subjects.ok()) << subjects.status().ToString();
  EXPECT_EQ(*subjects,
            (std::vector<SubjectVersion>{{"first-value", 1}, {"second-value", 1}}));
  EXPECT_EQ(KindOf(client->SubjectVersionsOf(999999).status()), ErrorKind::kNotFound);
}

TEST_F(RegistryClientTest, CachesIdsForever) {
  auto [id, guid] = registry_->Register("cached-value", {{"schema", Avro("cached")}});
  auto client = Client(registry_->url());
  const std::string path = "/schemas/ids/" + std::to_string(id);
  const int before = registry_->Requests(path);
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(client->ById(id).ok());
  EXPECT_EQ(registry_->Requests(path) - before, 1);
}

TEST_F(RegistryClientTest, FetchesByGuid) {
  auto [id, guid] = registry_->Register("by-guid-value", {{"schema", Avro("guid")}});
  ASSERT_FALSE(guid.empty());
  auto s = Client(registry_->url())->ByGuid(guid);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ((*s)->id, id);
}

TEST_F(RegistryClientTest, SchemaTypesAndReferences) {
  registry_->Register(
      "common.proto",
      {{"schemaType", "PROTOBUF"},
       {"schema", "syntax = \"proto3\"; message Money { int64 units = 1; }"}});
  auto [id, guid] = registry_->Register(
      "orders-pb-value",
      {{"schemaType", "PROTOBUF"},
       {"schema",
        "syntax = \"proto3\"; import \"common.proto\"; message Order { Money m = 1; }"},
       {"references",
        {{{"name", "common.proto"}, {"subject", "common.proto"}, {"version", 1}}}}});
  auto s = Client(registry_->url())->ById(id);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ((*s)->type, SchemaType::kProtobuf);
  EXPECT_EQ((*s)->type_name, "PROTOBUF");
  ASSERT_EQ((*s)->references.size(), 1u);
  EXPECT_EQ((*s)->references[0].subject, "common.proto");
  EXPECT_EQ((*s)->references[0].version, 1);
  auto json_id = registry_
                     ->Register("json-value", {{"schemaType", "JSON"},
                                               {"schema", R"({"type":"object"})"}})
                     .first;
  EXPECT_EQ((*Client(registry_->url())->ById(json_id))->type, SchemaType::kJson);
}

TEST_F(RegistryClientTest, LatestVersionIsAskedEachTimeAFixedOneOnce) {
  registry_->Register("versions-value", {{"schema", Avro("plain")}});
  auto client = Client(registry_->url());
  const std::string latest = "/subjects/versions-value/versions/latest";
  const std::string first = "/subjects/versions-value/versions/1";
  const int l0 = registry_->Requests(latest), f0 = registry_->Requests(first);
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(client->BySubjectVersion("versions-value", 0).ok());
    ASSERT_TRUE(client->BySubjectVersion("versions-value", 1).ok());
  }
  EXPECT_EQ(registry_->Requests(latest) - l0, 3);
  EXPECT_EQ(registry_->Requests(first) - f0, 1);
  auto s = client->BySubjectVersion("versions-value", 1);
  EXPECT_EQ((*s)->version, 1);
}

TEST_F(RegistryClientTest, WhatDoesNotExistIsNotFound) {
  auto client = Client(registry_->url());
  EXPECT_EQ(KindOf(client->ById(987654).status()), ErrorKind::kNotFound);
  EXPECT_EQ(KindOf(client->BySubjectVersion("no-such-subject", 0).status()),
            ErrorKind::kNotFound);
  EXPECT_EQ(KindOf(client->ByGuid("00000000-0000-0000-0000-000000000000").status()),
            ErrorKind::kNotFound);
}

TEST_F(RegistryClientTest, AnOutageIsRetriableAndPasses) {
  auto [id, guid] = registry_->Register("outage-value", {{"schema", Avro("outage")}});
  auto client = Client(registry_->url());
  registry_->Outage(503, 1);
  auto s = client->ById(id);
  EXPECT_EQ(KindOf(s.status()), ErrorKind::kRetriable) << s.status().ToString();
  EXPECT_TRUE(client->ById(id).ok());  // a failure is not cached
}

// GET /metrics' floe_registry_*: requests sent, the ones without an answer, cache hits.
TEST_F(RegistryClientTest, CountsRequestsErrorsAndCacheHits) {
  auto [id, guid] = registry_->Register("counted-value", {{"schema", Avro("counted")}});
  RegistryCounters counters;
  ClientOptions o;
  o.url = registry_->url();
  o.timeout_ms = 3000;
  o.counters = &counters;
  auto client = *MakeRegistryClient(o);
  registry_->Outage(503, 1);
  EXPECT_FALSE(client->ById(id).ok());                             // a request, an error
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(client->ById(id).ok());  // one request, 2 hits
  EXPECT_EQ(KindOf(client->ById(987655).status()), ErrorKind::kNotFound);  // an answer
  EXPECT_EQ(counters.requests.load(), 3);
  EXPECT_EQ(counters.errors.load(), 1);
  EXPECT_EQ(counters.cache_hits.load(), 2);
}

TEST_F(RegistryClientTest, CompatibilityIsTheSubjectsLevelElseTheGlobalOne) {
  registry_->Register("compat-value", {{"schema", Avro("compat")}});
  auto client = Client(registry_->url());
  auto global = client->Compatibility("compat-value");
  ASSERT_TRUE(global.ok()) << global.status().ToString();
  EXPECT_EQ(*global, "BACKWARD");  // the registry's default
  httplib::Client cli("127.0.0.1", registry_->port());
  auto put = cli.Put("/config/compat-value", R"({"compatibility":"FULL_TRANSITIVE"})",
                     "application/vnd.schemaregistry.v1+json");
  ASSERT_TRUE(put && put->status == 200);
  auto own = client->Compatibility("compat-value");
  ASSERT_TRUE(own.ok()) << own.status().ToString();
  EXPECT_EQ(*own, "FULL_TRANSITIVE");  // re-read, never cached
  // A subject nobody registered takes the global level.
  auto unknown = client->Compatibility("nobody-value");
  ASSERT_TRUE(unknown.ok()) << unknown.status().ToString();
  EXPECT_EQ(*unknown, "BACKWARD");
}

TEST(RegistryClient, AnUnreachableRegistryIsRetriable) {
  auto s = Client("http://127.0.0.1:1")->ById(1);
  EXPECT_EQ(KindOf(s.status()), ErrorKind::kRetriable) << s.status().ToString();
}

TEST(RegistryClient, CredentialsAreSentAndTheirAbsenceIsUnauthorized) {
  RegistryProcess secured("floe:secret");
  auto [id, guid] =
      secured.Register("auth-value", {{"schema", Avro("plain")}}, "floe:secret");
  EXPECT_EQ(KindOf(Client(secured.url())->ById(id).status()), ErrorKind::kUnauthorized);
  EXPECT_EQ(KindOf(Client(secured.url(), "floe:wrong")->ById(id).status()),
            ErrorKind::kUnauthorized);
  EXPECT_TRUE(Client(secured.url(), "floe:secret")->ById(id).ok());
}

}  // namespace
}  // namespace floe::registry
