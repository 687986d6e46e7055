// End-to-end: `advbo bench` tables, shards + merge = one run, resume, bad input.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <vector>

#include "cli/cli_test_util.h"

namespace {
namespace fs = std::filesystem;
using advbo::testing::RunAdvbo;
using advbo::testing::Slurp;

class BenchCli : public advbo::testing::TempDirTest {};

// The deterministic part of summary.json (timings removed).
nlohmann::json Stats(const fs::path& dir) {
  nlohmann::json s = nlohmann::json::parse(Slurp(dir / "summary.json"));
  for (auto& r : s) {
    r.erase("seconds_per_instance");
    r.erase("model_fraction");
    r.erase("wait_fraction");
    r.erase("bo_over_model");
  }
  return s;
}

int Lines(const fs::path& p) {
  std::ifstream in(p);
  int n = 0;
  for (std::string l; std::getline(in, l);) n += !l.empty();
  return n;
}

TEST_F(BenchCli, ShardsMergeToTheSameTableAsOneRunAndRunsResume) {
  const std::string common =
      "bench --attacks square,random,genattack --indices 0,2,3 --target 2 "
      "--budget 120 --seed 5 -q ";
  ASSERT_EQ(RunAdvbo(common + "--out-dir " + (dir_ / "one").string(), dir_ / "log1"), 0)
      << Slurp(dir_ / "log1");
  ASSERT_EQ(RunAdvbo(common + "--shard 1/2 --out-dir " + (dir_ / "s1").string(), dir_ / "log2"), 0);
  ASSERT_EQ(RunAdvbo(common + "--shard 2/2 --out-dir " + (dir_ / "s2").string(), dir_ / "log3"), 0);
  ASSERT_EQ(RunAdvbo("bench merge " + (dir_ / "s1").string() + " " + (dir_ / "s2").string() +
                         " --out-dir " + (dir_ / "merged").string(),
                     dir_ / "log4"),
            0)
      << Slurp(dir_ / "log4");
  EXPECT_EQ(Lines(dir_ / "one" / "records.jsonl"), 9);  // 3 instances x 3 attacks
  EXPECT_EQ(Lines(dir_ / "s1" / "records.shard-1-of-2.jsonl") +
                Lines(dir_ / "s2" / "records.shard-2-of-2.jsonl"),
            9);
  EXPECT_EQ(Stats(dir_ / "one"), Stats(dir_ / "merged"));
  EXPECT_EQ(Slurp(dir_ / "one" / "curves.csv"), Slurp(dir_ / "merged" / "curves.csv"));
  EXPECT_TRUE(fs::file_size(dir_ / "one" / "curves.png") > 1000);
  const std::string table = Slurp(dir_ / "one" / "table.txt");
  for (const char* name : {"square", "random", "genattack", "ASR%", "median"})
    EXPECT_NE(table.find(name), std::string::npos) << name;
  // Shards are balanced per attack even when n divides the attack count: 2 attacks over 2
  // shards put one instance of each attack in each shard.
  ASSERT_EQ(RunAdvbo("bench --attacks square,random --indices 0,2 --target 2 --budget 40 -q "
                     "--shard 1/2 --out-dir " +
                         (dir_ / "b1").string(),
                     dir_ / "log_b1"),
            0);
  const std::string b1 = Slurp(dir_ / "b1" / "records.shard-1-of-2.jsonl");
  EXPECT_EQ(Lines(dir_ / "b1" / "records.shard-1-of-2.jsonl"), 2);
  EXPECT_NE(b1.find("\"attack\":\"square\""), std::string::npos);
  EXPECT_NE(b1.find("\"attack\":\"random\""), std::string::npos);

  // Resume: a second run finds every job done and adds nothing; a truncated last line
  // (interrupted write) is dropped and its job redone.
  ASSERT_EQ(RunAdvbo(common + "--out-dir " + (dir_ / "one").string(), dir_ / "log5"), 0);
  EXPECT_EQ(Lines(dir_ / "one" / "records.jsonl"), 9);
  {
    std::string all = Slurp(dir_ / "one" / "records.jsonl");
    all = all.substr(0, all.size() - 40);  // cut into the last record
    std::ofstream(dir_ / "one" / "records.jsonl") << all;
  }
  ASSERT_EQ(RunAdvbo(common + "--out-dir " + (dir_ / "one").string(), dir_ / "log6"), 0)
      << Slurp(dir_ / "log6");
  EXPECT_EQ(Lines(dir_ / "one" / "records.jsonl"), 9);
  EXPECT_EQ(Stats(dir_ / "one"), Stats(dir_ / "merged"));
  // Every record is unique per (attack, image, target) and within budget.
  std::set<std::string> keys;
  std::ifstream in(dir_ / "one" / "records.jsonl");
  for (std::string l; std::getline(in, l);) {
    auto r = nlohmann::json::parse(l);
    keys.insert(r["attack"].get<std::string>() + "/" + std::to_string(r["image_index"].get<int>()));
    EXPECT_LE(r["queries_used"].get<long>(), 120);
    EXPECT_LE(r["linf"].get<double>(), 0.3 + 1e-6);
  }
  EXPECT_EQ(keys.size(), 9u);
}

// `evaluate merge` of folders that hold the white-box reference: the merged summary gives the
// same reference and combined robust accuracy as the run it came from (the reference records
// were once lost to a C++17 evaluation-order slip: merge failed with a JSON
// type error whenever a folder held reference records).
TEST_F(BenchCli, EvaluateMergeKeepsTheWhiteBoxReference) {
  const fs::path ev = dir_ / "ev", merged = dir_ / "merged";
  ASSERT_EQ(
      RunAdvbo(
          "evaluate --dataset mnist --model " + advbo::testing::kRoot +
              "/models/mnist_fgsm_overfit.pt -n 4 --budget 40 --reference-steps 10 --threads 1 "
              "-q -o " +
              ev.string(),
          dir_ / "log1"),
      0)
      << Slurp(dir_ / "log1");
  ASSERT_EQ(RunAdvbo("evaluate merge " + ev.string() + " -o " + merged.string(), dir_ / "log2"), 0)
      << Slurp(dir_ / "log2");
  const auto a = nlohmann::json::parse(Slurp(ev / "summary.json"));
  const auto b = nlohmann::json::parse(Slurp(merged / "summary.json"));
  ASSERT_TRUE(a["reference"]["applies"].get<bool>());
  for (const char* k : {"robust_accuracy", "reference_robust_accuracy", "combined_robust_accuracy",
                        "reference_not_evaluated"})
    EXPECT_EQ(a[k], b[k]) << k;
  EXPECT_EQ(b["reference_not_evaluated"], 0);
  EXPECT_EQ(Slurp(ev / "reference.jsonl"), Slurp(merged / "reference.jsonl"));
}

// instances in lockstep. Per attack family (score-based L_inf: Square,
// Parsimonious, BOS^2; hard-label L2: HopSkipJump, Sign-OPT, GeoDA) a run with B lanes and a
// run one job at a time give the same verdicts, queries and images; their logits differ only
// in the last float bits (batched forward passes), so the recorded objectives agree within
// 1e-4. BOS^2 only keeps its verdicts here: its GP hyperparameter fit turns a last-bit
// change into another trajectory (the plain and the frozen graph differ the same way: 33 of
// 54 CIFAR-10 instances kept verdict and queries; docs/results/performance.md). A lockstep run
// resumed after losing records scores the redone jobs in other batches and still gives exactly the
// same records (every forward has B rows, and an image's scores do not depend on its row); resuming
// with another B is refused.
nlohmann::json Deterministic(nlohmann::json r) {  // without the timing fields (*seconds*)
  std::vector<std::string> timing;
  for (const auto& [k, v] : r.items())
    if (k.find("seconds") != std::string::npos) timing.push_back(k);
  for (const auto& k : timing) r.erase(k);
  return r;
}

std::map<std::string, nlohmann::json> Keyed(const fs::path& file) {
  std::map<std::string, nlohmann::json> m;
  for (auto& r : advbo::testing::ReadJsonl(file))
    m[r["attack"].get<std::string>() + "/" + std::to_string(r["image_index"].get<int>())] =
        Deterministic(r);
  return m;
}

TEST_F(BenchCli, LockstepAgreesWithOneJobAtATimeAndResumesExactly) {
#ifdef ADVBO_SANITIZED
  // BOS^2's GP is ~8x slower under the sanitizers (this test took 174 s there with it); its
  // lanes run the same lockstep code as Square's and Parsimonious'.
  const std::string score_attacks = "square,parsimonious";
#else
  const std::string score_attacks = "square,parsimonious,bos2";
#endif
  const std::vector<std::pair<std::string, int>> families = {
      {"bench --attacks " + score_attacks +
           " --indices 0,1,2,3 --untargeted --eps 0.06 --budget 300 --seed 7 -q ",
       4},
      {"bench --feedback label --norm l2 --eps 1.5 --attacks hsja,sign-opt,geoda --indices 0,1,2 "
       "--untargeted --budget 300 --seed 7 -q ",
       2}};
  for (const auto& [common, lanes] : families) {
    const fs::path one = dir_ / "one", many = dir_ / "many";
    fs::remove_all(one);
    fs::remove_all(many);
    ASSERT_EQ(RunAdvbo(common + "--lockstep 1 -o " + one.string(), dir_ / "log1"), 0)
        << Slurp(dir_ / "log1");
    ASSERT_EQ(RunAdvbo(common + "--lockstep " + std::to_string(lanes) + " -o " + many.string(),
                       dir_ / "log2"),
              0)
        << Slurp(dir_ / "log2");
    const auto a = Keyed(one / "records.jsonl"), b = Keyed(many / "records.jsonl");
    ASSERT_EQ(a.size(), b.size());
    ASSERT_GE(a.size(), 8u);
    int successes = 0;
    for (const auto& [key, r] : a) {
      ASSERT_TRUE(b.count(key)) << key;
      const nlohmann::json& s = b.at(key);
      EXPECT_EQ(r["lockstep"], 1) << key;
      EXPECT_EQ(s["lockstep"], lanes) << key;
      EXPECT_EQ(r["success"], s["success"]) << key;
      if (r["attack"] == "bos2") continue;  // see below
      EXPECT_EQ(r["queries"], s["queries"]) << key;
      EXPECT_EQ(r["adversarial_class"], s["adversarial_class"]) << key;
      EXPECT_NEAR(r["final_objective"].get<double>(), s["final_objective"].get<double>(), 1e-4)
          << key;
      successes += r["success"].get<bool>();
    }
    EXPECT_GT(successes, 0) << common;                           // the runs are not trivial:
    EXPECT_LT(successes, static_cast<int>(a.size())) << common;  // some fail, some succeed
    // Resume: drop all but the first 2 records; the redone jobs run in other batches.
    std::vector<nlohmann::json> kept = advbo::testing::ReadJsonl(many / "records.jsonl");
    {
      std::ofstream out(many / "records.jsonl");
      for (size_t k = 0; k < 2; ++k) out << kept[k].dump() << "\n";
    }
    ASSERT_EQ(RunAdvbo(common + "--lockstep " + std::to_string(lanes) + " -o " + many.string(),
                       dir_ / "log3"),
              0)
        << Slurp(dir_ / "log3");
    const auto resumed = Keyed(many / "records.jsonl");
    ASSERT_EQ(resumed.size(), b.size());
    for (const auto& [key, r] : b) EXPECT_EQ(resumed.at(key), r) << key;
    EXPECT_EQ(RunAdvbo(common + "--lockstep 1 -o " + many.string(), dir_ / "log4"), 1);
    EXPECT_NE(Slurp(dir_ / "log4").find("lockstep"), std::string::npos) << Slurp(dir_ / "log4");
  }
}

// worker groups. W = 2 groups of B = 2 lanes (each group's forward passes
// at one LibTorch thread, side by side) give exactly the records of one group of 2 lanes at
// LibTorch's default threads: an image's scores depend on B alone, not on which jobs share
// its batches nor on the thread count. Records carry `workers`.
TEST_F(BenchCli, WorkerGroupsGiveTheRecordsOfOneGroup) {
  const std::string common =
      "bench --attacks square,parsimonious --indices 0,1,2,3,4 --untargeted --eps 0.06 "
      "--budget 200 --seed 3 -q --lockstep 2 ";
  const fs::path one = dir_ / "w1", two = dir_ / "w2";
  ASSERT_EQ(RunAdvbo(common + "--workers 1 -o " + one.string(), dir_ / "log1"), 0)
      << Slurp(dir_ / "log1");
  ASSERT_EQ(RunAdvbo(common + "--workers 2 -o " + two.string(), dir_ / "log2"), 0)
      << Slurp(dir_ / "log2");
  const auto a = Keyed(one / "records.jsonl"), b = Keyed(two / "records.jsonl");
  ASSERT_EQ(a.size(), 10u);
  ASSERT_EQ(b.size(), a.size());
  for (const auto& [key, r] : a) {
    ASSERT_TRUE(b.count(key)) << key;
    EXPECT_EQ(r["workers"], 1) << key;
    EXPECT_EQ(b.at(key)["workers"], 2) << key;
    nlohmann::json x = r, y = b.at(key);
    x.erase("workers");
    y.erase("workers");
    EXPECT_EQ(x, y) << key;
  }
  EXPECT_EQ(RunAdvbo(common + "--workers 65 -o " + (dir_ / "w3").string(), dir_ / "log3"), 1);
  EXPECT_FALSE(fs::exists(dir_ / "w3" / "records.jsonl"));
}

// The threat model and the budget hold for every attack of the registry, as recorded by a
// bench run: queries <= budget and L_inf <= eps (to float32 rounding) for every record, also
// for the 8-bit verified image; MNIST and CIFAR-10.
TEST_F(BenchCli, EveryAttackStaysInTheBallAndTheBudget) {
  const std::string all =
      "bos2,bos2-nostop,bayesopt,bayesopt-learnd,genattack,zoo,autozoom,square,parsimonious,random";
  for (const auto& [dataset, eps] :
       std::vector<std::pair<std::string, double>>{{"mnist", 0.3}, {"cifar10", 8.0 / 255}}) {
    const fs::path out = dir_ / dataset;
    ASSERT_EQ(
        RunAdvbo("bench --dataset " + dataset + " --attacks " + all +
                     " --indices 0 --target 1 --budget 40 --threads 1 -q --out-dir " + out.string(),
                 dir_ / "log"),
        0)
        << Slurp(dir_ / "log");
    std::ifstream in(out / "records.jsonl");
    std::set<std::string> seen;
    for (std::string l; std::getline(in, l);) {
      const auto r = nlohmann::json::parse(l);
      seen.insert(r["attack"].get<std::string>());
      EXPECT_LE(r["queries_used"].get<long>(), 40) << l.substr(0, 80);
      EXPECT_LE(r["queries"].get<long>(), 40) << l.substr(0, 80);
      // At most eps in grid steps: a float32 difference of two grid values may exceed the
      // double eps by float rounding (< 1e-7, against a grid step of 3.9e-3).
      EXPECT_LE(r["linf"].get<double>(), eps + 1e-7) << r["attack"];
      EXPECT_LE(r["quantized_linf"].get<double>(), eps + 1e-7) << r["attack"];
      EXPECT_EQ(r["epsilon"].get<double>(), eps);
    }
    EXPECT_EQ(seen.size(), 10u) << dataset;
  }
}

TEST_F(BenchCli, BadInputFailsClearly) {
  for (const std::string& args : std::vector<std::string>{
           "bench --attacks nope --out-dir " + (dir_ / "x").string(), "bench --attacks square",
           "bench --attacks square --shard 3/2 --out-dir " + (dir_ / "x").string(),
           "bench merge " + (dir_ / "missing").string() + " --out-dir " + (dir_ / "y").string()}) {
    EXPECT_EQ(RunAdvbo(args, dir_ / "log"), 1) << args;
    EXPECT_NE(Slurp(dir_ / "log").find("error"), std::string::npos) << args;
  }
  EXPECT_FALSE(fs::exists(dir_ / "x" / "records.jsonl"));
}

// one output-flag convention (-o/--out everywhere; --out-dir stays as the old
// name of the folder outputs) and --version.
TEST_F(BenchCli, OutputFlagConventionAndVersion) {
  const std::string common = "bench --attacks random -n 1 --budget 5 --target 3 -q ";
  ASSERT_EQ(RunAdvbo(common + "-o " + (dir_ / "short").string(), dir_ / "log"), 0)
      << Slurp(dir_ / "log");
  ASSERT_EQ(RunAdvbo(common + "--out-dir " + (dir_ / "old").string(), dir_ / "log"), 0)
      << Slurp(dir_ / "log");
  EXPECT_EQ(Lines(dir_ / "short" / "records.jsonl"), 1);
  EXPECT_EQ(Lines(dir_ / "old" / "records.jsonl"), 1);
  EXPECT_EQ(RunAdvbo("bench --attacks random -n 1", dir_ / "log"), 1);
  EXPECT_NE(Slurp(dir_ / "log").find("-o/--out (the output folder) is required"), std::string::npos)
      << Slurp(dir_ / "log");
  ASSERT_EQ(RunAdvbo("--version", dir_ / "log"), 0);
  EXPECT_EQ(Slurp(dir_ / "log"), std::string("advbo ") + ADVBO_VERSION_FOR_TESTS + "\n");
}

}  // namespace

// `advbo evaluate` the command: it prints the library's table (experiment/evaluation.h,
// tested in tests/experiment/evaluation_test.cc), writes curves.png beside curves.csv, refuses
// targeted goals, and exits 3 when images were not evaluated (a merge of one shard of two).
TEST_F(BenchCli, EvaluateCommandPrintsTheTableAndItsExitStatuses) {
  const fs::path out = dir_ / "ev";
  const std::string cmd =
      "evaluate --dataset mnist -n 4 --budget 40 --reference none --ensemble random "
      "--threads 1 -q -o " +
      out.string();
  ASSERT_EQ(RunAdvbo(cmd + " --shard 1/2", dir_ / "log"), 0) << Slurp(dir_ / "log");
  const std::string table = Slurp(out / "table.shard-1-of-2.txt");
  ASSERT_FALSE(table.empty());
  EXPECT_NE(Slurp(dir_ / "log").find(table), std::string::npos) << Slurp(dir_ / "log");
  EXPECT_TRUE(fs::exists(out / "curves.shard-1-of-2.png"));
  EXPECT_TRUE(fs::exists(out / "curves.shard-1-of-2.csv"));
  // One shard of two merged alone: the other shard's images are not evaluated.
  ASSERT_EQ(RunAdvbo("evaluate merge " + out.string() + " -o " + (dir_ / "merged").string(),
                     dir_ / "log2"),
            3)
      << Slurp(dir_ / "log2");
  EXPECT_NE(Slurp(dir_ / "log2").find("were not evaluated"), std::string::npos);
  EXPECT_TRUE(fs::exists(dir_ / "merged" / "curves.png"));
  EXPECT_EQ(RunAdvbo("evaluate --targeted -n 1 -o " + (dir_ / "t").string(), dir_ / "log3"), 1);
  EXPECT_NE(Slurp(dir_ / "log3").find("untargeted"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir_ / "t"));
  EXPECT_EQ(RunAdvbo("attack -n 1 --defense blacklight:hashes=10000,threshold=10000 -o " +
                         (dir_ / "a.jsonl").string(),
                     dir_ / "log4"),
            1);
  EXPECT_NE(Slurp(dir_ / "log4").find("threshold 10000 exceeds the 765 window hashes"),
            std::string::npos)
      << Slurp(dir_ / "log4");
}

// The min-distance goal end to end: hard-label L2 attacks spend the budget (HSJA
// never stops early), every record carries the distance at the checkpoints within it, the
// summary's median is the records' median, table.txt shows the distance block and curves.csv
// the median distance at each query. The goal is refused for score feedback and by evaluate.
TEST_F(BenchCli, TheMinDistanceGoalReportsTheDistanceAtEachCheckpoint) {
  const fs::path out = dir_ / "md";
  ASSERT_EQ(RunAdvbo("bench --attacks hsja,geoda --feedback label --norm l2 --eps 1 --untargeted "
                     "--goal min-distance -n 2 --budget 300 --seed 0 --threads 1 -q --out-dir " +
                         out.string(),
                     dir_ / "log"),
            0)
      << Slurp(dir_ / "log");
  const auto records = advbo::testing::ReadJsonl(out / "records.jsonl");
  ASSERT_EQ(records.size(), 4u);
  std::vector<double> hsja250;
  for (const auto& r : records) {
    EXPECT_EQ(r["goal"], "min-distance");
    ASSERT_EQ(r["distance_at"].size(), 2u) << r.dump();  // 100 and 250 of a budget of 300
    const double d100 = r["distance_at"]["100"], d250 = r["distance_at"]["250"];
    EXPECT_LE(d250, d100);
    EXPECT_GE(d250, r["distance"].get<double>());
    EXPECT_EQ(r["success"].get<bool>(), r["distance"].get<double>() <= 1.0);
    if (r["attack"] == "hsja") {
      EXPECT_EQ(r["queries_used"], 300);
      hsja250.push_back(d250);
    }
  }
  ASSERT_EQ(hsja250.size(), 2u);
  const auto summary = nlohmann::json::parse(Slurp(out / "summary.json"));
  const auto& hsja = summary[0]["attack"] == "hsja" ? summary[0] : summary[1];
  EXPECT_DOUBLE_EQ(hsja["distance_at"]["250"]["median"].get<double>(),
                   0.5 * (hsja250[0] + hsja250[1]));
  EXPECT_NE(Slurp(out / "table.txt").find("median (mean) L2 distance"), std::string::npos);
  // --eps 1 was given: the ASR is the runs that ended within it, and the table says so.
  EXPECT_NE(Slurp(out / "table.txt").find("ended within eps 1"), std::string::npos);
  EXPECT_TRUE(hsja["asr"].is_number());
  EXPECT_EQ(records[0]["epsilon_given"], true);
  std::ifstream csv(out / "curves.csv");
  std::string header, line, row250;
  std::getline(csv, header);
  while (std::getline(csv, line))
    if (line.rfind("250,", 0) == 0) row250 = line;
  const int col = header.find("hsja") < header.find("geoda") ? 1 : 2;
  std::stringstream cells(row250);
  std::string cell;
  for (int k = 0; k <= col; ++k) std::getline(cells, cell, ',');
  EXPECT_NEAR(std::stod(cell), hsja["distance_at"]["250"]["median"].get<double>(), 1e-4);
  // Without --eps there is no success rate to give (the default radius is nobody's choice).
  ASSERT_EQ(RunAdvbo("attack --attack hsja --feedback label --norm l2 --untargeted "
                     "--goal min-distance -n 1 --budget 120 --seed 0 -o " +
                         (dir_ / "noeps.jsonl").string(),
                     dir_ / "log4"),
            0)
      << Slurp(dir_ / "log4");
  EXPECT_NE(Slurp(dir_ / "log4").find("no success rate: --goal min-distance without --eps"),
            std::string::npos)
      << Slurp(dir_ / "log4");
  EXPECT_TRUE(nlohmann::json::parse(Slurp(dir_ / "noeps.summary.json"))["asr"].is_null());
  EXPECT_EQ(RunAdvbo("attack --attack square --goal min-distance -n 1 -q", dir_ / "log2"), 1);
  EXPECT_NE(Slurp(dir_ / "log2").find("min-distance"), std::string::npos);
  EXPECT_EQ(
      RunAdvbo("evaluate --feedback label --goal min-distance -n 1 -q -o " + (dir_ / "ev").string(),
               dir_ / "log3"),
      1);
  EXPECT_FALSE(fs::exists(dir_ / "ev"));
}

// The radius as typed: 8/255 is exactly 8 grid steps; 0.031 loses one with 8-bit
// queries, which the run says (with the fraction to type) and records as epsilon_effective.
TEST_F(BenchCli, EpsilonAsTypedAndAsEnforced) {
  const std::string base =
      "attack --dataset cifar10 --attack random -n 1 --budget 3 --untargeted "
      "--threads 1 -q ";
  ASSERT_EQ(RunAdvbo(base + "--eps 8/255 -o " + (dir_ / "a.jsonl").string(), dir_ / "log1"), 0)
      << Slurp(dir_ / "log1");
  auto r = advbo::testing::ReadJsonl(dir_ / "a.jsonl").at(0);
  EXPECT_EQ(r["epsilon"].get<double>(), 8.0 / 255);
  EXPECT_EQ(r["epsilon_effective"].get<double>(), 8.0 / 255);
  EXPECT_EQ(Slurp(dir_ / "log1").find("one grid step less"), std::string::npos);
  ASSERT_EQ(RunAdvbo(base + "--eps 0.031 -o " + (dir_ / "b.jsonl").string(), dir_ / "log2"), 0)
      << Slurp(dir_ / "log2");
  r = advbo::testing::ReadJsonl(dir_ / "b.jsonl").at(0);
  EXPECT_DOUBLE_EQ(r["epsilon_effective"].get<double>(), 7.0 / 255);
  EXPECT_LE(r["linf"].get<double>(), 7.0 / 255 + 1e-7);
  const std::string log = Slurp(dir_ / "log2");
  EXPECT_NE(log.find("--eps 8/255"), std::string::npos) << log;
  EXPECT_NE(log.find("7/255 = 0.02745"), std::string::npos) << log;
  // In float queries nothing is lost, nothing is said.
  ASSERT_EQ(RunAdvbo(base + "--eps 0.031 --pixels float -o " + (dir_ / "c.jsonl").string(),
                     dir_ / "log3"),
            0);
  r = advbo::testing::ReadJsonl(dir_ / "c.jsonl").at(0);
  EXPECT_DOUBLE_EQ(r["epsilon_effective"].get<double>(), 0.031);
  EXPECT_EQ(Slurp(dir_ / "log3").find("one grid step less"), std::string::npos);
}
