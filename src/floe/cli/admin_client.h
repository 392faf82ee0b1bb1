// `floe status` and `floe topics resume`: clients of a running daemon's admin routes
// (server/admin_routes.h) over HTTP (cpp-httplib, as the registry client).
#pragma once

#include <string>

namespace floe::cli {

// Where the daemon is: `url` wins; else rest.listen and the first token of the config
// file at `config_path`; else http://127.0.0.1:8181 (rest.listen's default). `token`
// overrides the config's.
struct AdminTarget {
  std::string config_path;
  std::string url;
  std::string token;
};

// Prints every topic (a table a person reads at a glance, or the daemon's JSON with
// `json`). Exit status: 0, 1 when the daemon cannot be reached or refuses, 2 for a bad
// config file or URL.
int StatusCommand(const AdminTarget& target, bool json);

// Resumes a suspended topic (with `skip_incompatible`, skipping the records that
// suspended it). Exit status as StatusCommand.
int ResumeCommand(const AdminTarget& target, const std::string& topic,
                  bool skip_incompatible);

}  // namespace floe::cli
