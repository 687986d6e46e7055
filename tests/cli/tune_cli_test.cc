// End-to-end: `advbo bo` on training runs — BO-BOS and Hyperband on an HPO task and on a
// training command (stopped by SIGTERM to its process group), the standard loop on --task,
// RM-GP-UCB with --meta traces, and bad input rejected before any output.
#include <gtest/gtest.h>

#include <algorithm>
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

class TuneCli : public advbo::testing::TempDirTest {};

TEST_F(TuneCli, BoBosOnATaskWritesOneRecordPerTrainingRun) {
  const fs::path out = dir_ / "t.jsonl";
  ASSERT_EQ(RunAdvbo("bo --task mnist-lr --task-examples 600 --algo bo-bos --epochs 10 "
                     "--warmup 3 --epoch-budget 150 --bos-paths 2000 --seed 3 -q -o " +
                         out.string(),
                     dir_ / "log"),
            0)
      << Slurp(dir_ / "log");
  const auto lines = ReadJsonl(out);
  ASSERT_GE(lines.size(), 9u);
  EXPECT_EQ(lines.front()["type"], "config");
  EXPECT_EQ(lines.front()["task"], "mnist-lr");
  EXPECT_EQ(lines.front()["gamma"], 0.95);
  EXPECT_EQ(lines.front()["seed"], 3);
  const auto& sum = lines.back();
  EXPECT_EQ(sum["type"], "summary");
  int prev = 0, runs = 0;
  double best = 1.0;
  for (size_t i = 1; i + 1 < lines.size(); ++i) {
    const auto& r = lines[i];
    ASSERT_EQ(r["type"], "training");
    EXPECT_EQ(r["epochs_total"].get<int>(), prev + r["epochs"].get<int>());
    prev = r["epochs_total"];
    EXPECT_EQ(r["curve"].size(), r["epochs"].get<size_t>());
    EXPECT_DOUBLE_EQ(r["error"].get<double>(), r["curve"].back().get<double>());
    for (const char* k : {"batch_size", "l2", "learning_rate"})
      EXPECT_TRUE(r["params"].contains(k));
    if (r["phase"] == "init") EXPECT_EQ(r["epochs"], 10);
    best = std::min(best, r["error"].get<double>());
    ++runs;
  }
  EXPECT_LE(prev, 150);
  EXPECT_EQ(sum["epochs_used"], prev);
  EXPECT_EQ(sum["evaluations"], runs);
  EXPECT_DOUBLE_EQ(sum["best_error"].get<double>(), best);
  EXPECT_LT(best, 0.3);
  // Same seed, same trace (apart from timings).
  const fs::path again = dir_ / "u.jsonl";
  ASSERT_EQ(RunAdvbo("bo --task mnist-lr --task-examples 600 --algo bo-bos --epochs 10 "
                     "--warmup 3 --epoch-budget 150 --bos-paths 2000 --seed 3 -q -o " +
                         again.string(),
                     dir_ / "log"),
            0);
  const auto lines2 = ReadJsonl(again);
  ASSERT_EQ(lines2.size(), lines.size());
  for (size_t i = 1; i + 1 < lines.size(); ++i) EXPECT_EQ(lines2[i]["curve"], lines[i]["curve"]);
}

TEST_F(TuneCli, HyperbandStopsATrainingCommandBySigterm) {
  // A training script that ignores $ADVBO_MAX_EPOCHS and would run 40 epochs: advbo ends each
  // run at its rung's epochs with SIGTERM to the process group (logged by the trap).
  const fs::path script = dir_ / "train.sh", terms = dir_ / "terms", out = dir_ / "h.jsonl";
  std::ofstream(script) << "trap 'echo term >> " << terms.string() << "; exit 143' TERM\n"
                        << "n=1\nwhile [ $n -le 40 ]; do\n"
                        << "  awk -v x=\"$1\" -v n=$n 'BEGIN{printf \"%.4f\\n\", "
                           "0.1+0.5*(x-0.3)^2+0.5*exp(-0.3*n)}'\n"
                        << "  sleep 0.02\n  n=$((n+1))\ndone\n";
  ASSERT_EQ(RunAdvbo("bo --command 'sh " + script.string() +
                         "' --bounds 0:1 --algo hyperband "
                         "--epochs 9 --epoch-budget 40 -q -o " +
                         out.string(),
                     dir_ / "log"),
            0)
      << Slurp(dir_ / "log");
  const auto lines = ReadJsonl(out);
  ASSERT_GE(lines.size(), 3u);
  EXPECT_EQ(lines.front()["max_epochs_R"], 9);
  int stopped = 0;
  for (size_t i = 1; i + 1 < lines.size(); ++i) {
    const int e = lines[i]["epochs"];
    EXPECT_TRUE(e == 1 || e == 3 || e == 9) << e;  // rungs of R = 9, eta = 3
    stopped += e < 40;
  }
  EXPECT_GT(stopped, 0);
  std::string t = Slurp(terms);
  EXPECT_EQ(static_cast<int>(std::count(t.begin(), t.end(), '\n')), stopped)
      << "every run ended by advbo got SIGTERM";
  EXPECT_LE(lines.back()["epochs_used"].get<int>(), 40);
}

TEST_F(TuneCli, TrainingCommandPrintingGarbageFailsTheRunCleanly) {
  const fs::path out = dir_ / "g.jsonl";
  EXPECT_EQ(RunAdvbo("bo --command 'echo 0.5; echo oops; :' --bounds 0:1 --algo hyperband --epochs "
                     "9 --epoch-budget 30 -q -o " +
                         out.string(),
                     dir_ / "log"),
            2);
  EXPECT_NE(Slurp(dir_ / "log").find("'oops' for epoch 2"), std::string::npos)
      << Slurp(dir_ / "log");
  const auto lines = ReadJsonl(out);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines.back()["stop_reason"], "evaluation failed");
  EXPECT_EQ(RunAdvbo("bo --command 'echo 1.5; :' --bounds 0:1 --algo hyperband --epochs 9 -q",
                     dir_ / "log"),
            2);
  EXPECT_NE(Slurp(dir_ / "log").find("must lie in [0, 1]"), std::string::npos);
}

TEST_F(TuneCli, StandardLoopOnATaskAndRmGpUcbWithMetaTraces) {
  const fs::path a = dir_ / "a.jsonl", b = dir_ / "b.jsonl", rm = dir_ / "rm.jsonl";
  const std::string task =
      "bo --task mnist-lssvm --task-examples 300 --epochs 20 --acq ucb "
      "--budget 6 -q ";
  ASSERT_EQ(RunAdvbo(task + "--seed 1 -o " + a.string(), dir_ / "log"), 0) << Slurp(dir_ / "log");
  const auto la = ReadJsonl(a);
  ASSERT_EQ(la.size(), 8u);
  EXPECT_EQ(la.front()["task"], "mnist-lssvm");
  EXPECT_TRUE(la[1]["params"].contains("C"));
  EXPECT_LE(la[1]["y"].get<double>(), 1.0);
  ASSERT_EQ(RunAdvbo(task + "--task-offset 300 --seed 2 -o " + b.string(), dir_ / "log"), 0);
  ASSERT_EQ(RunAdvbo(task + "--task-offset 600 --algo rm-gp-ucb --meta " + a.string() + "," +
                         b.string() + " -o " + rm.string(),
                     dir_ / "log"),
            0)
      << Slurp(dir_ / "log");
  const auto lr = ReadJsonl(rm);
  ASSERT_EQ(lr.back()["final_weights"].size(), 2u);
  EXPECT_NEAR(
      lr.back()["final_weights"][0].get<double>() + lr.back()["final_weights"][1].get<double>(),
      1.0, 1e-9);
  EXPECT_NE(Slurp(dir_ / "log").find("meta-task weights"), std::string::npos);
}

TEST_F(TuneCli, BadInputIsRejectedBeforeAnyOutput) {
  const fs::path out = dir_ / "x.jsonl";
  const std::string o = " -q -o " + out.string();
  for (const std::string& args : std::vector<std::string>{
           "bo --task mnist-lr --algo bo-bos --gamma 0",
           "bo --task mnist-lr --algo bo-bos --kappa 0.5",
           "bo --task mnist-lr --algo bo-bos --warmup 50", "bo --task mnist-xgb --algo bo-bos",
           "bo --task mnist-lr --task-data /nonexistent/mnist", "bo --task mnist-lr --bounds 0:1",
           "bo --task mnist-lr --task-transform blur", "bo -f branin --algo bo-bos",
           "bo --task mnist-lr --maximize", "bo --algo hyperband --command true",
           "bo --algo hyperband --task mnist-lr --eta 1", "bo -f branin --meta a.jsonl",
           "bo -f branin --acq ucb --algo rm-gp-ucb --meta /nonexistent.jsonl",
           "bo -f branin --algo rm-gp-ucb --meta a.jsonl"}) {
    EXPECT_EQ(RunAdvbo(args + o, dir_ / "log"), 1) << args << "\n" << Slurp(dir_ / "log");
    EXPECT_FALSE(fs::exists(out)) << args;
    EXPECT_FALSE(fs::exists(out.string() + ".partial")) << args;
  }
  RunAdvbo("bo --task mnist-lr --task-data /nonexistent/mnist" + o, dir_ / "log");
  EXPECT_NE(Slurp(dir_ / "log").find("/nonexistent/mnist"), std::string::npos);
}

}  // namespace
