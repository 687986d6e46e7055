// End-to-end: the advbo binary on the shipped model and data, and on bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli/cli_test_util.h"

namespace {
namespace fs = std::filesystem;

using advbo::testing::kRoot;
using advbo::testing::RunAdvbo;
using advbo::testing::Slurp;

class Cli : public advbo::testing::TempDirTest {};

TEST_F(Cli, AttackWritesRecordsSummaryAndImages) {
  const fs::path out = dir_ / "r.jsonl";
  const int rc =
      RunAdvbo("attack --dataset mnist --indices 0,1 --target 3 --budget 200 --seed 4 -q -o " +
                   out.string() + " --save-images " + (dir_ / "png").string(),
               dir_ / "log");
  const std::string log = Slurp(dir_ / "log");
  ASSERT_EQ(rc, 0) << log;
  EXPECT_NE(log.find("ASR"), std::string::npos);
  EXPECT_NE(log.find("queries max/mean/median"), std::string::npos);
  std::ifstream in(out);
  int n = 0, verified = 0;
  for (std::string line; std::getline(in, line); ++n) {
    auto r = nlohmann::json::parse(line);
    // Every instance gets its clean PNG; an adversarial image and its perturbation exactly
    // when the 8-bit image was verified adversarial (whether image 1 succeeds within 200
    // queries depends on the last bits of the model's scores, so no instance is named).
    const std::string tag = std::to_string(r["image_index"].get<int>()) + "_t3.png";
    const bool ok = r["quantized_success"].get<bool>();
    verified += ok;
    EXPECT_TRUE(fs::exists(dir_ / "png" / ("clean_" + tag)));
    EXPECT_EQ(fs::exists(dir_ / "png" / ("adversarial_" + tag)), ok) << tag;
    EXPECT_EQ(fs::exists(dir_ / "png" / ("perturbation_" + tag)), ok) << tag;
    for (const char* key : {"image_index", "true_class", "target", "success", "queries", "linf",
                            "l2", "final_objective", "loops", "seconds", "model_seconds",
                            "wait_seconds", "bo_seconds", "seed"})
      EXPECT_TRUE(r.contains(key)) << key;
    // The wall time splits into the model's, the waiting and the attack's own (up to
    // round-off), each >= 0.
    EXPECT_NEAR(r["model_seconds"].get<double>() + r["wait_seconds"].get<double>() +
                    r["bo_seconds"].get<double>(),
                r["seconds"].get<double>(), 1e-6);
    EXPECT_GE(r["wait_seconds"].get<double>(), 0.0);
    EXPECT_EQ(r["target"], 3);
    EXPECT_EQ(r["seed"], 4);
    EXPECT_LE(r["queries_used"].get<long>(), 200);
    EXPECT_LE(r["linf"].get<double>(), 0.3 + 1e-6);
    // The saved image's class and scores: the argmax of the log-probabilities,
    // the target exactly when the 8-bit image is adversarial.
    const std::vector<double> lp = r["adversarial_log_probs"];
    ASSERT_EQ(lp.size(), 10u);
    const int argmax = static_cast<int>(std::max_element(lp.begin(), lp.end()) - lp.begin());
    EXPECT_EQ(r["adversarial_class"].get<int>(), argmax);
    EXPECT_EQ(argmax == 3, ok);
    EXPECT_FALSE(r.contains("source"));  // an IDX dataset has no per-image files
  }
  EXPECT_EQ(n, 2);
  EXPECT_GE(verified, 1);  // image 0 (a 7 -> 3) falls within a few dozen queries
  EXPECT_FALSE(fs::exists(out.string() + ".partial"));
  // The saved clean PNG, in a folder named by its label, is valid input for --data.
  fs::create_directories(dir_ / "imgs" / "7");
  fs::copy_file(dir_ / "png" / "clean_0_t3.png", dir_ / "imgs" / "7" / "a.png");
  const fs::path out2 = dir_ / "r2.jsonl";
  ASSERT_EQ(RunAdvbo("attack --eps 0.3 --data " + (dir_ / "imgs").string() +
                         " --target 3 --budget 40 -q -o " + out2.string(),
                     dir_ / "log2"),
            0)
      << Slurp(dir_ / "log2");
  auto r = nlohmann::json::parse(Slurp(out2));
  EXPECT_EQ(r["true_class"], 7);
  EXPECT_EQ(r["source"], (dir_ / "imgs" / "7" / "a.png").string());  // the image's file
  EXPECT_LE(r["queries_used"].get<long>(), 40);
}

TEST_F(Cli, SameSeedGivesIdenticalRecordsApartFromTimings) {
  auto run = [&](const std::string& name) {
    const fs::path out = dir_ / name;
    EXPECT_EQ(RunAdvbo("attack --indices 3 --target 5 --budget 120 --seed 9 -q -o " + out.string(),
                       dir_ / "log"),
              0);
    auto r = nlohmann::json::parse(Slurp(out));
    for (const char* k :
         {"seconds", "model_seconds", "wait_seconds", "bo_seconds", "bo_phase_seconds"})
      r.erase(k);
    return r;
  };
  EXPECT_EQ(run("a.jsonl"), run("b.jsonl"));
}

// The one record summary: `attack -o run.jsonl` writes run.summary.json, the
// numbers of its records (recomputed here from the definitions), with the run's threat model;
// tools/summarize.py prints it for any attack (it crashed on non-BOS^2 records).
TEST_F(Cli, SummaryJsonIsTheRecordsSummaryAndSummarizePyPrintsIt) {
  const fs::path out = dir_ / "run.jsonl";
  ASSERT_EQ(
      RunAdvbo("attack --attack square-l2 --untargeted --norm l2 -n 3 --budget 40 --threads 1 "
               "-q -o " +
                   out.string(),
               dir_ / "log"),
      0)
      << Slurp(dir_ / "log");
  const auto records = advbo::testing::ReadJsonl(out);
  ASSERT_EQ(records.size(), 3u);
  long ok = 0;
  double fail_at_budget = 0;
  for (const auto& r : records) {
    ok += r["success"].get<bool>();
    fail_at_budget += r["success"].get<bool>() ? r["queries"].get<double>() : 40.0;
  }
  const auto s = nlohmann::json::parse(Slurp(dir_ / "run.summary.json"));
  EXPECT_EQ(s["attack"], "square-l2");
  EXPECT_EQ(s["instances"], 3);
  EXPECT_EQ(s["successes"], ok);
  EXPECT_DOUBLE_EQ(s["asr"].get<double>(), 100.0 * ok / 3);
  EXPECT_DOUBLE_EQ(s["mean_queries_fail_at_budget"].get<double>(), fail_at_budget / 3);
  EXPECT_EQ(s["threat_model"]["norm"], "l2");
  EXPECT_EQ(s["threat_model"]["epsilon"], 2.0);    // MNIST's L2 default, from the one table
  EXPECT_FALSE(s.contains("perturbation_loops"));  // no BOS^2 loops in Square's records
  const std::string cmd = "/usr/bin/python3 " + kRoot + "/tools/summarize.py " + out.string() +
                          " > " + (dir_ / "py").string() + " 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << Slurp(dir_ / "py");
  char asr[64];
  std::snprintf(asr, sizeof asr, "ASR                        %.1f %% (%ld/3)", 100.0 * ok / 3, ok);
  EXPECT_NE(Slurp(dir_ / "py").find(asr), std::string::npos) << Slurp(dir_ / "py");
}

TEST_F(Cli, RecordsDoNotDependOnTheThreadCount) {
  // BOS^2 (default settings and the thesis preset) and Square on MNIST and CIFAR-10: the
  // records of --threads 1 and --threads 2 agree in everything but the timings.
  for (const std::string args :
       {"--dataset mnist --indices 0,3 --target 5 --budget 150 --attack bos2",
        "--dataset mnist --indices 0 --target 2 --budget 100 --attack bos2:preset=thesis",
        "--dataset cifar10 --indices 0 --target 3 --budget 80 --attack bos2",
        "--dataset cifar10 --indices 0,1 --target 3 --budget 150 --attack square"}) {
    auto run = [&](int threads) {
      const fs::path out = dir_ / ("t" + std::to_string(threads) + ".jsonl");
      fs::remove(out);  // the previous case's finished file (other settings)
      EXPECT_EQ(RunAdvbo("attack " + args + " --seed 2 -q --threads " + std::to_string(threads) +
                             " -o " + out.string(),
                         dir_ / "log"),
                0)
          << Slurp(dir_ / "log");
      std::vector<nlohmann::json> recs;
      std::ifstream in(out);
      for (std::string line; std::getline(in, line);) {
        auto r = nlohmann::json::parse(line);
        for (const char* k : {"seconds", "model_seconds", "wait_seconds", "bo_seconds",
                              "bo_phase_seconds", "threads"})
          r.erase(k);
        recs.push_back(r);
      }
      return recs;
    };
    const auto one = run(1), two = run(2);
    ASSERT_FALSE(one.empty()) << args;
    EXPECT_EQ(one, two) << args;
  }
}

TEST_F(Cli, BadInputFailsClearlyAndWritesNothing) {
  const fs::path out = dir_ / "r.jsonl";
  EXPECT_NE(RunAdvbo("attack --model " + (dir_ / "nope.pt").string() + " -o " + out.string(),
                     dir_ / "log"),
            0);
  EXPECT_NE(Slurp(dir_ / "log").find("nope.pt: model file not found"), std::string::npos);
  std::ofstream(dir_ / "bad.pt") << "garbage";
  EXPECT_NE(RunAdvbo("attack --model " + (dir_ / "bad.pt").string() + " -o " + out.string(),
                     dir_ / "log"),
            0);
  EXPECT_NE(Slurp(dir_ / "log").find("not a loadable TorchScript"), std::string::npos);
  std::ofstream(dir_ / "x-images-idx3-ubyte") << "short";
  EXPECT_NE(RunAdvbo("attack --eps 0.3 --data " + (dir_ / "x-images-idx3-ubyte").string() + " -o " +
                         out.string(),
                     dir_ / "log"),
            0);
  EXPECT_NE(Slurp(dir_ / "log").find("x-images-idx3-ubyte"), std::string::npos);
  // CIFAR model on MNIST data: shape mismatch is reported.
  EXPECT_NE(RunAdvbo("attack --model " + kRoot + "/models/cifar10_cw.pt --dataset mnist -o " +
                         out.string(),
                     dir_ / "log"),
            0);
  EXPECT_NE(Slurp(dir_ / "log").find("rejects input [N, 1, 28, 28]"), std::string::npos);
  EXPECT_NE(RunAdvbo("attack --eps 2 -o " + out.string(), dir_ / "log"), 0);
  EXPECT_FALSE(fs::exists(out));
  EXPECT_FALSE(fs::exists(out.string() + ".partial"));
  // --help explains the options.
  EXPECT_EQ(RunAdvbo("attack --help", dir_ / "log"), 0);
  EXPECT_NE(Slurp(dir_ / "log").find("--budget"), std::string::npos);
}

}  // namespace

namespace {

// a finished -o file is not replaced by a run with other settings (a run with
// the same settings reproduces it and may), and Ctrl-C says where the records are and how
// to resume.
TEST_F(Cli, AFinishedRecordFileIsNotOverwrittenAndCtrlCSaysHowToResume) {
  const fs::path out = dir_ / "r.jsonl";
  const std::string run = "attack --attack square -n 1 --budget 50 -q -o " + out.string();
  ASSERT_EQ(RunAdvbo(run, dir_ / "log"), 0) << Slurp(dir_ / "log");
  const std::string before = Slurp(out);
  EXPECT_EQ(RunAdvbo("attack --attack square -n 1 --budget 60 -q -o " + out.string(), dir_ / "log"),
            1);
  EXPECT_NE(Slurp(dir_ / "log").find("holds a finished run with other settings (budget 50"),
            std::string::npos)
      << Slurp(dir_ / "log");
  EXPECT_EQ(Slurp(out), before);
  ASSERT_EQ(RunAdvbo(run, dir_ / "log"), 0) << Slurp(dir_ / "log");  // same settings: fine

  // Ctrl-C once the run has opened its .partial file (its handler is installed then; a fixed
  // delay failed under AddressSanitizer on a slow machine, before the run had started).
  const fs::path slow = dir_ / "slow.jsonl";
  const std::string partial = slow.string() + ".partial";
  const std::string cmd = "sh -c '" + advbo::testing::kBin +
                          " attack --attack bos2 -n 3 --budget 300 -o " + slow.string() + " > " +
                          (dir_ / "int.log").string() + " 2>&1 & p=$!; i=0; while [ ! -e " +
                          partial + " ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i+1)); done; " +
                          "sleep 1; kill -INT $p; wait $p'";
  const int rc = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(rc));
  EXPECT_EQ(WEXITSTATUS(rc), 128 + SIGINT) << Slurp(dir_ / "int.log");  // died of SIGINT
  EXPECT_NE(Slurp(dir_ / "int.log")
                .find("interrupted; finished instances are kept in " + slow.string() +
                      ".partial: run the same command again to resume"),
            std::string::npos)
      << Slurp(dir_ / "int.log");
  EXPECT_TRUE(fs::exists(slow.string() + ".partial"));
  EXPECT_FALSE(fs::exists(slow));
}

}  // namespace
