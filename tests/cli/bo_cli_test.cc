// End-to-end: `advbo bo` on a test function and on external commands, and on bad input.
#include <gtest/gtest.h>

#include <array>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <vector>

#include "cli/cli_test_util.h"

namespace {
namespace fs = std::filesystem;

using advbo::testing::ReadJsonl;
using advbo::testing::RunAdvbo;
using advbo::testing::Slurp;

class BoCli : public advbo::testing::TempDirTest {};

TEST_F(BoCli, TestFunctionTraceAndSummary) {
  const fs::path out = dir_ / "t.jsonl";
  const int rc =
      RunAdvbo("bo -f branin --acq ei --budget 40 --seed 3 -q -o " + out.string(), dir_ / "log");
  const std::string log = Slurp(dir_ / "log");
  ASSERT_EQ(rc, 0) << log;
  EXPECT_NE(log.find("simple regret"), std::string::npos);
  auto lines = ReadJsonl(out);
  ASSERT_EQ(lines.size(), 42u);  // config + 40 evaluations + summary
  EXPECT_EQ(lines.front()["type"], "config");
  EXPECT_EQ(lines.front()["seed"], 3);
  EXPECT_EQ(lines.back()["type"], "summary");
  EXPECT_LT(lines.back()["simple_regret"].get<double>(), 0.01);
  double best = 1e300;
  for (size_t i = 1; i + 1 < lines.size(); ++i) {
    const auto& e = lines[i];
    EXPECT_EQ(e["evaluation"], static_cast<int>(i));
    best = std::min(best, e["y"].get<double>());
    EXPECT_DOUBLE_EQ(e["best_y"].get<double>(), best);
    const auto x = e["x"].get<std::vector<double>>();
    EXPECT_TRUE(x[0] >= -5 && x[0] <= 10 && x[1] >= 0 && x[1] <= 15);
  }
  EXPECT_DOUBLE_EQ(lines.back()["best_y"].get<double>(), best);
  // Same seed, same trace.
  const fs::path out2 = dir_ / "t2.jsonl";
  ASSERT_EQ(
      RunAdvbo("bo -f branin --acq ei --budget 40 --seed 3 -q -o " + out2.string(), dir_ / "log2"),
      0);
  auto lines2 = ReadJsonl(out2);
  for (size_t i = 1; i + 1 < lines.size(); ++i) EXPECT_EQ(lines[i]["x"], lines2[i]["x"]);
}

// Every proposal lies in the box exactly (no -5.9e-18 on [0, 15]), so the project's own
// traces are accepted as rm-gp-ucb meta-tasks (10 of 20 Branin-EI seeds were not).
TEST_F(BoCli, TracesStayInTheBoxAndServeAsMetaTasks) {
  std::string metas;
  for (int seed = 0; seed < 8; ++seed) {
    const fs::path out = dir_ / ("m" + std::to_string(seed) + ".jsonl");
    ASSERT_EQ(RunAdvbo("bo -f branin --acq ei --budget 25 --seed " + std::to_string(seed) +
                           " -q -o " + out.string(),
                       dir_ / "log"),
              0)
        << Slurp(dir_ / "log");
    for (const auto& e : ReadJsonl(out)) {
      if (e["type"] != "evaluation") continue;
      const auto x = e["x"].get<std::vector<double>>();
      EXPECT_TRUE(x[0] >= -5 && x[0] <= 10 && x[1] >= 0 && x[1] <= 15)
          << "seed " << seed << ": " << e["x"].dump();
    }
    metas += (metas.empty() ? "" : ",") + out.string();
  }
  EXPECT_EQ(RunAdvbo("bo -f branin --acq ucb --algo rm-gp-ucb --budget 6 -q --meta " + metas,
                     dir_ / "log"),
            0)
      << Slurp(dir_ / "log");
}

TEST_F(BoCli, ExternalCommandReceivesXAndReturnsY) {
  const fs::path script = dir_ / "obj.sh";
  {
    std::ofstream s(script);
    s << "#!/bin/sh\necho \"log line for $ADVBO_X\"\n"
         "awk -v a=\"$1\" -v b=\"$2\" 'BEGIN { print (a-0.25)^2 + (b-0.5)^2 }'\n";
  }
  fs::permissions(script, fs::perms::owner_all);
  const fs::path out = dir_ / "c.jsonl";
  const int rc = RunAdvbo(
      "bo -c " + script.string() + " --bounds 0:1 --dim 2 --budget 15 -q -o " + out.string(),
      dir_ / "log");
  ASSERT_EQ(rc, 0) << Slurp(dir_ / "log");
  auto lines = ReadJsonl(out);
  ASSERT_EQ(lines.size(), 17u);
  for (size_t i = 1; i + 1 < lines.size(); ++i) {
    const auto x = lines[i]["x"].get<std::vector<double>>();
    EXPECT_NEAR(lines[i]["y"].get<double>(),
                (x[0] - 0.25) * (x[0] - 0.25) + (x[1] - 0.5) * (x[1] - 0.5), 1e-5);
  }
  EXPECT_LT(lines.back()["best_y"].get<double>(), 1e-2);
}

TEST_F(BoCli, FailingCommandStopsCleanlyOrContinues) {
  const fs::path script = dir_ / "flaky.sh";
  {
    std::ofstream s(script);
    // Fails (non-numeric output) whenever x1 > 0.5, else returns x1.
    s << "#!/bin/sh\nawk -v a=\"$1\" 'BEGIN { if (a > 0.5) print \"oops\"; else print a }'\n";
  }
  fs::permissions(script, fs::perms::owner_all);
  const fs::path out = dir_ / "f.jsonl";
  int rc = RunAdvbo("bo -c " + script.string() +
                        " --bounds 0:1 --dim 1 --budget 12 --seed 1 -q -o " + out.string(),
                    dir_ / "log");
  EXPECT_EQ(rc, 2) << Slurp(dir_ / "log");
  auto lines = ReadJsonl(out);  // complete file: config, evaluations, summary
  ASSERT_GE(lines.size(), 3u);
  EXPECT_EQ(lines.back()["stop_reason"], "evaluation failed");
  EXPECT_FALSE(lines[lines.size() - 2]["ok"].get<bool>());
  EXPECT_NE(Slurp(dir_ / "log").find("not a number"), std::string::npos);

  rc = RunAdvbo("bo -c " + script.string() +
                    " --bounds 0:1 --dim 1 --budget 12 --seed 1 --on-error continue -q -o " +
                    out.string(),
                dir_ / "log");
  EXPECT_EQ(rc, 0) << Slurp(dir_ / "log");
  lines = ReadJsonl(out);
  EXPECT_EQ(lines.size(), 14u);
  EXPECT_EQ(lines.back()["stop_reason"], "budget");
  EXPECT_GT(lines.back()["failures"].get<int>(), 0);
}

// --algo cl-batch on an external command: batches of --batch-max points run at once (the
// objective logs its start and end; some starts overlap earlier evaluations' runs), every
// evaluation is in the trace with its batch, and the summary counts the batches.
TEST_F(BoCli, BatchAlgorithmsRunABatchsCommandsConcurrently) {
  const fs::path script = dir_ / "obj.sh", events = dir_ / "events";
  {
    std::ofstream s(script);
    s << "#!/bin/sh\necho start >> " << events.string() << "\nsleep 0.3\necho end >> "
      << events.string() << "\nawk -v a=\"$1\" 'BEGIN { print (a-0.3)^2 }'\n";
  }
  fs::permissions(script, fs::perms::owner_all);
  const fs::path out = dir_ / "b.jsonl";
  const int rc = RunAdvbo("bo -c " + script.string() +
                              " --bounds 0:1 --algo cl-batch --batch-max 4 --init 3 --budget 11 -q "
                              "-o " +
                              out.string(),
                          dir_ / "log");
  ASSERT_EQ(rc, 0) << Slurp(dir_ / "log");
  int running = 0, most = 0;
  std::ifstream ev(events);
  for (std::string line; std::getline(ev, line);) {
    running += line == "start" ? 1 : -1;
    most = std::max(most, running);
  }
  EXPECT_GE(most, 2) << "batch evaluations ran one after another";
  EXPECT_LE(most, 4);
  const auto lines = ReadJsonl(out);
  ASSERT_EQ(lines.size(), 13u);
  EXPECT_EQ(lines.front()["algo"], "cl-batch");
  EXPECT_EQ(lines[4]["extra"]["batch"], 1);
  EXPECT_EQ(lines[4]["extra"]["batch_size"], 4);
  EXPECT_EQ(lines.back()["batch_sizes"], (std::vector<int>{4, 4}));
  EXPECT_DOUBLE_EQ(lines.back()["speedup"].get<double>(), 0.75);
  for (size_t i = 1; i + 1 < lines.size(); ++i) {
    const double x = lines[i]["x"][0].get<double>();
    EXPECT_NEAR(lines[i]["y"].get<double>(), (x - 0.3) * (x - 0.3), 1e-5);
  }
}

TEST_F(BoCli, BadInputIsRejectedBeforeAnyOutput) {
  const fs::path out = dir_ / "never.jsonl";
  for (const std::string args : {"bo -f nope",
                                 "bo -f branin --dim 3",
                                 "bo -c true",
                                 "bo -c true --bounds 1:0",
                                 "bo -f branin --acq xyz",
                                 "bo -f branin --kernel rbf",
                                 "bo -f branin --noise -1",
                                 "bo -f branin -c true --bounds 0:1",
                                 "bo -f branin --init grid",
                                 "bo -f branin --algo batch",
                                 "bo -f branin --algo hybrid-ei --acq ucb",
                                 "bo -f branin --algo hybrid-ei --hybrid-eps -1",
                                 "bo -f branin --algo cl-batch --batch-max 0",
                                 "bo -f branin --algo hybrid-ei --fantasy max",
                                 "bo -f branin --maximize --algo hybrid-ei --fantasy M",
                                 "bo -f branin --candidates /nonexistent/c.csv",
                                 "bo -f branin --beta srinivas2010:2",
                                 "bo -f branin --beta constant:1e4444",
                                 "bo -c true --bounds 0:1abc",
                                 "bo -f branin --algo uhe-bo",
                                 "bo -f branin --minimize --maximize"}) {
    EXPECT_EQ(RunAdvbo(args + " -q -o " + out.string(), dir_ / "log"), 1) << args;
    EXPECT_NE(Slurp(dir_ / "log").find("error"), std::string::npos) << args;
    EXPECT_FALSE(fs::exists(out)) << args;
    EXPECT_FALSE(fs::exists(out.string() + ".partial")) << args;
  }
}

// True once process `pid` is gone or a zombie (killed, not yet reaped by init).
bool Gone(const std::string& pid) {
  for (int k = 0; k < 50; ++k) {
    std::ifstream stat("/proc/" + pid + "/stat");
    std::string line;
    if (!std::getline(stat, line)) return true;
    const auto close = line.rfind(')');
    if (close != std::string::npos && line.size() > close + 2 && line[close + 2] == 'Z')
      return true;
    std::system("sleep 0.1");
  }
  return false;
}

// --eval-timeout kills the objective's whole process group (a grandchild included) and
// records a failed evaluation.
TEST_F(BoCli, EvalTimeoutKillsTheWholeProcessGroup) {
  const fs::path out = dir_ / "t.jsonl", pid = dir_ / "pid";
  const std::string cmd = "'sleep 60 & echo $! > " + pid.string() + "; wait; echo 1'";
  const int rc = RunAdvbo(
      "bo -c " + cmd + " --bounds 0:1 --dim 1 --budget 1 --eval-timeout 0.5 -q -o " + out.string(),
      dir_ / "log");
  EXPECT_EQ(rc, 2) << Slurp(dir_ / "log");  // stopped by a failed evaluation
  const auto lines = ReadJsonl(out);
  ASSERT_GE(lines.size(), 2u);
  EXPECT_EQ(lines[1]["ok"], false);
  EXPECT_NE(lines[1]["error"].get<std::string>().find("exceeded --eval-timeout"),
            std::string::npos);
  EXPECT_LT(lines[1]["seconds_objective"].get<double>(), 5.0);
  const std::string grandchild = Slurp(pid).substr(0, Slurp(pid).find('\n'));
  ASSERT_FALSE(grandchild.empty());
  EXPECT_TRUE(Gone(grandchild)) << grandchild;
  EXPECT_EQ(RunAdvbo("bo -c true --bounds 0:1 --dim 1 --eval-timeout -1", dir_ / "log"), 1);
}

// SIGINT to advbo while an objective runs kills the objective's process group too.
TEST_F(BoCli, InterruptKillsTheRunningObjective) {
  const fs::path pid = dir_ / "pid", advbo_pid = dir_ / "advbo_pid";
  const std::string cmd = "'sleep 60 & echo $! > " + pid.string() + "; wait; echo 1'";
  const std::string shell = advbo::testing::kBin + " bo -c " + cmd +
                            " --bounds 0:1 --dim 1 --budget 1 -q > /dev/null 2>&1 & echo $! > " +
                            advbo_pid.string() + "; wait";
  std::ofstream(dir_ / "run.sh") << shell << "\n";
  std::system(("sh " + (dir_ / "run.sh").string() + " &").c_str());
  for (int k = 0; k < 100 && Slurp(pid).empty(); ++k) std::system("sleep 0.1");
  const std::string grandchild = Slurp(pid).substr(0, Slurp(pid).find('\n'));
  const std::string advbo = Slurp(advbo_pid).substr(0, Slurp(advbo_pid).find('\n'));
  ASSERT_FALSE(grandchild.empty());
  ASSERT_FALSE(advbo.empty());
  std::system(("kill -INT " + advbo).c_str());
  EXPECT_TRUE(Gone(advbo));
  EXPECT_TRUE(Gone(grandchild));
}

// PO-GP-UCB through the CLI: every evaluation is a row of the records file (x = the record,
// extra.index = its row), the budget holds, the summary names the release (r chosen by the
// guideline, omega <= sigma_min), same seed = same trace; bad options are refused first.
TEST_F(BoCli, PoGpUcbEvaluatesTheRecordsItReleased) {
  const fs::path csv = dir_ / "records.csv";
  std::vector<std::array<double, 2>> rows;
  {
    std::ofstream f(csv);
    for (int i = 0; i < 21; ++i)
      for (int j = 0; j < 21; ++j) {
        rows.push_back({-5 + 15.0 * i / 20, 15.0 * j / 20});
        f << rows.back()[0] << "," << rows.back()[1] << "\n";
      }
  }
  const std::string base =
      "bo -f branin --acq ucb --kernel se --algo po-gp-ucb --po-epsilon 20 "
      "--po-delta 1e-3 --budget 12 --candidates " +
      csv.string() + " -q";
  const fs::path a = dir_ / "a.jsonl", b = dir_ / "b.jsonl";
  ASSERT_EQ(RunAdvbo(base + " --seed 4 -o " + a.string(), dir_ / "log"), 0) << Slurp(dir_ / "log");
  ASSERT_EQ(RunAdvbo(base + " --seed 4 -o " + b.string(), dir_ / "log"), 0);
  const auto la = ReadJsonl(a), lb = ReadJsonl(b);
  ASSERT_EQ(la.size(), 14u);  // config, 12 evaluations, summary
  EXPECT_EQ(la.front()["algo"], "po-gp-ucb");
  // The config names what ran: an isotropic kernel and the paper's beta_t, not the defaults.
  EXPECT_EQ(la.front()["ard"], false);
  EXPECT_EQ(la.front()["beta"], "srinivas2010 (delta' = 0.025)");
  for (size_t k = 1; k + 1 < la.size(); ++k) {
    const int i = la[k]["extra"]["index"].get<int>();
    ASSERT_GE(i, 0);
    ASSERT_LT(i, 441);
    EXPECT_NEAR(la[k]["x"][0].get<double>(), rows[i][0], 1e-9);
    EXPECT_NEAR(la[k]["x"][1].get<double>(), rows[i][1], 1e-9);
    EXPECT_EQ(la[k]["x"], lb[k]["x"]);  // reproducible
  }
  const auto& sum = la.back();
  EXPECT_GE(sum["po_r"].get<int>(), 5);
  EXPECT_EQ(sum["po_r"].get<int>() % 5, 0);
  EXPECT_FALSE(sum["lifted"].get<bool>());
  EXPECT_LE(sum["omega"].get<double>(), sum["sigma_min"].get<double>());
  EXPECT_FALSE(sum["differential_privacy"].get<bool>());

  const fs::path out = dir_ / "x.jsonl";
  for (const std::string& bad :
       {std::string("bo -f branin --acq ucb --algo po-gp-ucb --po-epsilon 1"),  // no records
        base + " --po-epsilon -2", base + " --po-delta 1.5", base + " --po-r -1",
        base + " --acq ei", base + " --po-epsilon 1e-3"}) {  // no r qualifies
    EXPECT_EQ(RunAdvbo(bad + " -o " + out.string(), dir_ / "log"), 1) << bad;
    EXPECT_FALSE(fs::exists(out)) << bad;
    EXPECT_FALSE(fs::exists(out.string() + ".partial")) << bad;
  }
}

}  // namespace
