// Schema Registry client (Confluent REST API) with a cache that never expires: schema ids
// and GUIDs are immutable, so each is fetched once per process.
//
// Threading: thread-safe; lookups of different ids may run concurrently.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "floe/common/status.h"

namespace floe::registry {

struct SchemaReference {
  std::string name;
  std::string subject;
  int version = 0;
};

// The registry's schemaType (absent in the API = AVRO).
enum class SchemaType { kAvro, kProtobuf, kJson, kOther };
SchemaType ParseSchemaType(const std::string& name);

struct RegisteredSchema {
  int id = -1;
  int version = 0;  // only when fetched by subject and version
  SchemaType type = SchemaType::kAvro;
  std::string type_name = "AVRO";  // as the registry spelled it (for messages)
  std::string schema;              // the schema text
  std::vector<SchemaReference> references;
};

// One (subject, version) a schema id is registered under.
struct SubjectVersion {
  std::string subject;
  int version = 0;
  bool operator==(const SubjectVersion&) const = default;
};

// What the pipeline needs from a registry; fakes implement it in unit tests.
class SchemaSource {
 public:
  virtual ~SchemaSource() = default;
  // kNotFound when a healthy registry says the id does not exist (40403); kRetriable when
  // the registry cannot be reached or fails (5xx); kUnauthorized on 401/403.
  virtual Result<std::shared_ptr<const RegisteredSchema>> ById(int id) = 0;
  virtual Result<std::shared_ptr<const RegisteredSchema>> ByGuid(
      const std::string& guid) = 0;
  // A subject's version (a schema reference, or the schema of a `value.format: json`
  // topic). `version` <= 0 means the latest, which is fetched each time; a fixed version
  // is cached. kNotFound when the subject or version does not exist (40401/40402).
  virtual Result<std::shared_ptr<const RegisteredSchema>> BySubjectVersion(
      const std::string& subject, int version) = 0;
  // The compatibility level that governs `subject` ("BACKWARD", "FULL_TRANSITIVE",
  // "NONE", ...): the subject's own (GET /config/{subject}?defaultToGlobal=true), else
  // the global one (GET /config). Never cached: a level can change at any time.
  virtual Result<std::string> Compatibility(const std::string& subject) = 0;
  // The subjects and versions schema `id` is registered under, soft-deleted versions
  // included (GET /schemas/ids/{id}/versions?deleted=true). Not cached: the same schema
  // may be registered under another subject later. kNotFound when the id does not exist
  // (40403).
  virtual Result<std::vector<SubjectVersion>> SubjectVersionsOf(int id) = 0;
};

// What a client did, for GET /metrics (floe_registry_*). A request that failed is one the
// registry could not answer (unreachable, 5xx, refused credentials); its "not found" is
// an answer.
struct RegistryCounters {
  std::atomic<int64_t> requests{0};
  std::atomic<int64_t> errors{0};
  std::atomic<int64_t> cache_hits{0};  // lookups answered from the client's cache
};

struct ClientOptions {
  std::string url;                   // e.g. http://127.0.0.1:8081
  std::string basic_auth_user_info;  // "user:password" or empty
  int timeout_ms = 10000;
  RegistryCounters* counters = nullptr;  // optional; must outlive the client
};

Result<std::unique_ptr<SchemaSource>> MakeRegistryClient(const ClientOptions& options);

}  // namespace floe::registry
