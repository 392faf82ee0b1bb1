// The operations routes (ops_routes.h) through a real RestServer: the probes' answers,
// /metrics' content type, and tokens (the probes need none, /metrics does when tokens
// are configured, read tokens suffice).
#include "floe/server/ops_routes.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <nlohmann/json.hpp>

#include "floe/server/rest_server.h"

namespace floe::server {
namespace {

using Json = ::nlohmann::json;

class OpsRoutesTest : public ::testing::Test {
 protected:
  void Start(RestOptions options) {
    OpsChecks checks;
    checks.metrics = [] { return std::string("# TYPE floe_up gauge\nfloe_up 1\n"); };
    checks.not_alive = [this] {
      return alive_.load() ? std::vector<std::string>{}
                           : std::vector<std::string>{"the pipeline loop is stuck"};
    };
    checks.not_ready = [this] {
      return ready_.load() ? std::vector<std::string>{}
                           : std::vector<std::string>{"kafka: unreachable", "topic x"};
    };
    std::vector<std::unique_ptr<RouteSet>> sets;
    sets.push_back(MakeOpsRoutes(std::move(checks)));
    options.port = 0;
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

  std::atomic<bool> alive_{true};
  std::atomic<bool> ready_{true};
  std::unique_ptr<RestServer> server_;
  std::unique_ptr<httplib::Client> client_;
};

TEST_F(OpsRoutesTest, ProbesSayOkOrWhyNot) {
  Start(RestOptions{});
  auto r = Get("/health");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(Json::parse(r->body)["status"], "ok");
  EXPECT_EQ(Get("/ready")->status, 200);
  ready_ = false;
  r = Get("/ready");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 503);
  auto body = Json::parse(r->body);
  EXPECT_EQ(body["status"], "unavailable");
  EXPECT_EQ(body["reasons"], Json::array({"kafka: unreachable", "topic x"}));
  EXPECT_EQ(Get("/health")->status, 200);  // alive, not ready
  alive_ = false;
  EXPECT_EQ(Get("/health")->status, 503);
  EXPECT_EQ(Get("/health?verbose=1")->status, 503);
}

TEST_F(OpsRoutesTest, MetricsAreTextExposition) {
  Start(RestOptions{});
  auto r = Get("/metrics");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->get_header_value("Content-Type"),
            "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_EQ(r->body, "# TYPE floe_up gauge\nfloe_up 1\n");
}

TEST_F(OpsRoutesTest, ProbesNeedNoTokenMetricsDo) {
  RestOptions options;
  options.auth_tokens = {"full-token"};
  options.read_tokens = {"read-token"};
  Start(options);
  EXPECT_EQ(Get("/health")->status, 200);
  EXPECT_EQ(Get("/ready")->status, 200);
  EXPECT_EQ(Get("/metrics")->status, 401);
  EXPECT_EQ(Get("/metrics", "wrong")->status, 401);
  EXPECT_EQ(Get("/metrics", "read-token")->status, 200);
  EXPECT_EQ(Get("/metrics", "full-token")->status, 200);
  // Only GET and HEAD pass without a token, and only on the probes' own paths.
  EXPECT_EQ(client_->Post("/health", "", "text/plain")->status, 401);
  EXPECT_EQ(Get("/healthz")->status, 401);
  EXPECT_EQ(Get("/ready/x")->status, 401);
}

}  // namespace
}  // namespace floe::server
