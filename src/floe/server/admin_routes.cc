#include "floe/server/admin_routes.h"

#include <nlohmann/json.hpp>

#include "floe/common/json.h"
#include "floe/common/util.h"

namespace floe::server {
namespace {

using Json = ::nlohmann::json;

Json OrNull(int64_t v) { return v >= 0 ? Json(v) : Json(nullptr); }

Json TopicJson(const TopicInfo& t, int64_t now_ms) {
  Json j = Json::object();
  j["topic"] = t.topic;
  j["table"] = t.table;
  j["state"] = t.state;
  j["reason"] = t.reason.empty() ? Json(nullptr) : Json(t.reason);
  j["schema-id"] = OrNull(t.schema_id);
  j["partition"] = OrNull(t.partition);
  j["offset"] = OrNull(t.offset);
  j["since-ms"] = t.since_ms > 0 ? Json(t.since_ms) : Json(nullptr);
  j["last-commit-ms"] = t.last_commit_ms > 0 ? Json(t.last_commit_ms) : Json(nullptr);
  j["last-commit-age-ms"] = t.last_commit_ms > 0
                                ? Json(std::max<int64_t>(0, now_ms - t.last_commit_ms))
                                : Json(nullptr);
  j["compatibility"] = t.compatibility.empty() ? Json(nullptr) : Json(t.compatibility);
  // The topic's lag: the sum over its partitions, unknown if any partition's is.
  int64_t lag = 0;
  Json partitions = Json::array();
  for (const auto& p : t.partitions) {
    partitions.push_back(Json{{"partition", p.partition},
                              {"committed", OrNull(p.committed)},
                              {"consumed", OrNull(p.consumed)},
                              {"high-watermark", OrNull(p.high_watermark)},
                              {"lag", OrNull(p.lag)},
                              {"read-lag", OrNull(p.read_lag)}});
    lag = (lag < 0 || p.lag < 0) ? -1 : lag + p.lag;
  }
  j["lag"] = t.partitions.empty() ? Json(nullptr) : OrNull(lag);
  j["partitions"] = std::move(partitions);
  j["records-committed"] = t.committed_records;
  j["records-buffered"] = t.buffered_records;
  j["records-skipped"] = t.skipped_records;
  j["records-dead-lettered"] = t.dead_lettered_records;
  j["tombstones"] = t.tombstones;
  Json skip_records = Json::array();
  for (const auto& [p, o] : t.skip_records) {
    skip_records.push_back(Json{{"partition", p}, {"offset", o}});
  }
  j["skip"] =
      Json{{"schema-ids", t.skip_schema_ids}, {"records", std::move(skip_records)}};
  return j;
}

class AdminRoutes : public RouteSet {
 public:
  AdminRoutes(TopicAdmin* admin, std::function<int64_t()> now_ms)
      : admin_(admin),
        now_ms_(now_ms ? std::move(now_ms) : std::function<int64_t()>(NowMs)) {}

  std::vector<Route> Routes() override {
    const std::string topics = std::string(kAdminPrefix) + "/topics";
    return {
        {"GET", topics,
         [this](const HttpRequest& req, HttpResponse* res) {
           return ListTopics(req, res);
         }},
        {"GET", topics + "/{topic}",
         [this](const HttpRequest& req, HttpResponse* res) {
           return GetTopic(req, res);
         }},
        {"POST", topics + "/{topic}/resume",
         [this](const HttpRequest& req, HttpResponse* res) { return Resume(req, res); }},
        {"POST", std::string(kAdminPrefix) + "/reload",
         [this](const HttpRequest&, HttpResponse* res) { return Reload(res); }},
    };
  }

 private:
  Status ListTopics(const HttpRequest&, HttpResponse* res) {
    FLOE_ASSIGN_OR_RAISE(auto topics, admin_->List());
    const int64_t now = now_ms_();
    Json out = Json::array();
    for (const auto& t : topics) out.push_back(TopicJson(t, now));
    res->SendJson(200, json::Dump(Json{{"topics", std::move(out)}}));
    return Status::OK();
  }

  Result<Json> FindTopic(const std::string& topic) {
    FLOE_ASSIGN_OR_RAISE(auto topics, admin_->List());
    for (const auto& t : topics) {
      if (t.topic == topic) return TopicJson(t, now_ms_());
    }
    return HttpError(404, kNoSuchTopic,
                     "topic " + topic + " is not ingested by this Floe");
  }

  Status GetTopic(const HttpRequest& req, HttpResponse* res) {
    FLOE_ASSIGN_OR_RAISE(Json j, FindTopic(req.Capture("topic")));
    res->SendJson(200, json::Dump(j));
    return Status::OK();
  }

  Status Resume(const HttpRequest& req, HttpResponse* res) {
    const std::string topic = req.Capture("topic");
    bool skip = false;
    if (req.HasParam("skip-incompatible")) {
      const std::string v = req.Param("skip-incompatible");
      if (EqualsIgnoreCase(v, "true")) {
        skip = true;
      } else if (!EqualsIgnoreCase(v, "false")) {
        return BadRequest("skip-incompatible must be true or false, not '" + v + "'");
      }
    }
    Status st = admin_->Resume(topic, skip);
    if (!st.ok()) {
      switch (KindOf(st)) {
        case ErrorKind::kNotFound:
          return HttpError(404, kNoSuchTopic, st.message());
        case ErrorKind::kConflict:
          return HttpError(409, kTopicNotSuspended, st.message());
        default:
          return st;
      }
    }
    FLOE_ASSIGN_OR_RAISE(Json j, FindTopic(topic));
    res->SendJson(200, json::Dump(j));
    return Status::OK();
  }

  Status Reload(HttpResponse* res) {
    Status st = admin_->Reload();
    if (KindOf(st) == ErrorKind::kInvalidConfig) return BadRequest(st.message());
    FLOE_RETURN_NOT_OK(st);
    res->SendNoContent();
    return Status::OK();
  }

  TopicAdmin* admin_;
  std::function<int64_t()> now_ms_;
};

}  // namespace

std::unique_ptr<RouteSet> MakeAdminRoutes(TopicAdmin* admin,
                                          std::function<int64_t()> now_ms) {
  return std::make_unique<AdminRoutes>(admin, std::move(now_ms));
}

}  // namespace floe::server
