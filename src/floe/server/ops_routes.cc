#include "floe/server/ops_routes.h"

#include <nlohmann/json.hpp>
#include <utility>

#include "floe/common/json.h"

namespace floe::server {
namespace {

using Json = ::nlohmann::json;

constexpr const char* kHealth = "/health";
constexpr const char* kReady = "/ready";

void SendProbe(const std::vector<std::string>& reasons, HttpResponse* res) {
  if (reasons.empty()) {
    res->SendJson(200, json::Dump(Json{{"status", "ok"}}));
  } else {
    res->SendJson(503, json::Dump(Json{{"status", "unavailable"}, {"reasons", reasons}}));
  }
  res->SetHeader("Cache-Control", "no-store");
}

class OpsRoutes : public RouteSet {
 public:
  explicit OpsRoutes(OpsChecks checks) : checks_(std::move(checks)) {}

  std::vector<Route> Routes() override {
    std::vector<Route> routes = {
        {"GET", kHealth,
         [this](const HttpRequest&, HttpResponse* res) {
           SendProbe(checks_.not_alive ? checks_.not_alive() : std::vector<std::string>{},
                     res);
           return Status::OK();
         }},
        {"GET", kReady,
         [this](const HttpRequest&, HttpResponse* res) {
           SendProbe(checks_.not_ready ? checks_.not_ready() : std::vector<std::string>{},
                     res);
           return Status::OK();
         }},
    };
    if (checks_.metrics) {
      routes.push_back({"GET", "/metrics", [this](const HttpRequest&, HttpResponse* res) {
                          res->status = 200;
                          res->body = checks_.metrics();
                          res->content_type = "text/plain; version=0.0.4; charset=utf-8";
                          res->SetHeader("Cache-Control", "no-store");
                          return Status::OK();
                        }});
    }
    return routes;
  }

 private:
  OpsChecks checks_;
};

}  // namespace

std::unique_ptr<RouteSet> MakeOpsRoutes(OpsChecks checks) {
  return std::make_unique<OpsRoutes>(std::move(checks));
}

bool IsProbePath(std::string_view target) {
  const std::string_view path = target.substr(0, target.find('?'));
  return path == kHealth || path == kReady;
}

}  // namespace floe::server
