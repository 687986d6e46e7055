// End-to-end: `advbo fbo` — the privacy accountant's printed loss, the output files of a run,
// reproducibility, the sources each algorithm uses, and bad input refused before any output.
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

class FboCli : public advbo::testing::TempDirTest {};

TEST_F(FboCli, PrivacyOnlyPrintsTheThesisLoss) {
  ASSERT_EQ(RunAdvbo("fbo --privacy-only --agents 200 --q 0.25 --z 1 --rounds 40", dir_ / "log"),
            0);
  EXPECT_NE(Slurp(dir_ / "log").find("epsilon = 9.9085"), std::string::npos) << Slurp(dir_ / "log");
  ASSERT_EQ(RunAdvbo("fbo --privacy-only --agents 200 --q 0.25 --z 1.5 --rounds 40", dir_ / "log"),
            0);
  EXPECT_NE(Slurp(dir_ / "log").find("epsilon = 5.22"), std::string::npos) << Slurp(dir_ / "log");
}

TEST_F(FboCli, RunWritesReproducibleOutputs) {
  const std::string base = "fbo --agents 12 --rounds 6 --init 2 --domain 300 -q --seed 3 ";
  const fs::path a = dir_ / "a", b = dir_ / "b";
  ASSERT_EQ(RunAdvbo(base + "--out-dir " + a.string(), dir_ / "log"), 0) << Slurp(dir_ / "log");
  ASSERT_EQ(RunAdvbo(base + "--out-dir " + b.string(), dir_ / "log"), 0);
  for (const char* f : {"rounds.jsonl", "summary.json", "table.txt", "curves.csv", "curves.png"})
    EXPECT_TRUE(fs::exists(a / f)) << f;
  EXPECT_EQ(Slurp(a / "rounds.jsonl"), Slurp(b / "rounds.jsonl"));
  const auto rounds = ReadJsonl(a / "rounds.jsonl");
  ASSERT_EQ(rounds.size(), 7u);  // t = 0..6
  for (const auto& r : rounds) {
    ASSERT_EQ(r["index"].size(), 12u);
    for (const auto& i : r["index"]) {
      EXPECT_GE(i.get<int>(), 0);
      EXPECT_LT(i.get<int>(), 300);
    }
    for (const auto& s : r["source"]) EXPECT_TRUE(s == -1 || s == -2);  // own TS or server
    EXPECT_GE(r["mean_simple_regret"].get<double>(), 0.0);
  }
  const auto sum = nlohmann::json::parse(Slurp(a / "summary.json"));
  EXPECT_EQ(sum["algo"], "dp-fts-de");
  EXPECT_GT(sum["privacy"]["epsilon"].get<double>(), 0.0);
  EXPECT_EQ(sum["seed"], 3);
  // ts never communicates; fts only uses other agents' messages.
  ASSERT_EQ(RunAdvbo(base + "--algo ts --out-dir " + (dir_ / "t").string(), dir_ / "log"), 0);
  for (const auto& r : ReadJsonl(dir_ / "t" / "rounds.jsonl"))
    for (const auto& s : r["source"]) EXPECT_EQ(s, -1);
  EXPECT_TRUE(nlohmann::json::parse(Slurp(dir_ / "t" / "summary.json"))["privacy"].is_null());
  ASSERT_EQ(RunAdvbo(base + "--algo fts --out-dir " + (dir_ / "f").string(), dir_ / "log"), 0);
  for (const auto& r : ReadJsonl(dir_ / "f" / "rounds.jsonl"))
    for (size_t n = 0; n < r["source"].size(); ++n) EXPECT_NE(r["source"][n], static_cast<int>(n));
}

TEST_F(FboCli, BadInputIsRejectedBeforeAnyOutput) {
  const fs::path out = dir_ / "o";
  for (const std::string& args : std::vector<std::string>{
           "fbo --algo qts", "fbo --family cifar", "fbo --q 0", "fbo --q 1.5", "fbo --z -1",
           "fbo --clip 0", "fbo --agents 1 --algo fts", "fbo --schedule log", "fbo --delta 2",
           "fbo --rounds 0", "fbo --family mnist-lssvm --agents 60",
           "fbo --family mnist-lssvm --mnist-dir /nonexistent/mnist"}) {
    EXPECT_EQ(RunAdvbo(args + " -q --out-dir " + out.string(), dir_ / "log"), 1)
        << args << "\n"
        << Slurp(dir_ / "log");
    EXPECT_FALSE(fs::exists(out / "rounds.jsonl")) << args;
    EXPECT_FALSE(fs::exists(out / "rounds.jsonl.partial")) << args;
  }
  EXPECT_EQ(RunAdvbo("fbo --algo ts --privacy-only", dir_ / "log"), 1);
}

// --command agents: the command gets AGENT and x (inside --bounds), every output it prints is
// an observation; a failing command stops the run with no result file.
TEST_F(FboCli, CommandAgents) {
  const fs::path script = dir_ / "agent.sh", log_file = dir_ / "calls";
  {
    std::ofstream f(script);
    f << "#!/bin/sh\necho \"$1 $2 $ADVBO_AGENT\" >> " << log_file.string()
      << "\nawk -v a=\"$1\" -v x=\"$2\" 'BEGIN { print -(x - 2 - 0.1 * a)^2 }'\n";
  }
  fs::permissions(script, fs::perms::owner_all);
  const std::string base =
      "fbo -c " + script.string() + " --bounds 1:4 --agents 3 --rounds 4 --init 2 --domain 64 -q ";
  ASSERT_EQ(RunAdvbo(base + "--algo fts --out-dir " + (dir_ / "o").string(), dir_ / "log"), 0)
      << Slurp(dir_ / "log");
  std::ifstream calls(log_file);
  int n = 0;
  for (int agent; calls >> agent;) {
    double x;
    int env_agent;
    calls >> x >> env_agent;
    EXPECT_EQ(agent, env_agent);
    EXPECT_GE(agent, 0);
    EXPECT_LT(agent, 3);
    EXPECT_GE(x, 1.0);
    EXPECT_LE(x, 4.0);
    ++n;
  }
  EXPECT_EQ(n, 3 * (2 + 4));  // every agent: 2 initial points + 4 rounds
  const auto rounds = ReadJsonl(dir_ / "o" / "rounds.jsonl");
  ASSERT_EQ(rounds.size(), 5u);
  for (const auto& y : rounds.back()["y"]) EXPECT_LE(y.get<double>(), 0.0);
  // --maximize (the default, spelled as in `advbo bo`) gives the same rounds; --minimize
  // flips the sign of every output; both at once is refused.
  ASSERT_EQ(RunAdvbo(base + "--algo fts --maximize -o " + (dir_ / "max").string(), dir_ / "log"), 0)
      << Slurp(dir_ / "log");
  EXPECT_EQ(ReadJsonl(dir_ / "max" / "rounds.jsonl"), rounds);
  ASSERT_EQ(RunAdvbo(base + "--algo fts --minimize -o " + (dir_ / "min").string(), dir_ / "log"), 0)
      << Slurp(dir_ / "log");
  const auto min_rounds = ReadJsonl(dir_ / "min" / "rounds.jsonl");  // outlives the loop
  ASSERT_FALSE(min_rounds.empty());
  for (const auto& y : min_rounds.back()["y"]) EXPECT_GE(y.get<double>(), 0.0);
  EXPECT_EQ(RunAdvbo(base + "--minimize --maximize -o " + (dir_ / "both").string(), dir_ / "log"),
            1);
  EXPECT_FALSE(fs::exists(dir_ / "both"));
  const fs::path bad = dir_ / "bad.sh";
  {
    std::ofstream f(bad);
    f << "#!/bin/sh\necho oops\n";
  }
  fs::permissions(bad, fs::perms::owner_all);
  EXPECT_EQ(
      RunAdvbo("fbo -c " + bad.string() + " --bounds 0:1 --agents 2 --rounds 2 -q --out-dir " +
                   (dir_ / "b").string(),
               dir_ / "log"),
      1);
  EXPECT_NE(Slurp(dir_ / "log").find("not a number"), std::string::npos) << Slurp(dir_ / "log");
  EXPECT_FALSE(fs::exists(dir_ / "b" / "rounds.jsonl"));
  EXPECT_FALSE(fs::exists(dir_ / "b" / "rounds.jsonl.partial"));
  EXPECT_EQ(
      RunAdvbo("fbo -c " + bad.string() + " -q --out-dir " + (dir_ / "b").string(), dir_ / "log"),
      1);  // no --bounds
}

}  // namespace
