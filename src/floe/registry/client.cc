#include "floe/registry/client.h"

#include <httplib.h>

#include <nlohmann/json.hpp>
#include <utility>

#include "floe/common/util.h"

namespace floe::registry {
namespace {

class HttpRegistryClient : public SchemaSource {
 public:
  HttpRegistryClient(ClientOptions options, std::unique_ptr<httplib::Client> http)
      : options_(std::move(options)), http_(std::move(http)) {}

  Result<std::shared_ptr<const RegisteredSchema>> ById(int id) override {
    {
      std::lock_guard lock(mu_);
      auto it = by_id_.find(id);
      if (it != by_id_.end()) return CacheHit(it->second);
    }
    FLOE_ASSIGN_OR_RAISE(auto s, Fetch("/schemas/ids/" + std::to_string(id),
                                       "schema id " + std::to_string(id)));
    s->id = id;
    std::lock_guard lock(mu_);
    by_id_[id] = s;
    return std::shared_ptr<const RegisteredSchema>(s);
  }

  Result<std::shared_ptr<const RegisteredSchema>> ByGuid(
      const std::string& guid) override {
    {
      std::lock_guard lock(mu_);
      auto it = by_guid_.find(guid);
      if (it != by_guid_.end()) return CacheHit(it->second);
    }
    FLOE_ASSIGN_OR_RAISE(auto s, Fetch("/schemas/guids/" + guid, "schema guid " + guid));
    std::lock_guard lock(mu_);
    by_guid_[guid] = s;
    return std::shared_ptr<const RegisteredSchema>(s);
  }

  Result<std::shared_ptr<const RegisteredSchema>> BySubjectVersion(
      const std::string& subject, int version) override {
    const bool latest = version <= 0;
    if (!latest) {
      std::lock_guard lock(mu_);
      auto it = by_subject_.find({subject, version});
      if (it != by_subject_.end()) return CacheHit(it->second);
    }
    const std::string v = latest ? "latest" : std::to_string(version);
    FLOE_ASSIGN_OR_RAISE(
        auto s, Fetch("/subjects/" + PercentEncode(subject, /*keep_slash=*/false) +
                          "/versions/" + v,
                      "subject '" + subject + "' version " + v));
    std::lock_guard lock(mu_);
    if (!latest) by_subject_[{subject, version}] = s;
    return std::shared_ptr<const RegisteredSchema>(s);
  }

  Result<std::string> Compatibility(const std::string& subject) override {
    const std::string encoded = PercentEncode(subject, /*keep_slash=*/false);
    auto body = GetJson("/config/" + encoded + "?defaultToGlobal=true",
                        "the compatibility level of subject '" + subject + "'");
    if (!body.ok() && KindOf(body.status()) == ErrorKind::kNotFound) {
      // A registry without defaultToGlobal answers 40408 (or 40401) for a subject with
      // no level of its own: the global level applies.
      body = GetJson("/config", "the global compatibility level");
    }
    FLOE_RETURN_NOT_OK(body.status());
    for (const char* key : {"compatibilityLevel", "compatibility"}) {
      if (body->contains(key) && (*body)[key].is_string()) {
        return (*body)[key].get<std::string>();
      }
    }
    return Retriable("schema registry returned a config without compatibilityLevel for " +
                     std::string("subject '") + subject + "'");
  }

  Result<std::vector<SubjectVersion>> SubjectVersionsOf(int id) override {
    const std::string what = "the subjects of schema id " + std::to_string(id);
    FLOE_ASSIGN_OR_RAISE(auto body, GetJson("/schemas/ids/" + std::to_string(id) +
                                                "/versions?deleted=true",
                                            what, /*array=*/true));
    std::vector<SubjectVersion> out;
    for (const auto& e : body) {
      if (!e.is_object() || !e.contains("subject") || !e["subject"].is_string()) {
        return Retriable("schema registry returned a malformed body for " + what);
      }
      SubjectVersion sv;
      sv.subject = e["subject"].get<std::string>();
      if (e.contains("version") && e["version"].is_number_integer()) {
        sv.version = e["version"].get<int>();
      }
      out.push_back(std::move(sv));
    }
    return out;
  }

 private:
  std::shared_ptr<const RegisteredSchema> CacheHit(
      std::shared_ptr<const RegisteredSchema> s) {
    if (options_.counters)
      options_.counters->cache_hits.fetch_add(1, std::memory_order_relaxed);
    return s;
  }

  // GET `path`, counted: a JSON object (an array when `array`).
  Result<nlohmann::json> GetJson(const std::string& path, const std::string& what,
                                 bool array = false) {
    auto r = GetJsonUncounted(path, what, array);
    if (options_.counters) {
      options_.counters->requests.fetch_add(1, std::memory_order_relaxed);
      if (!r.ok() && KindOf(r.status()) != ErrorKind::kNotFound) {
        options_.counters->errors.fetch_add(1, std::memory_order_relaxed);
      }
    }
    return r;
  }

  // GET `path`: the JSON object answered, or the error as the pipeline classifies it.
  Result<nlohmann::json> GetJsonUncounted(const std::string& path,
                                          const std::string& what, bool array) {
    std::unique_lock lock(http_mu_);
    httplib::Result res =
        http_->Get(path.c_str(), {{"Accept", "application/vnd.schemaregistry.v1+json"}});
    lock.unlock();
    if (!res) {
      return Retriable("schema registry " + options_.url + " unreachable fetching " +
                       what + ": " + httplib::to_string(res.error()));
    }
    const int status = res->status;
    if (status == 401 || status == 403) {
      return MakeError(ErrorKind::kUnauthorized,
                       "schema registry refused credentials (HTTP " +
                           std::to_string(status) + ") fetching " + what);
    }
    if (status == 404) {
      int code = 0;
      auto body = nlohmann::json::parse(res->body, nullptr, false);
      if (body.is_object() && body.contains("error_code") &&
          body["error_code"].is_number_integer()) {
        code = body["error_code"].get<int>();
      }
      // Only the registry's own "not found" is a fact; a bare 404 (wrong URL, proxy) is
      // a systemic problem. 40401 subject not found, 40402 version not found, 40403
      // schema not found, 40408 subject without a compatibility level of its own.
      if (code == 40401 || code == 40402 || code == 40403 || code == 40408) {
        return NotFound("schema registry has no " + what + " (" + std::to_string(code) +
                        ")");
      }
      return Retriable(
          "schema registry answered 404 without a not-found error code for " + what +
          ": check registry.url");
    }
    if (status != 200) {
      return Retriable("schema registry HTTP " + std::to_string(status) + " fetching " +
                       what);
    }
    auto body = nlohmann::json::parse(res->body, nullptr, false);
    if (array ? !body.is_array() : !body.is_object()) {
      return Retriable("schema registry returned a malformed body for " + what);
    }
    return body;
  }

  Result<std::shared_ptr<RegisteredSchema>> Fetch(const std::string& path,
                                                  const std::string& what) {
    FLOE_ASSIGN_OR_RAISE(auto body, GetJson(path, what));
    if (!body.contains("schema") || !body["schema"].is_string()) {
      return Retriable("schema registry returned a malformed body for " + what);
    }
    auto s = std::make_shared<RegisteredSchema>();
    s->schema = body["schema"].get<std::string>();
    if (body.contains("schemaType") && body["schemaType"].is_string()) {
      s->type_name = body["schemaType"].get<std::string>();
      s->type = ParseSchemaType(s->type_name);
    }
    if (body.contains("id") && body["id"].is_number_integer())
      s->id = body["id"].get<int>();
    if (body.contains("version") && body["version"].is_number_integer()) {
      s->version = body["version"].get<int>();
    }
    if (body.contains("references") && body["references"].is_array()) {
      for (const auto& r : body["references"]) {
        if (!r.is_object()) continue;
        SchemaReference ref;
        ref.name = r.value("name", "");
        ref.subject = r.value("subject", "");
        ref.version = r.value("version", 0);
        s->references.push_back(std::move(ref));
      }
    }
    return s;
  }

  ClientOptions options_;
  std::mutex http_mu_;  // httplib::Client is not safe for concurrent requests
  std::unique_ptr<httplib::Client> http_;
  std::mutex mu_;
  std::map<int, std::shared_ptr<const RegisteredSchema>> by_id_;
  std::map<std::string, std::shared_ptr<const RegisteredSchema>> by_guid_;
  std::map<std::pair<std::string, int>, std::shared_ptr<const RegisteredSchema>>
      by_subject_;
};

}  // namespace

SchemaType ParseSchemaType(const std::string& name) {
  if (name == "AVRO") return SchemaType::kAvro;
  if (name == "PROTOBUF") return SchemaType::kProtobuf;
  if (name == "JSON") return SchemaType::kJson;
  return SchemaType::kOther;
}

Result<std::unique_ptr<SchemaSource>> MakeRegistryClient(const ClientOptions& options) {
  if (options.url.rfind("http://", 0) != 0 && options.url.rfind("https://", 0) != 0) {
    return InvalidConfig("registry.url must start with http:// or https://, got '" +
                         options.url + "'");
  }
  std::string base = options.url;
  while (!base.empty() && base.back() == '/') base.pop_back();
  auto http = std::make_unique<httplib::Client>(base);
  if (!http->is_valid())
    return InvalidConfig("registry.url '" + options.url + "' is not a valid URL");
  http->set_connection_timeout(std::chrono::milliseconds(options.timeout_ms));
  http->set_read_timeout(std::chrono::milliseconds(options.timeout_ms));
  http->set_keep_alive(true);
  if (!options.basic_auth_user_info.empty()) {
    auto colon = options.basic_auth_user_info.find(':');
    if (colon == std::string::npos) {
      return InvalidConfig("registry.basic.auth.user.info must be 'user:password'");
    }
    http->set_basic_auth(options.basic_auth_user_info.substr(0, colon),
                         options.basic_auth_user_info.substr(colon + 1));
  }
  return std::unique_ptr<SchemaSource>(new HttpRegistryClient(options, std::move(http)));
}

}  // namespace floe::registry
