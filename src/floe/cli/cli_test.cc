// The `floe` binary's argument handling and exit codes, run as a user runs it: 0 for
// success and help, 2 for a bad command line or configuration (naming the option, file or
// key), 1 for a failure at run time (naming what failed). No Kafka is needed: every case
// fails or finishes before Floe would connect to one.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

struct Outcome {
  int code = -1;
  std::string out;
  std::string err;
};

std::string ReadAll(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("floe-cli-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Runs the binary with `args` (no shell: each argument as given).
  Outcome Floe(const std::vector<std::string>& args) {
    const fs::path out = dir_ / "stdout", err = dir_ / "stderr";
    pid_t pid = ::fork();
    if (pid == 0) {
      std::freopen(out.c_str(), "w", stdout);
      std::freopen(err.c_str(), "w", stderr);
      std::vector<char*> argv;
      std::string binary = FLOE_BINARY;
      argv.push_back(binary.data());
      std::vector<std::string> copy = args;
      for (auto& a : copy) argv.push_back(a.data());
      argv.push_back(nullptr);
      ::execv(binary.c_str(), argv.data());
      ::_exit(127);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    Outcome o;
    o.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    o.out = ReadAll(out);
    o.err = ReadAll(err);
    return o;
  }

  // A configuration that needs no running service until `floe run` connects to Kafka:
  // a local warehouse and the default SQLite catalog under the test's directory.
  std::string Config(const std::string& extra = "") {
    const fs::path cfg = dir_ / "floe.yaml";
    std::ofstream(cfg) << "kafka: {bootstrap.servers: 127.0.0.1:1}\n"
                       << "warehouse: " << (dir_ / "wh").string() << "\n"
                       << extra;
    return cfg.string();
  }

  fs::path dir_;
};

TEST_F(CliTest, NoCommandPrintsTheCommandsAndExits0) {
  Outcome o = Floe({});
  EXPECT_EQ(o.code, 0) << o.err;
  for (const char* command : {"run", "catalog serve", "positions", "maintain",
                              "dlq replay", "status", "topics resume"}) {
    EXPECT_NE(o.out.find(std::string("\n  ") + command + " "), std::string::npos)
        << command << "\n"
        << o.out;
  }
}

TEST_F(CliTest, VersionAndHelpExit0) {
  Outcome v = Floe({"--version"});
  EXPECT_EQ(v.code, 0);
  EXPECT_EQ(v.out.rfind("floe ", 0), 0u) << v.out;
  Outcome h = Floe({"run", "--help"});
  EXPECT_EQ(h.code, 0);
  EXPECT_NE(h.out.find("--config"), std::string::npos) << h.out;
}

TEST_F(CliTest, AnUnknownCommandOrOptionExits2NamingIt) {
  Outcome o = Floe({"frobnicate"});
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("frobnicate"), std::string::npos) << o.err;
  Outcome opt = Floe({"run", "--config", Config(), "--no-such-option"});
  EXPECT_EQ(opt.code, 2);
  EXPECT_NE(opt.err.find("--no-such-option"), std::string::npos) << opt.err;
}

TEST_F(CliTest, AMissingRequiredOptionOrSubcommandExits2) {
  Outcome run = Floe({"run"});
  EXPECT_EQ(run.code, 2);
  EXPECT_NE(run.err.find("--config"), std::string::npos) << run.err;
  Outcome topics = Floe({"topics"});
  EXPECT_EQ(topics.code, 2) << topics.err;
  Outcome set = Floe({"positions", "set", "--config", Config(), "kafka.t", "--topic", "t",
                      "--partition", "-1", "--offset", "5"});
  EXPECT_EQ(set.code, 2);
  EXPECT_NE(set.err.find("--partition"), std::string::npos) << set.err;
  Outcome both = Floe({"status", "--config", Config(), "--url", "http://127.0.0.1:1"});
  EXPECT_EQ(both.code, 2);
  EXPECT_NE(both.err.find("excludes"), std::string::npos) << both.err;
}

TEST_F(CliTest, ABadConfigurationExits2NamingTheFileOrTheKey) {
  Outcome missing = Floe({"run", "--config", (dir_ / "missing.yaml").string()});
  EXPECT_EQ(missing.code, 2);
  EXPECT_NE(missing.err.find("missing.yaml"), std::string::npos) << missing.err;
  Outcome typo =
      Floe({"maintain", "--config", Config("defaults: {comit.interval.ms: 5}\n")});
  EXPECT_EQ(typo.code, 2);
  EXPECT_NE(typo.err.find("defaults.comit.interval.ms"), std::string::npos) << typo.err;
  Outcome bad_table = Floe({"positions", "show", "--config", Config(), "no-namespace"});
  EXPECT_EQ(bad_table.code, 2);
  EXPECT_NE(bad_table.err.find("no-namespace"), std::string::npos) << bad_table.err;
}

TEST_F(CliTest, RuntimeFailuresExit1NamingWhatFailed) {
  Outcome status = Floe({"status", "--url", "http://127.0.0.1:1"});
  EXPECT_EQ(status.code, 1);
  EXPECT_NE(status.err.find("cannot reach the Floe daemon"), std::string::npos)
      << status.err;
  Outcome show = Floe({"positions", "show", "--config", Config(), "kafka.nope"});
  EXPECT_EQ(show.code, 1);
  EXPECT_NE(show.err.find("kafka.nope"), std::string::npos) << show.err;
}

TEST_F(CliTest, MaintainOnAnEmptyCatalogSucceeds) {
  Outcome o = Floe({"maintain", "--config", Config(), "--dry-run"});
  EXPECT_EQ(o.code, 0) << o.err;
}

}  // namespace
