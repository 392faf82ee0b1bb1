// A plain main for the fuzz targets, so they build without libFuzzer (g++) and `make
// test` replays the seed corpus: runs LLVMFuzzerTestOneInput once over every file named
// on the command line, or over every regular file (sorted by name) in each directory
// named. Each input is copied into a buffer of exactly its size, so reading past the end
// is caught by the sanitizers, as under libFuzzer.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

namespace fs = std::filesystem;

bool RunFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "cannot read %s\n", path.c_str());
    return false;
  }
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)),
                          std::istreambuf_iterator<char>());
  auto buffer = std::make_unique<uint8_t[]>(bytes.size());  // non-null even when empty
  std::copy(bytes.begin(), bytes.end(), buffer.get());
  LLVMFuzzerTestOneInput(buffer.get(), bytes.size());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s <corpus dir or file>...\n", argv[0]);
    return 2;
  }
  size_t total = 0;
  for (int i = 1; i < argc; ++i) {
    std::vector<fs::path> files;
    std::error_code ec;
    if (fs::is_directory(argv[i], ec)) {
      for (const auto& entry : fs::directory_iterator(argv[i], ec)) {
        if (entry.is_regular_file()) files.push_back(entry.path());
      }
      std::sort(files.begin(), files.end());
    } else if (fs::is_regular_file(argv[i], ec)) {
      files.emplace_back(argv[i]);
    }
    if (files.empty()) {
      // An empty or missing corpus would make the replay test pass without testing.
      std::fprintf(stderr, "no inputs in %s\n", argv[i]);
      return 1;
    }
    for (const auto& f : files) {
      if (!RunFile(f)) return 1;
    }
    std::printf("replayed %zu inputs from %s\n", files.size(), argv[i]);
    total += files.size();
  }
  std::printf("replayed %zu inputs, no failure\n", total);
  return 0;
}
