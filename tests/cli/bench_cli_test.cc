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
  ASSERT_EQ(RunAdvbo("evaluate --dataset mnist --model " + advbo::testing::kRoot +
                         "/models/mnist_at.pt -n 4 --budget 40 --reference-steps 10 --threads 1 "
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
// bench run: queries <= budget and L_inf <= eps (float32) for every record, also for the
// 8-bit verified image; MNIST and CIFAR-10.
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
      EXPECT_LE(r["linf"].get<double>(), static_cast<double>(static_cast<float>(eps)) + 1e-9)
          << r["attack"];
      EXPECT_LE(r["quantized_linf"].get<double>(), eps + 1e-9) << r["attack"];
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

// `advbo evaluate`: the per-image verdicts are the worst case of the per-attack
// records (recomputed here independently: the first attack in ensemble order whose saved
// 8-bit image is adversarial), no attack runs after the one that broke an image, every
// correctly classified robust image was attacked by the whole ensemble, and a re-run
// resumes without a new record and gives the same verdicts.
TEST_F(BenchCli, EvaluateWorstCaseEqualsThePerAttackRecordsAndResumes) {
  const std::vector<std::string> order = {"random", "parsimonious", "square"};
  const std::string cmd =
      "evaluate --dataset cifar10 -n 10 --eps 0.03 --budget 150 --reference none "
      "--ensemble random,parsimonious,square --threads 1 -q -o " +
      (dir_ / "ev").string();
  ASSERT_EQ(RunAdvbo(cmd, dir_ / "log1"), 0) << Slurp(dir_ / "log1");
  const auto records = advbo::testing::ReadJsonl(dir_ / "ev" / "records.jsonl");
  const auto images = advbo::testing::ReadJsonl(dir_ / "ev" / "images.jsonl");
  ASSERT_EQ(images.size(), 10u);
  int robust = 0, broken = 0, wrong = 0;
  for (const auto& v : images) {
    const int i = v["image_index"].get<int>();
    std::vector<nlohmann::json> mine;
    for (const auto& r : records)
      if (r["image_index"] == i) mine.push_back(r);
    if (!v["clean_correct"].get<bool>()) {
      EXPECT_TRUE(mine.empty()) << i;  // a clean error needs no attack
      EXPECT_FALSE(v["robust"].get<bool>());
      ++wrong;
      continue;
    }
    std::string first;
    long queries = 0;
    size_t k = 0;
    for (; k < order.size(); ++k) {
      const nlohmann::json* r = nullptr;
      for (const auto& m : mine)
        if (m["attack"] == order[k]) r = &m;
      ASSERT_NE(r, nullptr) << "image " << i << " missing " << order[k];
      EXPECT_TRUE((*r)["target"].is_null());  // untargeted
      EXPECT_EQ((*r)["evaluation"]["budget"].get<long>(), 150);
      EXPECT_EQ((*r)["evaluation"]["budget_unit"], "model queries per image");
      EXPECT_EQ((*r)["budget_unit"], "model queries per instance");  // its attack's share
      EXPECT_LE((*r)["budget"].get<long>(), 150);
      queries += (*r)["queries_used"].get<long>();
      EXPECT_LE(queries, 150) << "image " << i << ": the budget is per image";
      if ((*r)["success"].get<bool>() && (*r)["quantized_success"].get<bool>()) {
        first = order[k];
        break;
      }
    }
    EXPECT_EQ(mine.size(), first.empty() ? order.size() : k + 1) << "image " << i;
    EXPECT_EQ(v["robust"].get<bool>(), first.empty()) << i;
    EXPECT_EQ(v["broken_by"], first.empty() ? nlohmann::json(nullptr) : nlohmann::json(first));
    EXPECT_EQ(v["queries"].get<long>(), queries) << i;
    (first.empty() ? robust : broken)++;
  }
  // The run exercises robust, broken and misclassified images alike.
  EXPECT_GT(robust, 0);
  EXPECT_GT(broken, 0);
  EXPECT_GT(wrong, 0);
  const auto summary = nlohmann::json::parse(Slurp(dir_ / "ev" / "summary.json"));
  EXPECT_EQ(summary["robust"], robust);
  EXPECT_DOUBLE_EQ(summary["robust_accuracy"].get<double>(), robust / 10.0);
  EXPECT_DOUBLE_EQ(summary["clean_accuracy"].get<double>(), (10 - wrong) / 10.0);
  const std::string verdicts = Slurp(dir_ / "ev" / "images.jsonl");
  ASSERT_EQ(RunAdvbo(cmd, dir_ / "log2"), 0) << Slurp(dir_ / "log2");
  EXPECT_EQ(Lines(dir_ / "ev" / "records.jsonl"), static_cast<int>(records.size()));
  EXPECT_EQ(Slurp(dir_ / "ev" / "images.jsonl"), verdicts);
  // A shard started on the finished unsharded folder redoes nothing (its images are done).
  ASSERT_EQ(RunAdvbo(cmd + " --shard 1/2", dir_ / "log9"), 0) << Slurp(dir_ / "log9");
  EXPECT_EQ(Lines(dir_ / "ev" / "records.shard-1-of-2.jsonl"), 0);
  EXPECT_EQ(Lines(dir_ / "ev" / "records.jsonl"), static_cast<int>(records.size()));
  // Two shards, then the unsharded command on their folder: the same verdicts, no new record.
  const std::string sharded =
      "evaluate --dataset cifar10 -n 10 --eps 0.03 --budget 150 --reference none "
      "--ensemble random,parsimonious,square --threads 1 -q -o ";
  const fs::path sh = dir_ / "sh";
  ASSERT_EQ(RunAdvbo(sharded + sh.string() + " --shard 1/2", dir_ / "log4"), 0)
      << Slurp(dir_ / "log4");
  ASSERT_EQ(RunAdvbo(sharded + sh.string() + " --shard 2/2", dir_ / "log5"), 0)
      << Slurp(dir_ / "log5");
  ASSERT_EQ(RunAdvbo(sharded + sh.string(), dir_ / "log6"), 0) << Slurp(dir_ / "log6");
  EXPECT_EQ(Slurp(sh / "images.jsonl"), verdicts);
  EXPECT_EQ(Lines(sh / "records.jsonl"), 0);
  // Shards in separate folders, joined by `advbo evaluate merge`: the same verdicts.
  fs::create_directories(dir_ / "m1");
  fs::create_directories(dir_ / "m2");
  for (const auto& f : fs::directory_iterator(sh)) {
    const std::string name = f.path().filename().string();
    if (name.find("shard-1-of-2") != std::string::npos) fs::copy(f.path(), dir_ / "m1" / name);
    if (name.find("shard-2-of-2") != std::string::npos) fs::copy(f.path(), dir_ / "m2" / name);
  }
  const std::string merge = "evaluate merge " + (dir_ / "m1").string() + " " +
                            (dir_ / "m2").string() + " -o " + (dir_ / "merged").string();
  ASSERT_EQ(RunAdvbo(merge, dir_ / "log7"), 0) << Slurp(dir_ / "log7");
  EXPECT_EQ(Slurp(dir_ / "merged" / "images.jsonl"), verdicts);
  // A record lost from a shard (a hand merge gone wrong): its image is "not evaluated" --
  // never robust -- and merge says so with exit status 3.
  const fs::path shard_records = dir_ / "m2" / "records.shard-2-of-2.jsonl";
  std::vector<std::string> lines;
  {
    std::ifstream in(shard_records);
    for (std::string l; std::getline(in, l);) lines.push_back(l);
  }
  ASSERT_FALSE(lines.empty());
  std::string robust_line;  // drop the last attack's record of a robust image
  for (const auto& l : lines) {
    const auto r = nlohmann::json::parse(l);
    if (r["attack"] == "square" && !r["success"].get<bool>()) robust_line = l;
  }
  ASSERT_FALSE(robust_line.empty());
  {
    std::ofstream out(shard_records);
    for (const auto& l : lines)
      if (l != robust_line) out << l << "\n";
  }
  fs::remove_all(dir_ / "merged");  // merge writes into a new or empty folder only
  ASSERT_EQ(RunAdvbo(merge, dir_ / "log8"), 3) << Slurp(dir_ / "log8");
  const auto merged = nlohmann::json::parse(Slurp(dir_ / "merged" / "summary.json"));
  EXPECT_EQ(merged["not_evaluated"], 1);
  EXPECT_EQ(merged["robust"].get<long>(), robust - 1);
  EXPECT_NE(Slurp(dir_ / "merged" / "table.txt").find("NOT EVALUATED"), std::string::npos);
  // Targeted goals do not apply.
  EXPECT_EQ(RunAdvbo("evaluate --targeted -n 1 -o " + (dir_ / "t").string(), dir_ / "log3"), 1);
  EXPECT_NE(Slurp(dir_ / "log3").find("untargeted"), std::string::npos);
}

// `advbo evaluate` under the other threat models: without --ensemble it takes the
// hard-label ensemble under --feedback label and the L2 pair (at the L2 radius 0.5 on CIFAR-10)
// under --norm l2; every record carries the threat model, and hard-label records a distance.
TEST_F(BenchCli, EvaluatePicksTheEnsembleAndRadiusOfTheThreatModel) {
  const struct {
    const char* flags;
    std::vector<std::string> ensemble;
    double eps;
  } cases[] = {{"--feedback label", {"rays", "bo-hl", "hsja"}, 8.0 / 255},
               {"--norm l2", {"simba-dct", "square-l2"}, 0.5}};
  int n = 0;
  for (const auto& c : cases) {
    const fs::path out = dir_ / ("ev" + std::to_string(n++));
    const std::string cmd = std::string("evaluate --dataset cifar10 -n 2 --budget 30 ") + c.flags +
                            " --reference none --threads 1 -q -o " + out.string();
    ASSERT_EQ(RunAdvbo(cmd, dir_ / "log"), 0) << Slurp(dir_ / "log");
    const auto summary = nlohmann::json::parse(Slurp(out / "summary.json"));
    EXPECT_EQ(summary["plain_ensemble"].get<std::vector<std::string>>(), c.ensemble) << c.flags;
    const auto records = advbo::testing::ReadJsonl(out / "records.jsonl");
    ASSERT_FALSE(records.empty()) << c.flags;
    for (const auto& r : records) {
      EXPECT_NEAR(r["epsilon"].get<double>(), c.eps, 1e-9) << c.flags;
      const bool label = std::string(c.flags).find("label") != std::string::npos;
      EXPECT_EQ(r["feedback"], label ? "label" : "scores");
      EXPECT_EQ(r["norm"], std::string(c.flags).find("l2") != std::string::npos ? "l2" : "linf");
      if (r["feedback"] == "label") EXPECT_TRUE(r.contains("distance")) << r.dump();
      EXPECT_LE(r["queries_used"].get<long>(), 30);
      EXPECT_EQ(r["evaluation"]["budget"].get<long>(), 30);
    }
  }
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

// The white-box reference beside the ensemble: on the adversarially trained MNIST
// model, APGD's verdicts are written per image, every break it reports stays in the 8-bit
// ball and is misclassified, and the combined worst case is robust only where both failed.
// Behind a defense without a gradient the reference says it does not apply.
TEST_F(BenchCli, EvaluateReferenceBesideTheEnsemble) {
  const fs::path out = dir_ / "ref";
  const std::string cmd = "evaluate --dataset mnist --model " + std::string(ADVBO_SOURCE_DIR) +
                          "/models/mnist_at.pt -n 8 --budget 90 --eps 0.4 "
                          "--reference-steps 20 --reference-targets 3 --threads 1 -q "
                          "--save-images " +
                          (dir_ / "png").string() + " -o " + out.string();
  ASSERT_EQ(RunAdvbo(cmd, dir_ / "log"), 0) << Slurp(dir_ / "log");
  const auto summary = nlohmann::json::parse(Slurp(out / "summary.json"));
  ASSERT_TRUE(summary["reference"]["applies"].get<bool>()) << summary.dump();
  EXPECT_TRUE(summary["reference"]["settings"]["grid"].get<bool>());
  const auto refs = advbo::testing::ReadJsonl(out / "reference.jsonl");
  const auto images = advbo::testing::ReadJsonl(out / "images.jsonl");
  ASSERT_EQ(images.size(), 8u);
  long ref_robust = 0, combined = 0, broken = 0;
  for (const auto& v : images) {
    if (!v["clean_correct"].get<bool>()) continue;
    const nlohmann::json* r = nullptr;
    for (const auto& x : refs)
      if (x["image_index"] == v["image_index"]) r = &x;
    ASSERT_NE(r, nullptr) << v.dump();
    EXPECT_EQ(v["reference_robust"], (*r)["reference_robust"]);
    if ((*r)["reference_robust"].get<bool>()) {
      ++ref_robust;
      combined += v["robust"].get<bool>();
    } else {
      ++broken;
      EXPECT_LE((*r)["linf"].get<double>(), 102 / 255.0 + 1e-6);  // the 8-bit grid radius
      EXPECT_NE((*r)["adversarial_class"], (*r)["true_class"]);
      EXPECT_LT((*r)["margin"].get<double>(), 0);
      EXPECT_EQ((*r)["gradient_steps"].get<long>() % 20, 0);
    }
  }
  EXPECT_GT(broken, 0);  // the model is trained at 0.3: breakable at 0.4
  EXPECT_DOUBLE_EQ(summary["reference_robust_accuracy"].get<double>(), ref_robust / 8.0);
  EXPECT_DOUBLE_EQ(summary["combined_robust_accuracy"].get<double>(), combined / 8.0);
  EXPECT_LE(summary["combined_robust_accuracy"].get<double>(),
            summary["robust_accuracy"].get<double>());
  // RobustBench's sanity line and outputs: the saved images within the enforced radius, the
  // curve, each attack's time, one PNG pair per broken image.
  EXPECT_LE(summary["max_perturbation_linf"].get<double>(),
            summary["epsilon_effective"].get<double>() + 1e-7);
  EXPECT_DOUBLE_EQ(summary["epsilon_effective"].get<double>(), 102 / 255.0);
  EXPECT_TRUE(fs::exists(out / "curves.png"));
  EXPECT_TRUE(summary["time_by_attack"].contains("square"));
  long pngs = 0;
  for (const auto& v : images)
    if (!v["broken_by"].is_null()) {
      ++pngs;
      EXPECT_TRUE(fs::exists(
          dir_ / "png" / ("adversarial_" + std::to_string(v["image_index"].get<int>()) + ".png")));
    }
  EXPECT_EQ(summary["adversarial_images"].get<long>(), pngs);
  EXPECT_GT(pngs, 0);
  const std::string table = Slurp(out / "table.txt");
  EXPECT_NE(table.find("white-box reference"), std::string::npos) << table;
  EXPECT_NE(table.find("max L_inf"), std::string::npos) << table;
  EXPECT_NE(table.find("combined (best known)"), std::string::npos) << table;
  // A re-run resumes: no new reference work, the same verdicts.
  const std::string verdicts = Slurp(out / "images.jsonl");
  ASSERT_EQ(RunAdvbo(cmd, dir_ / "log2"), 0) << Slurp(dir_ / "log2");
  EXPECT_EQ(Slurp(out / "images.jsonl"), verdicts);
  EXPECT_EQ(Lines(out / "reference.jsonl"), static_cast<int>(refs.size()));
  // Behind JPEG there is no gradient: no number, a reason.
  const fs::path jpeg = dir_ / "ref_jpeg";
  ASSERT_EQ(RunAdvbo("evaluate --dataset mnist -n 2 --budget 30 --defense jpeg --threads 1 -q "
                     "-o " +
                         jpeg.string(),
                     dir_ / "log3"),
            0)
      << Slurp(dir_ / "log3");
  const auto js = nlohmann::json::parse(Slurp(jpeg / "summary.json"));
  EXPECT_FALSE(js["reference"]["applies"].get<bool>());
  EXPECT_TRUE(js["reference_robust_accuracy"].is_null());
  EXPECT_NE(Slurp(jpeg / "table.txt").find("does not apply"), std::string::npos);
  EXPECT_FALSE(fs::exists(jpeg / "reference.jsonl"));
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

// Behind AAA every ensemble member is wrapped by its adaptive attack, never twice,
// and a number no working adaptive attack challenged is called an upper bound.
TEST_F(BenchCli, EvaluateWrapsEveryMemberBehindADefense) {
  const fs::path out = dir_ / "aaa";
  ASSERT_EQ(RunAdvbo("evaluate --dataset cifar10 -n 2 --budget 40 --defense aaa --ensemble "
                     "square,aaa-adaptive:interval=4,reverse=1/parsimonious --threads 1 -q -o " +
                         out.string(),
                     dir_ / "log"),
            0)
      << Slurp(dir_ / "log");
  const auto summary = nlohmann::json::parse(Slurp(out / "summary.json"));
  EXPECT_EQ(summary["ensemble"].get<std::vector<std::string>>(),
            (std::vector<std::string>{"aaa-adaptive:interval=4,reverse=1/square",
                                      "aaa-adaptive:interval=4,reverse=1/parsimonious"}));
  EXPECT_TRUE(summary["robust_accuracy_plain_ensemble"].is_null());
  EXPECT_TRUE(summary["upper_bound"].get<bool>());  // 40 queries: below the default
  const std::string table = Slurp(out / "table.txt");
  EXPECT_NE(table.find("UPPER BOUND"), std::string::npos) << table;
  for (const auto& r : advbo::testing::ReadJsonl(out / "records.jsonl"))
    EXPECT_EQ(r["attack"].get<std::string>().rfind("aaa-adaptive:", 0), 0u) << r["attack"];
}

// Every threat model behind every kind of defense (a probe found that the adaptive wrappers lost
// the inner attack's norm and feedback, so these runs were refused or died inside the attack
// evaluate built), and the refusals that name the data's size, the option and the reason.
TEST_F(BenchCli, EvaluateRunsEveryThreatModelBehindEveryDefense) {
  const struct {
    std::string flags;
    std::string attack;  // the ensemble member as run
  } runs[] = {
      {"--norm l2 --defense noise:sigma=0.02 --ensemble square-l2", "eot:k=10/square-l2"},
      {"--feedback label --defense noise:sigma=0.02 --ensemble rays", "eot:k=10/rays"},
      {"--defense aaa:reverse=0 --ensemble square", "square"},
      {"--norm l2 --defense blacklight --ensemble simba-dct", "oars:quantization=50/simba-dct"},
  };
  int k = 0;
  for (const auto& r : runs) {
    const fs::path out = dir_ / ("tm" + std::to_string(k++));
    ASSERT_EQ(RunAdvbo("evaluate --dataset mnist -n 1 --budget 30 --reference none --threads 1 " +
                           r.flags + " -q -o " + out.string(),
                       dir_ / "log"),
              0)
        << r.flags << "\n"
        << Slurp(dir_ / "log");
    const auto records = advbo::testing::ReadJsonl(out / "records.jsonl");
    ASSERT_EQ(records.size(), 1u) << r.flags;
    EXPECT_EQ(records[0]["attack"], r.attack) << r.flags;
    // Label feedback: the saved image's scores are the evaluator's, named so.
    const bool label = r.flags.find("label") != std::string::npos;
    EXPECT_EQ(records[0].contains("evaluator_log_probs"), label) << records[0].dump();
    EXPECT_EQ(records[0].contains("adversarial_log_probs"), !label) << records[0].dump();
  }
  const struct {
    std::string args;
    std::string message;
  } refused[] = {
      {"evaluate -n 100000000",
       "-n/--num-images 100000000 exceeds the 10000 images of the "
       "shipped mnist test set"},
      {"evaluate --ensemble ,", "--ensemble names no attack (',')"},
      {"evaluate --defense blacklight:window=1000", "window 1000 is longer than the image's 784"},
      {"attack -n 1 --defense blacklight:hashes=10000,threshold=10000",
       "threshold 10000 exceeds the 765 window hashes"},
  };
  for (const auto& r : refused) {
    const fs::path out = dir_ / "refused";
    EXPECT_EQ(RunAdvbo(r.args + " -o " + out.string(), dir_ / "log"), 1) << r.args;
    EXPECT_NE(Slurp(dir_ / "log").find(r.message), std::string::npos) << r.args << "\n"
                                                                      << Slurp(dir_ / "log");
    EXPECT_FALSE(fs::exists(out)) << r.args;  // nothing written
  }
}

// Behind a randomised defense the saved image is re-queried k times: the break
// counts when most draws are adversarial, and the summary sets what the attacks saw against
// what held.
TEST_F(BenchCli, EvaluateVerifiesRandomisedDefensesByMajority) {
  const fs::path out = dir_ / "rnd";
  ASSERT_EQ(RunAdvbo("evaluate --dataset cifar10 -n 3 --budget 60 --defense noise:sigma=0.05 "
                     "--ensemble square --verify-draws 5 --threads 1 -q -o " +
                         out.string(),
                     dir_ / "log"),
            0)
      << Slurp(dir_ / "log");
  const auto records = advbo::testing::ReadJsonl(out / "records.jsonl");
  ASSERT_FALSE(records.empty());
  for (const auto& r : records) {
    EXPECT_EQ(r["attack"], "eot:k=10/square");  // wrapped by the defense's adaptive attack
    EXPECT_EQ(r["quantized_draws"], 5);
    EXPECT_EQ(r["quantized_queries"], 5);
    const long adv = r["quantized_adversarial_draws"].get<long>();
    EXPECT_GE(adv, 0);
    EXPECT_LE(adv, 5);
    EXPECT_EQ(r["quantized_success"].get<bool>(), 2 * adv > 5) << r.dump();
  }
  // A deterministic defense takes one re-query.
  const fs::path jpeg = dir_ / "det";
  ASSERT_EQ(RunAdvbo("evaluate --dataset cifar10 -n 2 --budget 30 --defense jpeg --ensemble "
                     "random --reference none --threads 1 -q -o " +
                         jpeg.string(),
                     dir_ / "log2"),
            0)
      << Slurp(dir_ / "log2");
  for (const auto& r : advbo::testing::ReadJsonl(jpeg / "records.jsonl")) {
    EXPECT_EQ(r["quantized_queries"], 1);
    EXPECT_FALSE(r.contains("quantized_draws"));
  }
}
