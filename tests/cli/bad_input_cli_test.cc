// The bad-input regression suite: every probe must be refused with one
// `advbo: error: ...` line that names the real problem, exit status 1, and nothing written
// (no records, no .partial); resumed runs must refuse records made with other settings and
// continue interrupted ones exactly.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "cli/cli_test_util.h"

namespace {
namespace fs = std::filesystem;

using advbo::testing::RunAdvbo;
using advbo::testing::Slurp;

class BadInput : public advbo::testing::TempDirTest {
 protected:
  // Runs `args` and checks exit 1, the error prefix, `expect` in the message, and that
  // neither `out` nor out.partial nor out_dir/records.jsonl was written.
  void ExpectRefused(const std::string& args, const std::string& expect) {
    const int rc = RunAdvbo(args, dir_ / "log");
    const std::string log = Slurp(dir_ / "log");
    EXPECT_EQ(rc, 1) << args << "\n" << log;
    EXPECT_EQ(log.rfind("advbo: error: ", 0), 0u) << args << "\n" << log;
    EXPECT_NE(log.find(expect), std::string::npos) << args << "\n" << log;
    EXPECT_FALSE(fs::exists(out_)) << args;
    EXPECT_FALSE(fs::exists(out_.string() + ".partial")) << args;
    EXPECT_FALSE(fs::exists(dir_ / "b" / "records.jsonl")) << args;
  }
  void SetUp() override {
    TempDirTest::SetUp();
    out_ = dir_ / "r.jsonl";
  }
  fs::path out_;
};

TEST_F(BadInput, AttackAndBenchOptionsAreValidatedBeforeAnyWork) {
  const std::string o = " -q -o " + out_.string();
  const std::string b = " -q --out-dir " + (dir_ / "b").string();
  const std::vector<std::pair<std::string, std::string>> probes = {
      {"attack --attack random -n 1 --eps -1" + o,
       "--eps: must be a radius in (0, 1] with --norm linf, (0, 886.81] with --norm l2 (a number "
       "or a fraction such as 8/255), got '-1'"},
      {"attack --attack random -n 1 --eps 0" + o, "got '0'"},
      {"attack --attack random -n 1 --eps nan" + o, "--eps: must be a"},
      {"attack --attack random -n 1 --eps 1.5" + o, "(pixel units), got 1.5"},
      {"attack --attack random -n 1 --norm l2 --eps 1000" + o,
       "--eps: must be a radius in (0, 1] with --norm linf, (0, 886.81] with --norm l2"},
      {"attack --attack random -n 1 --norm l2 --eps 900" + o,
       "--eps: must be a radius in (0, 1] with --norm linf, (0, 886.81] with --norm l2 (a number "
       "or a fraction such as 8/255), got '900'"},
      {"attack --attack random -n 1 --eps 8/0" + o, "fraction such as 8/255), got '8/0'"},
      {"attack --attack random -n 1 --norm l2" + o,
       "attack 'random' is a score-based linf attack; --feedback scores --norm l2 needs one of: "
       "simba-dct, square-l2"},
      {"attack --attack square -n 1 --feedback label" + o, "needs one of: rays, hsja"},
      {"attack --attack rays -n 1 --feedback label" + o, "rays is untargeted only (--untargeted)"},
      {"attack --attack random -n 1 --norm l1" + o, "--norm"},
      {"attack --attack random -n 1 --feedback probs" + o, "--feedback"},
      {"attack --attack random -n 1 --target -1" + o,
       "--target: must be an integer >= 0, got '-1'"},
      {"attack --attack random -n 1 --target 10" + o, "the model has 10 classes"},
      {"attack --attack random -n 1 --seed -1" + o, "--seed: must be an integer in 0.."},
      {"attack --attack random -n 1 --threads -1" + o, "--threads: must be an integer in 0..256"},
      {"attack --attack random -n 1 --threads 100000" + o,
       "--threads: must be an integer in 0..256"},
      {"attack --attack random -n 0" + o, "--num-images: must be an integer in 1.."},
      {"attack --attack random -n 1 --budget 0" + o,
       "--budget: must be an integer in 1..100000000, got '0'"},
      {"attack --attack random -n 1 --budget 1000000000000" + o,
       "--budget: must be an integer in 1..100000000, got '1000000000000'"},
      {"attack --attack random --indices 0,-3" + o, "--indices: must be an integer >= 0, got '-3'"},
      {"attack --attack random --indices 0,4,0" + o, "--indices lists image 0 twice"},
      {"attack --attack random -n 1 --http-timeout 1e15" + o,
       "--http-timeout: must be a number in (0, 86400]"},
      {"attack --attack random -n 1 --defender-eps 0" + o, "--defender-eps"},
      {"attack --attack random --indices 0 --target 7" + o, "already of class 7 (= --target)"},
      {"attack --attack random --target 3 --untargeted" + o, "choose one of"},
      {"attack --attack sqare" + o, "unknown attack 'sqare'"},
      {"attack --attack bos2:kernel=linear" + o, "kernel"},
      {"attack --attack random --data " + advbo::testing::kRoot +
           "/data/mnist/t10k-images-idx3-ubyte.gz" + o,
       "--eps is required with --data"},
      {"bench --attacks random --data " + advbo::testing::kRoot +
           "/data/mnist/t10k-images-idx3-ubyte.gz" + b,
       "--eps is required with --data"},
      {"attack --attack bos2:refine=5000000000" + o,
       "attack 'bos2:refine=5000000000': refine must be an integer in [0, 1000000000]"},
      {"attack --attack bos2:refine=100 -n 1 --budget 100" + o,
       "refine=100 reserves the whole budget of 100 queries"},
      {"attack --attack random -n 1 -o " + dir_.string(), "is a folder"},
      {"bench --attacks random -n 1 --eps -1" + b, "--eps: must be"},
      {"bench --attacks random -n 1 --eps 0" + b, "--eps: must be"},
      {"bench --attacks random -n 1 --seed -1" + b, "--seed"},
      {"bench --attacks random -n 0" + b, "--num-images: must be"},
      {"bench --attacks random,random -n 1" + b, "listed twice"},
      {"bench --attacks random -n 1 --threads -1" + b, "--threads"},
      {"bench --attacks random -n 1 --shard 0/2" + b, "--shard must be k/n"},
      {"attak", "unknown command 'attak'"},
      {"benchh", "did you mean 'bench'?"},
      {"bo --function branin --budget 0", "--budget: must be an integer in 1..100000, got '0'"},
      {"bo --function ackley --dim 0", "--dim: must be an integer in 1..1000"},
      {"bo --function branin --seed -1", "--seed"},
      {"game --game mnist --attacker square --defender none --threads -1 --out-dir " +
           (dir_ / "g").string(),
       "--threads"},
      {"game --game mnist --attacker square --defender none --eps 0 --out-dir " +
           (dir_ / "g").string(),
       "--eps: must be"},
  };
  for (const auto& [args, expect] : probes) ExpectRefused(args, expect);
  EXPECT_FALSE(fs::exists(dir_ / "g" / "rounds.jsonl"));
}

TEST_F(BadInput, ImageFoldersSingleFilesAndBadLabelsAreHandled) {
  // A shipped-sample PNG (image 0, a 7) to put into folders.
  ASSERT_EQ(RunAdvbo("attack --attack random --indices 0 --target 3 --budget 2 -q --save-images " +
                         (dir_ / "png").string(),
                     dir_ / "log"),
            0)
      << Slurp(dir_ / "log");
  const fs::path seven = dir_ / "png" / "clean_0_t3.png";
  // A numeric label folder outside the model's classes is named.
  fs::create_directories(dir_ / "imgs_99" / "99");
  fs::copy_file(seven, dir_ / "imgs_99" / "99" / "a.png");
  ExpectRefused("attack --attack random --eps 0.3 --data " + (dir_ / "imgs_99").string() + " -o " +
                    out_.string(),
                "has label 99, outside the model's 10 classes");
  // class-name folders follow torchvision's ImageFolder (sorted names = classes
  // 0..K-1, empty ones included) and records carry the names.
  const char* names[] = {"c0_zero", "c1_one", "c2_two",   "c3_three", "c4_four",
                         "c5_five", "c6_six", "c7_seven", "c8_eight", "c9_nine"};
  for (const char* n : names) fs::create_directories(dir_ / "folder" / n);
  fs::copy_file(seven, dir_ / "folder" / "c7_seven" / "a.png");
  const fs::path r1 = dir_ / "folder.jsonl";
  ASSERT_EQ(RunAdvbo("attack --attack square --eps 0.3 --target 3 --budget 50 -q --data " +
                         (dir_ / "folder").string() + " -o " + r1.string(),
                     dir_ / "log"),
            0)
      << Slurp(dir_ / "log");
  auto r = nlohmann::json::parse(Slurp(r1));
  EXPECT_EQ(r["true_class"], 7);
  EXPECT_EQ(r["true_class_name"], "c7_seven");
  EXPECT_EQ(r["target_name"], "c3_three");
  EXPECT_EQ(r["adversarial_class_name"], names[r["adversarial_class"].get<int>()]);
  EXPECT_FALSE(r.contains("true_class_from"));
  // A single image file: its class is the model's prediction, and the record says so.
  const fs::path r2 = dir_ / "single.jsonl";
  ASSERT_EQ(RunAdvbo("attack --attack square --eps 0.3 --untargeted --budget 50 -q --data " +
                         seven.string() + " -o " + r2.string(),
                     dir_ / "log"),
            0)
      << Slurp(dir_ / "log");
  r = nlohmann::json::parse(Slurp(r2));
  EXPECT_EQ(r["true_class"], 7);  // the model classifies the 7 correctly
  EXPECT_EQ(r["true_class_from"], "prediction");
  EXPECT_EQ(r["source"], seven.string());
}

// a user's folder named by class words (zero/ one/ ...) is sorted as torchvision's
// ImageFolder does (eight = 0, five = 1, ...); the run prints that mapping, a model that
// disagrees gets an error naming the labels, the predictions and --classes, and --classes
// gives the model's order. Without -n every image of the folder is attacked; with -n the
// banner says how many of how many.
TEST_F(BadInput, ClassWordFoldersPrintTheirOrderAndTakeClasses) {
  ASSERT_EQ(RunAdvbo("attack --attack random --indices 0 --target 3 --budget 2 -q --save-images " +
                         (dir_ / "png").string(),
                     dir_ / "log"),
            0)
      << Slurp(dir_ / "log");
  const fs::path seven = dir_ / "png" / "clean_0_t3.png";
  const std::string words = "zero,one,two,three,four,five,six,seven,eight,nine";
  for (const char* w :
       {"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"})
    fs::create_directories(dir_ / "words" / w);
  for (const char* f : {"a.png", "b.png", "c.png"})
    fs::copy_file(seven, dir_ / "words" / "seven" / f);
  const std::string data =
      " --eps 0.3 --untargeted --budget 20 --data " + (dir_ / "words").string();
  // Sorted: eight=0 five=1 four=2 nine=3 one=4 seven=5 ...; the 7s are labelled 5.
  ExpectRefused("attack --attack random" + data + " -o " + out_.string(),
                "has label 5 ('seven'), the model says 7");
  ExpectRefused("attack --attack random" + data + " -o " + out_.string(),
                "sorted order (torchvision's ImageFolder convention): eight=0, five=1, four=2");
  ExpectRefused("attack --attack random" + data + " -o " + out_.string(),
                "give its order with --classes NAME,NAME,...");
  ExpectRefused("attack --attack random" + data + " --classes zero,one -o " + out_.string(),
                "class 'eight' is not in --classes");
  ExpectRefused("attack --attack random --classes " + words + " -o " + out_.string(),
                "--classes orders the classes of your own data (--data)");
  // --classes in the model's order: every image of the folder attacked (no -n), mapping shown.
  ASSERT_EQ(RunAdvbo("attack --attack random --classes " + words + data + " -o " + out_.string(),
                     dir_ / "log"),
            0)
      << Slurp(dir_ / "log");
  const std::string log = Slurp(dir_ / "log");
  EXPECT_NE(log.find("classes (--classes): zero=0, one=1, two=2"), std::string::npos) << log;
  std::vector<nlohmann::json> records;
  {
    std::ifstream in(out_);
    for (std::string l; std::getline(in, l);) records.push_back(nlohmann::json::parse(l));
  }
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[0]["true_class"], 7);
  EXPECT_EQ(records[0]["true_class_name"], "seven");
  // -n 2 of 3: said in the banner.
  const fs::path two = dir_ / "two.jsonl";
  ASSERT_EQ(
      RunAdvbo("attack --attack random -n 2 --classes " + words + data + " -o " + two.string(),
               dir_ / "log"),
      0)
      << Slurp(dir_ / "log");
  EXPECT_NE(Slurp(dir_ / "log")
                .find("attacking the first 2 correctly classified of the 3 images "
                      "(-n 2; -n 3 for all)"),
            std::string::npos)
      << Slurp(dir_ / "log");
}

// Records without their timing fields.
std::vector<nlohmann::json> Untimed(const fs::path& p) {
  std::vector<nlohmann::json> out;
  std::ifstream in(p);
  for (std::string l; std::getline(in, l);) {
    auto r = nlohmann::json::parse(l);
    for (const char* k :
         {"seconds", "model_seconds", "wait_seconds", "bo_seconds", "bo_phase_seconds"})
      r.erase(k);
    out.push_back(r);
  }
  return out;
}

TEST_F(BadInput, InterruptedAttackResumesToTheUninterruptedRecords) {
  const std::string cmd = "attack --attack square --indices 0,1 --budget 60 --seed 3 -q -o ";
  ASSERT_EQ(RunAdvbo(cmd + out_.string(), dir_ / "log"), 0) << Slurp(dir_ / "log");
  const auto whole = Untimed(out_);
  ASSERT_EQ(whole.size(), 18u);
  // An interruption after 5 records, mid-way through the 6th line.
  const fs::path again = dir_ / "again.jsonl";
  {
    std::ifstream in(out_);
    std::ofstream partial(again.string() + ".partial");
    std::string l;
    for (int k = 0; k < 5 && std::getline(in, l); ++k) partial << l << "\n";
    std::getline(in, l);
    partial << l.substr(0, l.size() / 2);
  }
  ASSERT_EQ(RunAdvbo(cmd + again.string(), dir_ / "log"), 0) << Slurp(dir_ / "log");
  EXPECT_FALSE(fs::exists(again.string() + ".partial"));
  EXPECT_EQ(Untimed(again), whole);
  // A leftover .partial from a run with other settings is refused, not mixed in.
  fs::copy_file(out_, dir_ / "other.jsonl.partial");
  const std::string other = "attack --attack square --indices 0,1 --budget 70 --seed 3 -q -o ";
  EXPECT_EQ(RunAdvbo(other + (dir_ / "other.jsonl").string(), dir_ / "log"), 1);
  EXPECT_NE(Slurp(dir_ / "log").find("budget 60 (the records) vs 70 (now)"), std::string::npos)
      << Slurp(dir_ / "log");
  EXPECT_FALSE(fs::exists(dir_ / "other.jsonl"));
  // ... and so is one holding instances this run does not attack (fewer images now).
  fs::copy_file(out_, dir_ / "fewer.jsonl.partial");
  EXPECT_EQ(RunAdvbo("attack --attack square --indices 0 --budget 60 --seed 3 -q -o " +
                         (dir_ / "fewer.jsonl").string(),
                     dir_ / "log"),
            1);
  EXPECT_NE(Slurp(dir_ / "log").find("outside this run's instances"), std::string::npos)
      << Slurp(dir_ / "log");
}

TEST_F(BadInput, BenchRefusesToResumeOrMergeRecordsOfOtherSettings) {
  const std::string base = "bench --attacks random --indices 0 --budget 20 -q --out-dir ";
  ASSERT_EQ(RunAdvbo(base + (dir_ / "a").string(), dir_ / "log"), 0) << Slurp(dir_ / "log");
  const std::string before = Slurp(dir_ / "a" / "records.jsonl");
  for (const auto& [change, expect] : std::vector<std::pair<std::string, std::string>>{
           {" --budget 30", "budget 20 (the records) vs 30 (now)"},
           {" --budget 20 --eps 0.2", "epsilon"},
           {" --budget 20 --seed 1", "seed"},
           {" --budget 20 --defense jpeg:quality=75", "defense"},
           {" --budget 20 --model " + advbo::testing::kRoot + "/models/mnist_cw_plain.pt",
            "model"}}) {
    const std::string args =
        "bench --attacks random --indices 0 -q --out-dir " + (dir_ / "a").string() + change;
    EXPECT_EQ(RunAdvbo(args, dir_ / "log"), 1) << args;
    EXPECT_NE(Slurp(dir_ / "log").find(expect), std::string::npos) << Slurp(dir_ / "log");
  }
  // Other attack options: records of an attack outside --attacks.
  EXPECT_EQ(RunAdvbo("bench --attacks square --indices 0 --budget 20 -q --out-dir " +
                         (dir_ / "a").string(),
                     dir_ / "log"),
            1);
  EXPECT_NE(Slurp(dir_ / "log").find("attack 'random', which is not in --attacks"),
            std::string::npos);
  EXPECT_EQ(Slurp(dir_ / "a" / "records.jsonl"), before);  // nothing appended
  // Merge of shards made with different settings.
  ASSERT_EQ(RunAdvbo("bench --attacks random --indices 1 --budget 30 -q --out-dir " +
                         (dir_ / "b2").string(),
                     dir_ / "log"),
            0);
  EXPECT_EQ(RunAdvbo("bench merge " + (dir_ / "a").string() + " " + (dir_ / "b2").string() +
                         " --out-dir " + (dir_ / "m").string(),
                     dir_ / "log"),
            1);
  EXPECT_NE(Slurp(dir_ / "log").find("budget 30 (the records) vs 20 (now)"), std::string::npos)
      << Slurp(dir_ / "log");
  EXPECT_FALSE(fs::exists(dir_ / "m" / "records.jsonl"));
}

// Records with a missing or mistyped field are refused naming the file, the line and the field
// -- never a raw JSON-library message -- by merge and by a resumed bench, which writes nothing.
TEST_F(BadInput, RecordsWithMissingOrMistypedFieldsAreNamed) {
  ASSERT_EQ(RunAdvbo("bench --attacks random --indices 0 --budget 20 -q --out-dir " +
                         (dir_ / "a").string(),
                     dir_ / "log"),
            0)
      << Slurp(dir_ / "log");
  const auto good = advbo::testing::ReadJsonl(dir_ / "a" / "records.jsonl");
  ASSERT_FALSE(good.empty());
  struct Case {
    std::string field;
    nlohmann::json value;  // null = remove the field
    std::string expect;
  };
  const std::vector<Case> cases = {
      {"seconds", nullptr, "field 'seconds' is missing"},
      {"attack", 7, "field 'attack' must be a non-empty string"},
      {"budget", 1000000000000000LL, "field 'budget' must be an integer in [1, 1e+08]"},
      {"queries", 25, "field 'queries' must be a number in [0, 20], got 25"},
      {"success", "yes", "field 'success' must be true or false"},
      {"image_index", -1, "field 'image_index' must be an integer"},
  };
  int k = 0;
  for (const auto& c : cases) {
    const fs::path bad = dir_ / ("bad" + std::to_string(k++));
    fs::create_directories(bad);
    std::ofstream f(bad / "records.jsonl");
    for (size_t i = 0; i < good.size(); ++i) {
      nlohmann::json r = good[i];
      if (i == 0) {
        if (c.value.is_null())
          r.erase(c.field);
        else
          r[c.field] = c.value;
      }
      f << r.dump() << "\n";
    }
    f.close();
    const std::string where = (bad / "records.jsonl").string() + ": line 1: ";
    EXPECT_EQ(RunAdvbo("bench merge " + bad.string() + " --out-dir " + (dir_ / "m").string(),
                       dir_ / "log"),
              1);
    std::string log = Slurp(dir_ / "log");
    EXPECT_NE(log.find(where + c.expect), std::string::npos) << log;
    EXPECT_EQ(log.find("json.exception"), std::string::npos) << log;
    EXPECT_FALSE(fs::exists(dir_ / "m" / "records.jsonl"));
    // A bench resuming that folder refuses it the same way and appends nothing.
    const std::string before = Slurp(bad / "records.jsonl");
    EXPECT_EQ(
        RunAdvbo("bench --attacks random --indices 0 --budget 20 -q --out-dir " + bad.string(),
                 dir_ / "log"),
        1);
    log = Slurp(dir_ / "log");
    EXPECT_NE(log.find(c.expect), std::string::npos) << log;
    EXPECT_EQ(Slurp(bad / "records.jsonl"), before);
  }
}

// A full disk ends bo and macro with exit status 1, a message naming the file and no trace:
// the trace's .partial is a symlink to /dev/full, where every write fails with ENOSPC.
TEST_F(BadInput, AFullDiskFailsBoAndMacroWithoutLeavingATrace) {
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "this machine has no /dev/full";
  for (const std::string cmd : {"bo -f branin --budget 6 -q -o ",
                                "macro --algo emacro --field plankton -H 2 -N 20 -r 2 "
                                "--seed 4 -q -o "}) {
    const fs::path out = dir_ / "t.jsonl";
    fs::create_symlink("/dev/full", out.string() + ".partial");
    EXPECT_EQ(RunAdvbo(cmd + out.string(), dir_ / "log"), 1) << cmd;
    const std::string log = Slurp(dir_ / "log");
    EXPECT_NE(log.find("advbo: error: " + out.string() + ".partial: write failed (disk full?)"),
              std::string::npos)
        << log;
    EXPECT_FALSE(fs::exists(out)) << cmd;
    EXPECT_FALSE(fs::is_symlink(out.string() + ".partial")) << cmd;
    EXPECT_TRUE(fs::exists("/dev/full"));
  }
}

// A run that fails after its output folders were created removes the folders it made (and its
// half-written .partial files): nothing is left behind, while existing folders stay.
TEST_F(BadInput, FailedRunsLeaveNoNewFolders) {
  const std::string missing = " --model " + (dir_ / "missing.pt").string();
  const std::vector<std::pair<std::string, fs::path>> runs = {
      {"attack --attack random -n 1 -q" + missing + " -o " + (dir_ / "n1/sub/r.jsonl").string(),
       dir_ / "n1"},
      {"attack --attack random -n 1 -q" + missing + " --save-images " + (dir_ / "imgs/").string(),
       dir_ / "imgs"},
      {"bench --attacks random -n 1 -q" + missing + " --out-dir " + (dir_ / "n2/b").string(),
       dir_ / "n2"},
      {"fbo --algo ts --agents 2 --rounds 2 --init 1 --domain 8 --bounds 0:1 -q -c false "
       "--out-dir " +
           (dir_ / "n3/f").string(),
       dir_ / "n3"},
  };
  for (const auto& [args, folder] : runs) {
    EXPECT_NE(RunAdvbo(args, dir_ / "log"), 0) << args;
    EXPECT_NE(Slurp(dir_ / "log").find("advbo: error: "), std::string::npos) << Slurp(dir_ / "log");
    EXPECT_FALSE(fs::exists(folder)) << args << "\n" << Slurp(dir_ / "log");
  }
  // An existing folder is never removed, even when empty.
  fs::create_directories(dir_ / "kept");
  EXPECT_EQ(RunAdvbo("bench --attacks random -n 1 -q" + missing + " --out-dir " +
                         (dir_ / "kept").string(),
                     dir_ / "log"),
            1);
  EXPECT_TRUE(fs::is_directory(dir_ / "kept"));
}

// Two runs on one output: the second refuses to start (advisory lock) instead of
// interleaving its records with the first's; the first's file is untouched.
TEST_F(BadInput, ASecondRunOnTheSameOutputIsRefused) {
  const fs::path out = dir_ / "r.jsonl", pid = dir_ / "pid";
  const std::string slow = "attack --attack random --indices 0,1,2 --eps 0.01 --budget 5000000 -q";
  ASSERT_EQ(
      std::system(("sh -c 'echo $$ > " + pid.string() + "; exec " + advbo::testing::kBin + " " +
                   slow + " -o " + out.string() + "' > " + (dir_ / "log1").string() + " 2>&1 &")
                      .c_str()),
      0);
  for (int i = 0; i < 600 && !fs::exists(out.string() + ".partial"); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_TRUE(fs::exists(out.string() + ".partial")) << Slurp(dir_ / "log1");
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(RunAdvbo(slow + " -o " + out.string(), dir_ / "log2"), 1);
  EXPECT_NE(Slurp(dir_ / "log2").find("another advbo run is writing this file"), std::string::npos)
      << Slurp(dir_ / "log2");
  EXPECT_TRUE(fs::exists(out.string() + ".partial"));  // the first run's file stays
  std::system(("kill $(cat " + pid.string() + ")").c_str());
}

}  // namespace
