// floe_config_docs: prints docs/configuration.md, generated from the config key registry.
// With a path argument it writes that file instead (the floe_config_docs_update target).
#include <fstream>
#include <iostream>

#include "floe/config/keys.h"

int main(int argc, char** argv) {
  const std::string docs = floe::config::ConfigDocsMarkdown();
  if (argc < 2) {
    std::cout << docs;
    return 0;
  }
  std::ofstream out(argv[1], std::ios::binary | std::ios::trunc);
  out << docs;
  out.close();
  if (!out) {
    std::cerr << "floe_config_docs: cannot write " << argv[1] << "\n";
    return 1;
  }
  return 0;
}
