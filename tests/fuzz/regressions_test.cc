// Replays every committed fuzz input (tests/fuzz/corpus/<target>/*: seeds and inputs that
// once crashed a parser) through its harness: each must be refused cleanly or parsed, never
// crash (run under the sanitizer build in CI).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "fuzz/fuzz_targets.h"

namespace {
namespace fs = std::filesystem;

TEST(FuzzRegressions, CommittedInputsAreHandled) {
  const fs::path root = fs::path(ADVBO_SOURCE_DIR) / "tests" / "fuzz" / "corpus";
  size_t replayed = 0;
  for (const auto& [name, harness] : advbo::fuzz::Harnesses()) {
    size_t here = 0;
    for (const auto& e : fs::directory_iterator(root / name)) {
      std::ifstream in(e.path(), std::ios::binary);
      const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), {});
      SCOPED_TRACE(e.path().string());
      EXPECT_EQ(harness(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()), 0);
      ++here;
    }
    EXPECT_GT(here, 0u) << name << ": no committed inputs";
    replayed += here;
  }
  EXPECT_GT(replayed, 0u);
}

}  // namespace
