#include "floe/cli/dlq_command.h"

#include <cstdio>
#include <iostream>

#include "floe/cli/catalog_stack.h"
#include "floe/pipeline/replay.h"
#include "floe/registry/client.h"

namespace floe::cli {

int DlqReplayCommand(const config::Config& config, const catalog::TableIdent& table) {
  auto stack = OpenCatalogStack(config, {.serve_rest = false});
  if (!stack.ok()) {
    std::fprintf(stderr, "floe: %s\n", stack.status().message().c_str());
    return KindOf(stack.status()) == ErrorKind::kInvalidConfig ? 2 : 1;
  }
  registry::ClientOptions ro;
  ro.url = config.registry.url;
  ro.basic_auth_user_info = config.registry.basic_auth_user_info.value_or("");
  ro.timeout_ms = static_cast<int>(config.registry.request_timeout_ms);
  auto registry = registry::MakeRegistryClient(ro);
  if (!registry.ok()) {
    std::fprintf(stderr, "floe: %s\n", registry.status().message().c_str());
    return 1;
  }
  auto result = pipeline::ReplayDeadLetters(config, table, registry->get(),
                                            stack->catalog.get(), stack->io.get());
  if (!result.ok()) {
    std::fprintf(stderr, "floe: %s\n", result.status().message().c_str());
    return KindOf(result.status()) == ErrorKind::kInvalidConfig ? 2 : 1;
  }
  std::cout << "table " << table.ToString() << " (topic " << result->topic
            << "): " << result->rows << " dead letters, " << result->replayed
            << " replayed now, " << result->already << " replayed before, "
            << result->still_failing << " still failing\n";
  if (!result->example_error.empty()) {
    std::cout << "still failing, e.g. " << result->example_error << "\n";
  }
  return 0;
}

}  // namespace floe::cli
