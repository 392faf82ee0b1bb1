// The admin routes (admin_routes.h) over a scripted TopicAdmin, through a real
// RestServer: the JSON an operator reads, resume and its errors, and bearer tokens (read
// tokens may GET, never POST).
#include "floe/server/admin_routes.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <mutex>
#include <nlohmann/json.hpp>

#include "floe/server/rest_server.h"

namespace floe::server {
namespace {

using Json = ::nlohmann::json;

class FakeAdmin : public TopicAdmin {
 public:
  Result<std::vector<TopicInfo>> List() override {
    std::lock_guard<std::mutex> lock(mu);
    if (!list_status.ok()) return list_status;
    return topics;
  }
  Status Resume(const std::string& topic, bool skip) override {
    std::lock_guard<std::mutex> lock(mu);
    calls.emplace_back(topic, skip);
    if (resume_status.ok()) {
      for (auto& t : topics) {
        if (t.topic == topic) t.state = "resuming";
      }
    }
    return resume_status;
  }
  Status Reload() override {
    std::lock_guard<std::mutex> lock(mu);
    ++reloads;
    return reload_status;
  }

  std::mutex mu;
  std::vector<TopicInfo> topics;
  Status list_status;
  Status resume_status;
  Status reload_status;
  int reloads = 0;
  std::vector<std::pair<std::string, bool>> calls;
};

TopicInfo Suspended() {
  TopicInfo t;
  t.topic = "orders";
  t.table = "kafka.orders";
  t.state = "suspended";
  t.reason = "topic orders partition 1 offset 41: schema 7 does not fit table";
  t.schema_id = 7;
  t.partition = 1;
  t.offset = 41;
  t.since_ms = 1'000'000;
  t.partitions = {{0, 10, 15, 5}, {1, 41, 50, 9}};
  t.last_commit_ms = 990'000;
  t.skipped_records = 2;
  t.committed_records = 51;
  t.skip_schema_ids = {3};
  t.skip_records = {{0, 4}};
  return t;
}

TopicInfo Running() {
  TopicInfo t;
  t.topic = "other";
  t.table = "kafka.other";
  t.state = "running";
  t.partitions = {{0, -1, 20, -1}};
  return t;
}

class AdminRoutesTest : public ::testing::Test {
 protected:
  void SetUp() override { Start(RestOptions{}); }

  void Start(RestOptions options) {
    server_.reset();
    admin_.topics = {Suspended(), Running()};
    options.port = 0;
    options.threads = 2;
    std::vector<std::unique_ptr<RouteSet>> sets;
    sets.push_back(MakeAdminRoutes(&admin_, [] { return int64_t{1'000'500}; }));
    auto server = RestServer::Start(std::move(sets), std::move(options));
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(*server);
    client_ = std::make_unique<httplib::Client>("127.0.0.1", server_->port());
  }

  httplib::Result Get(const std::string& path, const std::string& token = "") {
    httplib::Headers h;
    if (!token.empty()) h.emplace("Authorization", "Bearer " + token);
    return client_->Get(path.c_str(), h);
  }
  httplib::Result Post(const std::string& path, const std::string& token = "") {
    httplib::Headers h;
    if (!token.empty()) h.emplace("Authorization", "Bearer " + token);
    return client_->Post(path.c_str(), h, "", "application/json");
  }
  static void ExpectError(const httplib::Result& r, int code, const std::string& type) {
    ASSERT_TRUE(r) << httplib::to_string(r.error());
    EXPECT_EQ(r->status, code) << r->body;
    Json j = Json::parse(r->body, nullptr, false);
    ASSERT_TRUE(j.is_object()) << r->body;
    EXPECT_EQ(j["error"]["code"], code);
    EXPECT_EQ(j["error"]["type"], type) << r->body;
    EXPECT_TRUE(j["error"]["message"].is_string());
  }

  FakeAdmin admin_;
  std::unique_ptr<RestServer> server_;
  std::unique_ptr<httplib::Client> client_;
};

TEST_F(AdminRoutesTest, ListsEveryTopicWithStatePositionsAndLag) {
  auto r = Get("/floe/v1/topics");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(r->get_header_value("Content-Type"), "application/json");
  Json j = Json::parse(r->body);
  ASSERT_EQ(j["topics"].size(), 2u);
  const Json& t = j["topics"][0];
  EXPECT_EQ(t["topic"], "orders");
  EXPECT_EQ(t["table"], "kafka.orders");
  EXPECT_EQ(t["state"], "suspended");
  EXPECT_EQ(t["reason"], Suspended().reason);
  EXPECT_EQ(t["schema-id"], 7);
  EXPECT_EQ(t["partition"], 1);
  EXPECT_EQ(t["offset"], 41);
  EXPECT_EQ(t["since-ms"], 1'000'000);
  EXPECT_EQ(t["last-commit-ms"], 990'000);
  EXPECT_EQ(t["last-commit-age-ms"], 10'500);
  EXPECT_EQ(t["lag"], 14);
  EXPECT_TRUE(t["compatibility"].is_null());
  ASSERT_EQ(t["partitions"].size(), 2u);
  // A suspended topic's partitions are not being read: no consumed offset, no read lag.
  EXPECT_EQ(t["partitions"][1], (Json{{"partition", 1},
                                      {"committed", 41},
                                      {"consumed", nullptr},
                                      {"high-watermark", 50},
                                      {"lag", 9},
                                      {"read-lag", nullptr}}));
  EXPECT_EQ(t["records-skipped"], 2);
  EXPECT_EQ(t["records-committed"], 51);
  EXPECT_EQ(t["skip"]["schema-ids"], Json::array({3}));
  EXPECT_EQ(t["skip"]["records"], Json::parse(R"([{"partition":0,"offset":4}])"));
  const Json& o = j["topics"][1];
  EXPECT_EQ(o["state"], "running");
  EXPECT_TRUE(o["reason"].is_null());
  EXPECT_TRUE(o["schema-id"].is_null());
  EXPECT_TRUE(o["lag"].is_null());  // a partition without a position: unknown
  EXPECT_TRUE(o["partitions"][0]["committed"].is_null());
  EXPECT_EQ(o["partitions"][0]["high-watermark"], 20);
  EXPECT_TRUE(o["last-commit-age-ms"].is_null());
}

TEST_F(AdminRoutesTest, OneTopicAndUnknownTopics) {
  auto r = Get("/floe/v1/topics/other");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200);
  EXPECT_EQ(Json::parse(r->body)["topic"], "other");
  ExpectError(Get("/floe/v1/topics/nope"), 404, kNoSuchTopic);
  // Not under the Iceberg prefix.
  ExpectError(Get("/v1/topics"), 404, kNotFoundType);
}

TEST_F(AdminRoutesTest, ResumeAndResumeWithSkip) {
  auto r = Post("/floe/v1/topics/orders/resume");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(Json::parse(r->body)["state"], "resuming");
  r = Post("/floe/v1/topics/orders/resume?skip-incompatible=true");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  r = Post("/floe/v1/topics/orders/resume?skip-incompatible=false");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  ExpectError(Post("/floe/v1/topics/orders/resume?skip-incompatible=yes"), 400,
              kBadRequest);
  EXPECT_EQ(admin_.calls, (std::vector<std::pair<std::string, bool>>{
                              {"orders", false}, {"orders", true}, {"orders", false}}));
  ExpectError(Get("/floe/v1/topics/orders/resume"), 405, kUnsupported);
}

TEST_F(AdminRoutesTest, ResumeErrorsAreClearJson) {
  admin_.resume_status = NotFound("topic nope is not ingested");
  ExpectError(Post("/floe/v1/topics/nope/resume"), 404, kNoSuchTopic);
  admin_.resume_status = Conflict("topic other is running, not suspended");
  ExpectError(Post("/floe/v1/topics/other/resume"), 409, kTopicNotSuspended);
  admin_.resume_status = InvalidInput("nothing to skip");
  ExpectError(Post("/floe/v1/topics/orders/resume?skip-incompatible=true"), 400,
              kBadRequest);
  admin_.resume_status = Retriable("the pipeline did not answer");
  ExpectError(Post("/floe/v1/topics/orders/resume"), 503, kServiceUnavailable);
  admin_.list_status = Retriable("starting");
  ExpectError(Get("/floe/v1/topics"), 503, kServiceUnavailable);
}

TEST_F(AdminRoutesTest, ReloadAnswers204OrTheConfigErrorAs400) {
  auto r = Post("/floe/v1/reload");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 204) << r->body;
  admin_.reload_status =
      InvalidConfig("floe.yaml:7: topics[1].comit.interval.ms: unknown key");
  r = Post("/floe/v1/reload");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  EXPECT_NE(r->body.find("topics[1].comit.interval.ms"), std::string::npos) << r->body;
  admin_.reload_status = Retriable("the pipeline did not answer");
  ExpectError(Post("/floe/v1/reload"), 503, kServiceUnavailable);
  EXPECT_EQ(admin_.reloads, 3);
}

TEST_F(AdminRoutesTest, ReadTokensMayListButNotResume) {
  RestOptions options;
  options.auth_tokens = {"admin-token"};
  options.read_tokens = {"reader-token"};
  Start(options);
  ExpectError(Get("/floe/v1/topics"), 401, kNotAuthorized);
  ExpectError(Post("/floe/v1/topics/orders/resume"), 401, kNotAuthorized);
  auto r = Get("/floe/v1/topics", "reader-token");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  ExpectError(Post("/floe/v1/topics/orders/resume", "reader-token"), 403, kForbiddenType);
  EXPECT_TRUE(admin_.calls.empty());
  r = Post("/floe/v1/topics/orders/resume?skip-incompatible=true", "admin-token");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  r = Get("/floe/v1/topics/orders", "admin-token");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(admin_.calls.size(), 1u);
}

}  // namespace
}  // namespace floe::server
