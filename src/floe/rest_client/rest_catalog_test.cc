// The REST catalog client against an in-process fake Iceberg REST catalog (cpp-httplib on
// loopback): the create transaction, each commit outcome (409, 5xx, a lost answer, an
// unusable body, a catalog that drops Floe's properties), read retries, OAuth2 token
// refresh after a 401, and paging.
#include "floe/rest_client/rest_catalog.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "floe/iceberg/schema_json.h"
#include "floe/iceberg/table_metadata.h"
#include "floe/iceberg/table_update.h"

namespace floe::rest_client {
namespace {

using Json = nlohmann::json;

// A scripted reply: answers a request (true) or lets the fake's catalog logic answer it.
using Script = std::function<bool(const httplib::Request&, httplib::Response&)>;

// Tables kept in memory under prefix "wh"; commits are checked and applied with the
// same iceberg functions Floe's own server uses. Every request is logged.
class FakeCatalog {
 public:
  FakeCatalog() {
    server_.set_pre_routing_handler([this](const httplib::Request& req,
                                           httplib::Response& res) {
      std::lock_guard lock(mu_);
      log_.push_back(req.method + " " + req.path +
                     (req.params.empty() ? "" : "?" + QueryOf(req)));
      if (!scripts_.empty()) {
        Script script = scripts_.front();
        scripts_.pop_front();
        if (script(req, res)) return httplib::Server::HandlerResponse::Handled;
      }
      if (oauth_ && req.path != "/v1/oauth/tokens" &&
          req.get_header_value("Authorization") != "Bearer " + valid_token_) {
        res.status = 401;
        res.set_content(
            R"({"error":{"message":"bad token","type":"NotAuthorizedException","code":401}})",
            "application/json");
        return httplib::Server::HandlerResponse::Handled;
      }
      return httplib::Server::HandlerResponse::Unhandled;
    });
    server_.Get("/v1/config", [](const httplib::Request&, httplib::Response& res) {
      res.set_content(R"({"defaults":{},"overrides":{"prefix":"wh"}})",
                      "application/json");
    });
    server_.Post("/v1/oauth/tokens",
                 [this](const httplib::Request& req, httplib::Response& res) {
                   std::lock_guard lock(mu_);
                   if (req.body.find("client_id=floe") == std::string::npos) {
                     res.status = 401;
                     return;
                   }
                   valid_token_ = "token-" + std::to_string(++tokens_);
                   res.set_content(Json{{"access_token", valid_token_},
                                        {"token_type", "bearer"},
                                        {"expires_in", 3600}}
                                       .dump(),
                                   "application/json");
                 });
    server_.Get(R"(/v1/wh/namespaces/([^/]+)/tables)", [this](const auto& req,
                                                              auto& res) {
      std::lock_guard lock(mu_);
      // Two identifiers a page; the token is the index of the next one.
      size_t from =
          req.has_param("pageToken") ? std::stoul(req.get_param_value("pageToken")) : 0;
      Json ids = Json::array();
      size_t i = 0;
      for (const auto& [name, md] : tables_) {
        if (i >= from && i < from + 2)
          ids.push_back({{"namespace", {"ns"}}, {"name", name}});
        ++i;
      }
      Json body{{"identifiers", ids}};
      if (from + 2 < tables_.size()) body["next-page-token"] = std::to_string(from + 2);
      res.set_content(body.dump(), "application/json");
    });
    server_.Post(R"(/v1/wh/namespaces/([^/]+)/tables)",
                 [this](const httplib::Request& req, httplib::Response& res) {
                   auto body = Json::parse(req.body);
                   iceberg::Schema schema = *iceberg::SchemaFromJson(body["schema"]);
                   // As REST servers do, a create renumbers the field ids (here: +100).
                   for (auto& f : schema.fields) f.id += 100;
                   auto md = iceberg::NewTableMetadata(
                       schema, "file:///wh/ns/" + body["name"].get<std::string>());
                   std::lock_guard lock(mu_);
                   staged_ = body.value("stage-create", false);
                   if (!staged_) tables_[body["name"]] = *md;
                   Reply(res, *md);
                 });
    server_.Get(R"(/v1/wh/namespaces/([^/]+)/tables/([^/]+))", [this](const auto& req,
                                                                      auto& res) {
      std::lock_guard lock(mu_);
      auto it = tables_.find(req.matches[2]);
      if (it == tables_.end()) {
        res.status = 404;
        res.set_content(
            R"({"error":{"message":"no such table","type":"NoSuchTableException","code":404}})",
            "application/json");
        return;
      }
      Reply(res, it->second);
    });
    server_.Post(R"(/v1/wh/namespaces/([^/]+)/tables/([^/]+))", [this](const auto& req,
                                                                       auto& res) {
      auto body = Json::parse(req.body);
      auto requirements = *iceberg::TableRequirementsFromJson(body["requirements"]);
      auto updates = *iceberg::TableUpdatesFromJson(body["updates"]);
      std::lock_guard lock(mu_);
      ++commits_;
      auto it = tables_.find(req.matches[2]);
      const iceberg::TableMetadata* base = it == tables_.end() ? nullptr : &it->second;
      if (!iceberg::CheckRequirements(base, requirements).ok()) {
        res.status = 409;
        res.set_content(
            R"({"error":{"message":"requirement failed","type":"CommitFailedException","code":409}})",
            "application/json");
        return;
      }
      auto md = iceberg::ApplyUpdates(base, updates, 1000);
      if (!md.ok()) {
        res.status = 400;
        return;
      }
      if (drop_floe_properties_) {
        for (auto p = md->properties.begin(); p != md->properties.end();) {
          p = p->first.starts_with("floe.") ? md->properties.erase(p) : std::next(p);
        }
      }
      tables_[req.matches[2]] = *md;
      Reply(res, *md);
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running())
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ~FakeCatalog() {
    server_.stop();
    thread_.join();
  }

  std::string uri() const { return "http://127.0.0.1:" + std::to_string(port_); }
  void Then(Script s) {
    std::lock_guard lock(mu_);
    scripts_.push_back(std::move(s));
  }
  // The next request gets `status` and `body`, whatever it is.
  void Answer(int status, std::string body) {
    Then([status, body](const httplib::Request&, httplib::Response& res) {
      res.status = status;
      res.set_content(body, "application/json");
      return true;
    });
  }
  void RequireOAuth() { oauth_ = true; }
  // The held token stops being accepted (expired or revoked on the server's side).
  void RevokeToken() {
    std::lock_guard lock(mu_);
    valid_token_ = "revoked";
  }
  void DropFloeProperties() { drop_floe_properties_ = true; }
  std::vector<std::string> Log() {
    std::lock_guard lock(mu_);
    return log_;
  }
  void ClearLog() {
    std::lock_guard lock(mu_);
    log_.clear();
  }
  int commits() {
    std::lock_guard lock(mu_);
    return commits_;
  }
  bool staged() {
    std::lock_guard lock(mu_);
    return staged_;
  }
  void AddTable(const std::string& name) {
    iceberg::Schema schema;
    schema.fields.push_back(
        {1, "id", true, iceberg::Type::Primitive(iceberg::TypeId::kLong), {}});
    std::lock_guard lock(mu_);
    tables_[name] = *iceberg::NewTableMetadata(schema, "file:///wh/ns/" + name);
  }

 private:
  static std::string QueryOf(const httplib::Request& req) {
    std::string out;
    for (const auto& [k, v] : req.params) out += (out.empty() ? "" : "&") + k + "=" + v;
    return out;
  }
  static void Reply(httplib::Response& res, const iceberg::TableMetadata& md) {
    res.set_content(Json{{"metadata-location", md.location + "/metadata/v1.json"},
                         {"metadata", iceberg::TableMetadataToJson(md)}}
                        .dump(),
                    "application/json");
  }

  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  std::mutex mu_;
  std::deque<Script> scripts_;
  std::vector<std::string> log_;
  std::map<std::string, iceberg::TableMetadata> tables_;
  bool oauth_ = false;
  bool drop_floe_properties_ = false;
  bool staged_ = false;
  std::string valid_token_;
  int tokens_ = 0;
  int commits_ = 0;
};

class RestCatalogTest : public ::testing::Test {
 protected:
  std::unique_ptr<catalog::Catalog> Open(AuthOptions auth = {}) {
    RestCatalogOptions options;
    options.uri = fake_.uri();
    options.warehouse = "lake";
    options.auth = std::move(auth);
    options.http.request_timeout_ms = 1000;
    auto cat = OpenRestCatalog(options);
    EXPECT_TRUE(cat.ok()) << cat.status().ToString();
    return cat.ok() ? std::move(*cat) : nullptr;
  }

  // A commit setting one Floe property on table ns.t as the test last loaded it.
  catalog::TableCommit SetProperty(catalog::Catalog& cat, const std::string& value) {
    auto loaded = cat.LoadTable(t_);
    EXPECT_TRUE(loaded.ok()) << loaded.status().ToString();
    catalog::TableCommit c;
    c.ident = t_;
    c.requirements = {iceberg::requirement::AssertTableUuid{loaded->metadata.table_uuid}};
    c.updates = {iceberg::update::SetProperties{{{"floe.kafka.offsets", value}}}};
    return c;
  }

  FakeCatalog fake_;
  catalog::TableIdent t_{{"ns"}, "t"};
};

TEST_F(RestCatalogTest, ConfigGivesThePrefixOfEveryPath) {
  fake_.AddTable("t");
  auto cat = Open();
  ASSERT_TRUE(cat);
  ASSERT_TRUE(cat->LoadTable(t_).ok());
  auto log = fake_.Log();
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[0], "GET /v1/config?warehouse=lake");
  EXPECT_EQ(log[1], "GET /v1/wh/namespaces/ns/tables/t");
  EXPECT_EQ(KindOf(cat->LoadTable({{"ns"}, "absent"}).status()), ErrorKind::kNotFound);
}

TEST_F(RestCatalogTest, CreateKeepsFieldIdsThroughAStagedCreateAndAnAssertCreateCommit) {
  auto cat = Open();
  ASSERT_TRUE(cat);
  catalog::CreateTableRequest req;
  req.ident = t_;
  req.schema.fields.push_back(
      {7, "id", true, iceberg::Type::Primitive(iceberg::TypeId::kLong), {}});
  req.properties = {{"floe.formats", "iceberg"}};
  req.assign_fresh_ids = false;
  fake_.ClearLog();
  auto created = cat->CreateTable(req);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_TRUE(fake_.staged()) << "the create is staged: the server renumbers ids";
  auto log = fake_.Log();
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[0], "POST /v1/wh/namespaces/ns/tables");
  EXPECT_EQ(log[1], "POST /v1/wh/namespaces/ns/tables/t");
  const iceberg::Schema* schema = created->metadata.CurrentSchema();
  ASSERT_NE(schema, nullptr);
  EXPECT_EQ(schema->fields.at(0).id, 7) << "Floe's field id kept";
  EXPECT_EQ(created->metadata.properties.at("floe.formats"), "iceberg");
}

TEST_F(RestCatalogTest, CommitOutcomesAreSortedByWhetherTheCommitMayHaveLanded) {
  fake_.AddTable("t");
  auto cat = Open();
  ASSERT_TRUE(cat);
  auto commit = SetProperty(*cat, "{}");
  const auto kind = [&] {
    return KindOf(cat->CommitTable(commit, catalog::Writer::kFloe).status());
  };
  // Refused: definitely not applied.
  fake_.Answer(
      409, R"({"error":{"message":"stale","type":"CommitFailedException","code":409}})");
  EXPECT_EQ(kind(), ErrorKind::kConflict);
  // A 5xx to a commit may have been applied (the Iceberg REST spec): never resent
  // blindly.
  for (int status : {500, 502, 503, 504}) {
    fake_.Answer(status, "{}");
    EXPECT_EQ(kind(), ErrorKind::kStateUnknown) << status;
  }
  // Accepted with an answer that cannot be read.
  fake_.Answer(200, "not json");
  EXPECT_EQ(kind(), ErrorKind::kStateUnknown);
  fake_.Answer(200, R"({"metadata-location":"x"})");
  EXPECT_EQ(kind(), ErrorKind::kStateUnknown);
  // Lost: the answer never comes within the request timeout.
  fake_.Then([](const httplib::Request&, httplib::Response& res) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    res.status = 200;
    return true;
  });
  EXPECT_EQ(kind(), ErrorKind::kStateUnknown);
  // Other errors are what they say.
  fake_.Answer(
      400,
      R"({"error":{"message":"bad update","type":"BadRequestException","code":400}})");
  auto bad = cat->CommitTable(commit, catalog::Writer::kFloe);
  EXPECT_EQ(KindOf(bad.status()), ErrorKind::kInvalidInput);
  EXPECT_NE(bad.status().message().find("bad update"), std::string::npos);
  fake_.Answer(403, "{}");
  EXPECT_EQ(kind(), ErrorKind::kForbidden);
  // None of the scripted answers reached the fake's table; a plain commit does.
  EXPECT_EQ(fake_.commits(), 0);
  EXPECT_TRUE(cat->CommitTable(commit, catalog::Writer::kFloe).ok());
  EXPECT_EQ(fake_.commits(), 1);
  EXPECT_EQ(cat->LoadTable(t_)->metadata.properties.at("floe.kafka.offsets"), "{}");
}

TEST_F(RestCatalogTest, ACatalogThatDropsFloesPropertiesIsAnUnknownOutcome) {
  fake_.AddTable("t");
  auto cat = Open();
  ASSERT_TRUE(cat);
  fake_.DropFloeProperties();
  auto res =
      cat->CommitTable(SetProperty(*cat, R"({"a":{"0":1}})"), catalog::Writer::kFloe);
  EXPECT_EQ(KindOf(res.status()), ErrorKind::kStateUnknown);
  EXPECT_NE(res.status().message().find("floe.kafka.offsets"), std::string::npos);
}

TEST_F(RestCatalogTest, ReadsAreRetriedThenRetriable) {
  fake_.AddTable("t");
  auto cat = Open();
  ASSERT_TRUE(cat);
  fake_.ClearLog();
  fake_.Answer(503, "{}");
  fake_.Answer(500, "{}");
  ASSERT_TRUE(cat->LoadTable(t_).ok()) << "the third attempt answers";
  EXPECT_EQ(fake_.Log().size(), 3u);
  for (int i = 0; i < 3; ++i) fake_.Answer(503, "{}");
  EXPECT_EQ(KindOf(cat->LoadTable(t_).status()), ErrorKind::kRetriable);
  // A write is sent once: 503 (not applied) is retriable, another 5xx unknown.
  fake_.Answer(503, "{}");
  EXPECT_EQ(KindOf(cat->CreateNamespace({"x"}, {})), ErrorKind::kRetriable);
  fake_.Answer(502, "{}");
  EXPECT_EQ(KindOf(cat->CreateNamespace({"x"}, {})), ErrorKind::kStateUnknown);
}

TEST_F(RestCatalogTest, OAuth2FetchesANewTokenOnceAfterA401) {
  fake_.AddTable("t");
  fake_.RequireOAuth();
  AuthOptions auth;
  auth.type = AuthType::kOAuth2;
  auth.client_id = "floe";
  auth.client_secret = "secret";
  auto cat = Open(auth);
  ASSERT_TRUE(cat);
  ASSERT_TRUE(cat->LoadTable(t_).ok());
  fake_.RevokeToken();
  fake_.ClearLog();
  ASSERT_TRUE(cat->LoadTable(t_).ok()) << "a new token, then the same request again";
  auto log = fake_.Log();
  ASSERT_EQ(log.size(), 3u);
  EXPECT_EQ(log[0], "GET /v1/wh/namespaces/ns/tables/t");
  EXPECT_EQ(log[1], "POST /v1/oauth/tokens");
  EXPECT_EQ(log[2], "GET /v1/wh/namespaces/ns/tables/t");
  // A 401 that a new token does not cure is the answer.
  fake_.Answer(401, "{}");
  fake_.Answer(401, "{}");
  EXPECT_EQ(KindOf(cat->LoadTable(t_).status()), ErrorKind::kUnauthorized);
}

TEST_F(RestCatalogTest, ListingFollowsPageTokens) {
  for (const char* name : {"a", "b", "c", "d", "e"}) fake_.AddTable(name);
  auto cat = Open();
  ASSERT_TRUE(cat);
  fake_.ClearLog();
  auto tables = cat->ListTables({"ns"});
  ASSERT_TRUE(tables.ok()) << tables.status().ToString();
  std::vector<std::string> names;
  for (const auto& t : *tables) names.push_back(t.name);
  EXPECT_EQ(names, (std::vector<std::string>{"a", "b", "c", "d", "e"}));
  EXPECT_EQ(fake_.Log().size(), 3u);
  // A catalog that hands out the same token again would loop forever.
  fake_.Answer(200, R"({"identifiers":[],"next-page-token":"same"})");
  fake_.Answer(200, R"({"identifiers":[],"next-page-token":"same"})");
  EXPECT_EQ(KindOf(cat->ListTables({"ns"}).status()), ErrorKind::kInvalidInput);
}

}  // namespace
}  // namespace floe::rest_client
