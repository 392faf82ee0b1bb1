#include "floe/cli/admin_client.h"

#include <httplib.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "floe/common/log.h"
#include "floe/config/config.h"

namespace floe::cli {
namespace {

using Json = ::nlohmann::json;

constexpr const char* kDefaultUrl = "http://127.0.0.1:8181";
constexpr int kConnectTimeoutS = 3;
constexpr int kReadTimeoutS = 30;  // a resume waits up to 15 s for the pipeline
constexpr size_t kDefaultWidth = 120;
constexpr size_t kMinReasonWidth = 30;

struct Endpoint {
  std::string url;  // scheme://host:port, no trailing slash
  std::string token;
};

// A host to connect to for a listen address: a wildcard listens on loopback too.
std::string ConnectHost(const std::string& host) {
  if (host.empty() || host == "0.0.0.0") return "127.0.0.1";
  if (host == "::") return "[::1]";
  if (host.find(':') != std::string::npos) return "[" + host + "]";
  return host;
}

// Prints the problem and returns the exit status (2: the config or URL is wrong).
std::optional<Endpoint> Resolve(const AdminTarget& target, bool need_write, int* rc) {
  Endpoint e;
  e.url = kDefaultUrl;
  if (!target.config_path.empty() && target.url.empty()) {
    InitLogging("warn");
    auto config = config::LoadConfig(target.config_path);
    if (!config.ok()) {
      std::fprintf(stderr, "floe: %s\n", config.status().message().c_str());
      *rc = 2;
      return std::nullopt;
    }
    if (config->rest.listen_port == 0) {
      std::fprintf(stderr,
                   "floe: %s: rest.listen has port 0 (a free port picked at start, "
                   "logged as \"REST catalog listening on ...\"): give that address "
                   "with --url\n",
                   target.config_path.c_str());
      *rc = 2;
      return std::nullopt;
    }
    e.url = "http://" + ConnectHost(config->rest.listen_host) + ":" +
            std::to_string(config->rest.listen_port);
    if (!config->rest.auth_tokens.empty()) {
      e.token = config->rest.auth_tokens.front();
    } else if (!need_write && !config->rest.auth_read_tokens.empty()) {
      e.token = config->rest.auth_read_tokens.front();
    }
  }
  if (!target.url.empty()) e.url = target.url;
  while (!e.url.empty() && e.url.back() == '/') e.url.pop_back();
  if (e.url.find("://") == std::string::npos) e.url = "http://" + e.url;
  const size_t path = e.url.find('/', e.url.find("://") + 3);
  if (path != std::string::npos) {
    std::fprintf(stderr,
                 "floe: --url %s: give scheme://host:port only (the admin routes are "
                 "under /floe/v1 of the daemon's REST server)\n",
                 e.url.c_str());
    *rc = 2;
    return std::nullopt;
  }
  if (!target.token.empty()) e.token = target.token;
  return e;
}

// One request; prints why it failed and returns nullopt (exit status in `rc`).
std::optional<Json> Call(const Endpoint& e, const std::string& method,
                         const std::string& path, int* rc) {
  httplib::Client client(e.url);
  if (!client.is_valid()) {
    std::fprintf(stderr, "floe: %s is not a URL Floe can call (http://host:port)\n",
                 e.url.c_str());
    *rc = 2;
    return std::nullopt;
  }
  client.set_connection_timeout(kConnectTimeoutS, 0);
  client.set_read_timeout(kReadTimeoutS, 0);
  client.set_url_encode(false);  // paths are encoded here (PathSegment)
  httplib::Headers headers;
  if (!e.token.empty()) headers.emplace("Authorization", "Bearer " + e.token);
  auto res = method == "GET" ? client.Get(path.c_str(), headers)
                             : client.Post(path.c_str(), headers, "", "application/json");
  *rc = 1;
  if (!res) {
    std::fprintf(stderr,
                 "floe: cannot reach the Floe daemon at %s (%s): is `floe run` running, "
                 "and is this its rest.listen address?\n",
                 e.url.c_str(), httplib::to_string(res.error()).c_str());
    return std::nullopt;
  }
  Json body = Json::parse(res->body, nullptr, /*allow_exceptions=*/false);
  if (res->status != 200) {
    std::string message = res->body;
    if (body.is_object() && body.contains("error") && body["error"].is_object() &&
        body["error"].value("message", "") != "") {
      message = body["error"]["message"].get<std::string>();
    }
    std::string hint;
    if (res->status == 401) hint = " (give a token of rest.auth.tokens with --token)";
    if (res->status == 403) hint = " (this needs a token of rest.auth.tokens)";
    if (res->status == 404 && path == "/floe/v1/topics") {
      hint = " (is this `floe run`? `floe catalog serve` has no topics)";
    }
    std::fprintf(stderr, "floe: %s %s%s: HTTP %d: %s%s\n", method.c_str(), e.url.c_str(),
                 path.c_str(), res->status, message.c_str(), hint.c_str());
    return std::nullopt;
  }
  if (!body.is_object()) {
    std::fprintf(stderr, "floe: %s%s did not answer JSON: is it a Floe daemon?\n",
                 e.url.c_str(), path.c_str());
    return std::nullopt;
  }
  *rc = 0;
  return body;
}

// Percent-encodes everything but RFC 3986 unreserved characters (Kafka topic names are
// [a-zA-Z0-9._-] already).
std::string PathSegment(const std::string& s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

int64_t IntOr(const Json& j, const char* key, int64_t fallback) {
  auto it = j.find(key);
  return it != j.end() && it->is_number_integer() ? it->get<int64_t>() : fallback;
}
std::string StringOr(const Json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

std::string Age(int64_t ms) {
  if (ms < 0) return "never";
  const int64_t s = ms / 1000;
  if (s < 120) return std::to_string(s) + "s ago";
  if (s < 7200) return std::to_string(s / 60) + "m ago";
  if (s < 172800) return std::to_string(s / 3600) + "h ago";
  return std::to_string(s / 86400) + "d ago";
}

// The reason without the "topic T partition P offset O: " the columns already say,
// led by where and which schema.
std::string Reason(const Json& t) {
  std::string reason = StringOr(t, "reason");
  const int64_t partition = IntOr(t, "partition", -1);
  const int64_t offset = IntOr(t, "offset", -1);
  const int64_t schema = IntOr(t, "schema-id", -1);
  std::string where;
  if (partition >= 0) {
    const std::string prefix = "topic " + StringOr(t, "topic") + " partition " +
                               std::to_string(partition) + " offset " +
                               std::to_string(offset) + ": ";
    if (reason.rfind(prefix, 0) == 0) reason = reason.substr(prefix.size());
    where = "p" + std::to_string(partition) + "@" + std::to_string(offset);
  }
  if (schema >= 0)
    where += (where.empty() ? "" : " ") + std::string("schema ") + std::to_string(schema);
  return where.empty() ? reason : "[" + where + "] " + reason;
}

size_t Columns(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

// Cuts `s` to `width` display columns (UTF-8 aware), ending with "…" when cut.
std::string Truncate(const std::string& s, size_t width) {
  if (width == 0 || Columns(s) <= width) return s;
  size_t cols = 0;
  size_t i = 0;
  for (; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) continue;  // continuation
    if (cols == width - 1) break;
    ++cols;
  }
  return s.substr(0, i) + "…";
}

// COLUMNS when exported, else the terminal's width, else kDefaultWidth (a pipe).
size_t TerminalWidth() {
  const char* env = std::getenv("COLUMNS");
  if (env != nullptr) {
    const long v = std::strtol(env, nullptr, 10);
    if (v >= 40) return static_cast<size_t>(v);
  }
  struct winsize ws{};
  if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 &&
      ws.ws_col >= 40) {
    return ws.ws_col;
  }
  return kDefaultWidth;
}

void PrintTable(const Json& body) {
  const Json& topics = body["topics"];
  if (!topics.is_array() || topics.empty()) {
    std::cout
        << "no topics (none of the cluster's topics matches the config's `topics`)\n";
    return;
  }
  std::vector<std::vector<std::string>> rows = {
      {"TOPIC", "TABLE", "STATE", "LAG", "LAST COMMIT", "COMPAT", "REASON"}};
  int suspended = 0;
  for (const auto& t : topics) {
    const int64_t lag = IntOr(t, "lag", -1);
    const std::string state = StringOr(t, "state");
    suspended += state == "suspended";
    rows.push_back(
        {StringOr(t, "topic"), StringOr(t, "table"), state,
         lag >= 0 ? std::to_string(lag) : "-", Age(IntOr(t, "last-commit-age-ms", -1)),
         StringOr(t, "compatibility").empty() ? "-" : StringOr(t, "compatibility"),
         Reason(t)});
  }
  constexpr size_t kFixed = 6;  // the columns before REASON
  std::vector<size_t> widths(kFixed, 0);
  for (const auto& r : rows) {
    for (size_t c = 0; c < kFixed; ++c) widths[c] = std::max(widths[c], Columns(r[c]));
  }
  size_t used = 0;
  for (size_t w : widths) used += w + 2;
  const size_t total = TerminalWidth();
  const size_t reason_width =
      total > used + kMinReasonWidth ? total - used : kMinReasonWidth;
  for (const auto& r : rows) {
    std::string line;
    for (size_t c = 0; c < kFixed; ++c) {
      line += r[c];
      line.append(widths[c] - Columns(r[c]) + 2, ' ');
    }
    line += Truncate(r[kFixed], reason_width);
    while (!line.empty() && line.back() == ' ') line.pop_back();
    std::cout << line << "\n";
  }
  if (suspended > 0) {
    std::cout << "\n"
              << suspended << (suspended == 1 ? " topic is" : " topics are")
              << " suspended; `floe status --json` shows whole reasons.\n"
                 "`floe topics resume TOPIC` retries from the table's positions; with "
                 "--skip-incompatible it also\nskips the records that suspended it.\n";
  }
}

}  // namespace

int StatusCommand(const AdminTarget& target, bool json) {
  int rc = 0;
  auto endpoint = Resolve(target, /*need_write=*/false, &rc);
  if (!endpoint) return rc;
  auto body = Call(*endpoint, "GET", "/floe/v1/topics", &rc);
  if (!body) return rc;
  if (json) {
    std::cout << body->dump(2) << "\n";
  } else {
    PrintTable(*body);
  }
  return 0;
}

int ResumeCommand(const AdminTarget& target, const std::string& topic,
                  bool skip_incompatible) {
  int rc = 0;
  auto endpoint = Resolve(target, /*need_write=*/true, &rc);
  if (!endpoint) return rc;
  const std::string path = "/floe/v1/topics/" + PathSegment(topic) + "/resume" +
                           (skip_incompatible ? "?skip-incompatible=true" : "");
  auto body = Call(*endpoint, "POST", path, &rc);
  if (!body) return rc;
  std::cout << "topic " << topic << ": " << StringOr(*body, "state")
            << (skip_incompatible ? " (its incompatible records are skipped)" : "")
            << "; `floe status` shows when it is running again\n";
  return 0;
}

}  // namespace floe::cli
