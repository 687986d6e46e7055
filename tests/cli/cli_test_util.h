// Helpers shared by the CLI end-to-end tests: run the advbo binary, read files, and a fixture
// with a fresh temporary folder per test.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace advbo::testing {

inline const std::string kBin = std::string(ADVBO_BINARY_DIR) + "/advbo";
inline const std::string kRoot = ADVBO_SOURCE_DIR;

/// Runs `advbo ARGS` with stdout and stderr into `log`; returns the exit status (-1 if it
/// did not exit normally).
inline int RunAdvbo(const std::string& args, const std::filesystem::path& log) {
  const std::string cmd = kBin + " " + args + " > " + log.string() + " 2>&1";
  const int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

/// Whole file as a string ("" if missing).
inline std::string Slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

/// One JSON value per line of a JSONL file (empty if missing).
inline std::vector<nlohmann::json> ReadJsonl(const std::filesystem::path& p) {
  std::vector<nlohmann::json> v;
  std::ifstream in(p);
  for (std::string line; std::getline(in, line);) v.push_back(nlohmann::json::parse(line));
  return v;
}

/// A fixture owning an empty temporary folder dir_ named after the test.
class TempDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        std::filesystem::temp_directory_path() /
        ("advbo_test_" +
         std::string(::testing::UnitTest::GetInstance()->current_test_info()->test_suite_name()) +
         "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name() + "_" +
         std::to_string(::getpid()));  // two suites running at once never share a folder
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

}  // namespace advbo::testing
