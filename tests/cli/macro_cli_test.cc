// End-to-end: `advbo macro` (epsilon-Macro-BO on a synthetic field) and its bad-input probes.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/cli_test_util.h"

namespace {
namespace fs = std::filesystem;

using advbo::testing::ReadJsonl;
using advbo::testing::RunAdvbo;
using advbo::testing::Slurp;

class MacroCli : public advbo::testing::TempDirTest {};

TEST_F(MacroCli, TraceHasOneLinePerMacroActionAndEpisodeAndIsReproducible) {
  const fs::path out = dir_ / "m.jsonl";
  const std::string args = "macro --algo emacro --field plankton -H 2 -N 20 -r 2 --seed 4 -q -o ";
  ASSERT_EQ(RunAdvbo(args + out.string(), dir_ / "log"), 0) << Slurp(dir_ / "log");
  const std::string log = Slurp(dir_ / "log");
  EXPECT_NE(log.find("avg normalized output"), std::string::npos);
  const auto lines = ReadJsonl(out);
  ASSERT_EQ(lines.size(), 1u + 2 * (5 + 1) + 1);  // config, 2 x (5 steps + episode), summary
  EXPECT_EQ(lines.front()["type"], "config");
  EXPECT_EQ(lines.front()["seed"], 4);
  EXPECT_EQ(lines.front()["kappa"], 4);
  EXPECT_EQ(lines.back()["type"], "summary");
  int steps = 0;
  double sum = 0;
  for (const auto& l : lines)
    if (l["type"] == "step") {
      ++steps;
      EXPECT_EQ(l["points"].size(), 4u);
      EXPECT_LE(l["horizon"].get<int>(), 2);
    } else if (l["type"] == "episode") {
      sum += l["avg_normalized_output"].get<double>();
      EXPECT_EQ(l["regret_curve"].size(), 21u);
    }
  EXPECT_EQ(steps, 10);
  EXPECT_NEAR(lines.back()["avg_normalized_output"]["mean"].get<double>(), sum / 2, 1e-12);
  const fs::path out2 = dir_ / "m2.jsonl";
  ASSERT_EQ(RunAdvbo(args + out2.string(), dir_ / "log2"), 0);
  const auto again = ReadJsonl(out2);
  ASSERT_EQ(again.size(), lines.size());
  for (size_t i = 0; i < lines.size(); ++i)
    if (lines[i]["type"] == "step") {
      EXPECT_EQ(lines[i]["points"], again[i]["points"]);
      EXPECT_EQ(lines[i]["y"], again[i]["y"]);
    }
}

TEST_F(MacroCli, BadInputIsAnErrorAndWritesNothing) {
  const fs::path out = dir_ / "bad.jsonl";
  for (const std::string bad :
       {"--field lake", "--algo emacr0", "-H 0", "-N 0", "--beta -1", "--epsilon 0", "--epsilon -2",
        "--iterations 0", "-r 0", "--seed -1", "--actions-per-location 0", "--beta nan"}) {
    const int rc = RunAdvbo("macro -q " + bad + " -o " + out.string(), dir_ / "log");
    EXPECT_EQ(rc, 1) << bad;
    EXPECT_NE(Slurp(dir_ / "log").find("advbo: error"), std::string::npos) << bad;
    EXPECT_FALSE(fs::exists(out)) << bad;
    EXPECT_FALSE(fs::exists(out.string() + ".partial")) << bad;
  }
}

}  // namespace
