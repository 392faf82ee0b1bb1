// The admin routes' TopicAdmin (server/admin_routes.h) over the pipeline's AdminBridge:
// `floe run` hands one to the REST server, so neither module knows the other.
//
// Threading: as AdminBridge, every call is thread-safe.
#pragma once

#include <memory>

#include "floe/server/admin_routes.h"

namespace floe::pipeline {
class AdminBridge;
}

namespace floe::cli {

// Borrows `bridge`, which must outlive the result.
std::unique_ptr<server::TopicAdmin> MakeTopicAdmin(pipeline::AdminBridge* bridge);

}  // namespace floe::cli
