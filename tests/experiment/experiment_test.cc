// Unit tests of the experiment runner library (src/experiment/): spec validation, attack
// lists, seed derivation, resumable record files, settings checks, and the runner's
// invariants on the shipped MNIST model (no query outside the eps-ball, never more queries
// than the budget, records independent of which jobs ran before).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>

#include "data/datasets.h"
#include "experiment/evaluate.h"
#include "experiment/records.h"
#include "experiment/runner.h"
#include "experiment/seeds.h"
#include "experiment/spec.h"
#include "experiment/threat_model.h"
#include "oracle/classifier.h"

namespace advbo::experiment {
namespace {
namespace fs = std::filesystem;

// A spec Validate accepts, for one-field mutations.
ExperimentSpec Good() {
  ExperimentSpec s;
  s.attacks = {"square"};
  s.num_images = 1;
  s.budget = 50;
  return s;
}

// Validate checks every field but the threat model's, which the Experiment resolves (and its
// radius checks) once, before loading anything: together they refuse every bad field.
TEST(ExperimentSpec, ValidateAndTheThreatModelRefuseEveryBadField) {
  EXPECT_NO_THROW(Validate(Good()));
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<std::pair<std::string, std::function<void(ExperimentSpec&)>>> bad = {
      {"--eps", [](ExperimentSpec& s) { s.eps = -1; }},
      {"--eps", [](ExperimentSpec& s) { s.eps = 0; }},
      {"--eps", [nan](ExperimentSpec& s) { s.eps = nan; }},
      {"--eps", [](ExperimentSpec& s) { s.eps = 1.5; }},
      {"--defender-eps", [](ExperimentSpec& s) { s.defender_eps = 0; }},
      {"--target", [](ExperimentSpec& s) { s.target = -1; }},
      {"--untargeted", [](ExperimentSpec& s) { s.untargeted = true, s.target = 3; }},
      {"--num-images", [](ExperimentSpec& s) { s.num_images = 0; }},
      {"--budget", [](ExperimentSpec& s) { s.budget = 0; }},
      {"--threads", [](ExperimentSpec& s) { s.threads = -1; }},
      {"--threads", [](ExperimentSpec& s) { s.threads = kMaxThreads + 1; }},
      {"--clean-images", [](ExperimentSpec& s) { s.clean_images = -1; }},
      {"unknown attack", [](ExperimentSpec& s) { s.attacks = {"sqare"}; }},
      {"listed twice",
       [](ExperimentSpec& s) {
         s.attacks = {"square", "square"};
       }},
      {"no attack", [](ExperimentSpec& s) { s.attacks.clear(); }},
      {"bos2 setting", [](ExperimentSpec& s) { s.attacks = {"bos2:kernel=linear"}; }},
  };
  for (auto& [what, mutate] : bad) {
    ExperimentSpec s = Good();
    mutate(s);
    try {
      Validate(s);
      ResolveThreatModel(s.dataset, s.eps, s.norm, s.feedback, s.pixels, s.radius_use,
                         s.option_names, s.rescale_compat);
      ADD_FAILURE() << what << " accepted";
    } catch (const std::invalid_argument& e) {
      const std::string msg = e.what();
      if (what.rfind("--", 0) == 0) EXPECT_NE(msg.find(what), std::string::npos) << msg;
    }
  }
  // Explicit indices make --num-images irrelevant.
  ExperimentSpec s = Good();
  s.num_images = 0;
  s.indices = {3};
  EXPECT_NO_THROW(Validate(s));
}

// The one table of default radii and the resolution of a threat model: defaults
// only when unset, the range per norm, errors naming the option as the user typed it.
TEST(ThreatModel, DefaultRadiiComeFromOneTable) {
  using oracle::Norm;
  // One standard radius per dataset and norm, for every command (attack, bench, evaluate).
  EXPECT_DOUBLE_EQ(*DefaultRadius("mnist", Norm::kLinf, RadiusUse::kStandard), 0.3);
  EXPECT_DOUBLE_EQ(*DefaultRadius("cifar10", Norm::kLinf, RadiusUse::kStandard), 8.0 / 255);
  EXPECT_DOUBLE_EQ(*DefaultRadius("mnist", Norm::kL2, RadiusUse::kStandard), 2.0);
  EXPECT_DOUBLE_EQ(*DefaultRadius("cifar10", Norm::kL2, RadiusUse::kStandard), 0.5);
  EXPECT_DOUBLE_EQ(*DefaultRadius("mnist", Norm::kLinf, RadiusUse::kGame), 0.2);
  EXPECT_DOUBLE_EQ(*DefaultRadius("cifar10", Norm::kLinf, RadiusUse::kGame), 0.05);
  EXPECT_FALSE(DefaultRadius("mnist", Norm::kL2, RadiusUse::kGame));
  EXPECT_FALSE(DefaultRadius("custom", Norm::kLinf, RadiusUse::kStandard));
}

TEST(ThreatModel, ResolvedOnceWithTheRangeOfItsNormAndTheUsersOptionNames) {
  const ThreatModel d =
      ResolveThreatModel("mnist", std::nullopt, "linf", "scores", "8bit", RadiusUse::kStandard);
  EXPECT_DOUBLE_EQ(d.eps, 0.3);
  EXPECT_TRUE(d.eps_default);
  const ThreatModel given =
      ResolveThreatModel("mnist", 0.1, "linf", "label", "float", RadiusUse::kStandard);
  EXPECT_DOUBLE_EQ(given.eps, 0.1);
  EXPECT_FALSE(given.eps_default);
  EXPECT_EQ(given.feedback, oracle::Feedback::kLabel);
  EXPECT_EQ(given.pixels, oracle::PixelSpace::kFloat);
  // L2 2.0 (the CLI's MNIST L2 default) is a radius; under L_inf it is not.
  EXPECT_DOUBLE_EQ(
      ResolveThreatModel("mnist", 2.0, "l2", "scores", "8bit", RadiusUse::kStandard).eps, 2.0);
  auto message = [](std::optional<double> eps, const std::string& norm, const OptionNames& n) {
    try {
      ResolveThreatModel("mnist", eps, norm, "scores", "8bit", RadiusUse::kStandard, n);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const OptionNames cli, py = OptionNames::Python();
  EXPECT_EQ(message(2.0, "linf", cli),
            "--eps must be an L_inf radius in (0, 1] (pixel units), got 2");
  EXPECT_EQ(message(2.0, "linf", py), "eps must be an L_inf radius in (0, 1] (pixel units), got 2");
  EXPECT_EQ(message(1000.0, "l2", py).rfind("eps must be an L2 radius in (0, 886.81]", 0), 0u);
  for (const double bad : {0.0, -0.3, std::nan("")})
    EXPECT_NE(message(bad, "linf", cli), "") << bad;  // never replaced by the default
  EXPECT_EQ(message(0.1, "l3", py).rfind("norm must be", 0), 0u) << message(0.1, "l3", py);
  EXPECT_THROW(
      ResolveThreatModel("custom", std::nullopt, "linf", "scores", "8bit", RadiusUse::kStandard),
      std::invalid_argument);
}

TEST(ThreatModel, EnforcedRadiusAndDescriptionFollowTheQuerySpace) {
  ThreatModel tm;
  tm.eps = 0.031;  // 7.9/255: 8-bit L_inf queries can only reach 7/255
  EXPECT_DOUBLE_EQ(tm.enforced_eps(), 7.0 / 255);
  EXPECT_EQ(tm.DescribeRadius(),
            "L_inf eps 0.031 = 7.905/255 (8-bit queries enforce 7/255 = 0.02745)");
  tm.pixels = oracle::PixelSpace::kFloat;
  EXPECT_DOUBLE_EQ(tm.enforced_eps(), 0.031);
  tm.pixels = oracle::PixelSpace::k8bit;
  tm.rescale_compat = true;
  EXPECT_DOUBLE_EQ(tm.enforced_eps(), 0.031);
  ThreatModel l2;
  l2.norm = oracle::Norm::kL2;
  l2.eps = 2;
  l2.feedback = oracle::Feedback::kLabel;
  EXPECT_DOUBLE_EQ(l2.enforced_eps(), 2.0);
  EXPECT_EQ(l2.Describe(), "L2 eps 2, label feedback, 8bit queries");
  const nlohmann::json j = l2.ToJson();
  EXPECT_EQ(j["norm"], "l2");
  EXPECT_EQ(j["feedback"], "label");
  EXPECT_EQ(j["epsilon_effective"], 2.0);
  EXPECT_EQ(j["threat_model"], "clip");
}

TEST(ExperimentSpec, AttackListKeepsSettingsTogether) {
  EXPECT_EQ(SplitAttackList("bos2:kernel=matern52,beta=constant:9,square,,random"),
            (std::vector<std::string>{"bos2:kernel=matern52,beta=constant:9", "square", "random"}));
  EXPECT_EQ(SplitAttackList("bos2-nostop"), (std::vector<std::string>{"bos2-nostop"}));
  EXPECT_THROW(SplitAttackList(",,"), std::invalid_argument);
}

TEST(ExperimentSeeds, NamedDerivationsMatchTheirDefinitions) {
  EXPECT_EQ(InstanceSeed(7, 3), bo::DeriveSeed(7, 3));
  EXPECT_EQ(InstanceDefenseSeed(11), bo::DeriveSeed(11, 0xDEFE45EULL));
  EXPECT_EQ(SelectionDefenseSeed(5), bo::DeriveSeed(5, kDefenseSeedSalt));
  EXPECT_EQ(GameRunSeed(0, 2, 1), bo::DeriveSeed(0, 1000003ULL * 3 + 1));
  std::set<uint64_t> seeds;  // distinct streams for distinct instances and runs
  for (size_t k = 0; k < 100; ++k) seeds.insert(InstanceSeed(0, k));
  for (size_t g = 0; g < 10; ++g)
    for (int i = 0; i < 10; ++i) seeds.insert(GameRunSeed(0, g, i));
  EXPECT_EQ(seeds.size(), 200u);
}

class RecordFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("advbo_experiment_" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "_" +
            std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  static nlohmann::json Rec(int image) {
    return {{"attack", "square"},  {"image_index", image}, {"target", 3},
            {"budget", 900},       {"epsilon", 0.3},       {"seed", 0},
            {"model", "m.pt"},     {"dataset", "mnist"},   {"threat_model", "clip"},
            {"success", true},     {"queries", 12},        {"seconds", 0.5},
            {"model_seconds", 0.1}};
  }
  fs::path dir_;
};

TEST_F(RecordFileTest, StagedFileExistsOnlyWhenCommittedAndResumes) {
  const fs::path f = dir_ / "r.jsonl";
  {
    RecordFile file(f, true);
    file.Append(Rec(0));
    file.Append(Rec(1));
    EXPECT_FALSE(fs::exists(f));  // interrupted here: only r.jsonl.partial
  }
  // A write cut short leaves half a line at the end.
  std::ofstream(dir_ / "r.jsonl.partial", std::ios::app) << "{\"attack\":\"squ";
  RecordFile again(f, true);
  ASSERT_EQ(again.resumed().size(), 2u);
  EXPECT_EQ(KeyOf(again.resumed()[1]), (RecordKey{"square", 1, 3}));
  again.Append(Rec(2));
  again.Commit();
  EXPECT_FALSE(fs::exists(dir_ / "r.jsonl.partial"));
  const auto all = ReadRecords(f);
  ASSERT_EQ(all.size(), 3u);  // the cut-short line is gone
  EXPECT_EQ(all[2]["image_index"], 2);
}

std::string Slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

// Resuming keeps the bytes of the complete records (spacing, number formatting) and only
// cuts a half-written last line; a complete last line without "\n" gets one before the
// next record.
TEST_F(RecordFileTest, ResumeKeepsTheRecordsBytes) {
  const fs::path f = dir_ / "r.jsonl";
  const std::string first =
      "{ \"attack\": \"square\", \"image_index\": 0, \"target\": 3, "
      "\"epsilon\": 3.0e-1, \"budget\": 900, \"success\": false, \"queries\": 9.0e2, "
      "\"seconds\": 1, \"model_seconds\": 0.5 }\n";
  std::ofstream(dir_ / "r.jsonl.partial", std::ios::binary) << first << "{\"attack\":\"sq";
  {
    RecordFile file(f, true);
    ASSERT_EQ(file.resumed().size(), 1u);
    EXPECT_EQ(Slurp(dir_ / "r.jsonl.partial"), first);
  }
  const std::string second = Rec(1).dump();
  std::ofstream(dir_ / "r.jsonl.partial", std::ios::app | std::ios::binary) << second;
  RecordFile file(f, true);
  ASSERT_EQ(file.resumed().size(), 2u);
  file.Append(Rec(2));
  file.Commit();
  EXPECT_EQ(Slurp(f), first + second + "\n" + Rec(2).dump() + "\n");
}

TEST_F(RecordFileTest, CorruptMiddleLineAndFoldersAreRefused) {
  std::ofstream(dir_ / "bad.jsonl") << Rec(0).dump() << "\nnot json\n" << Rec(1).dump() << "\n";
  try {
    ReadRecords(dir_ / "bad.jsonl");
    ADD_FAILURE() << "corrupt line accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("line 2"), std::string::npos) << e.what();
  }
  EXPECT_THROW(RecordFile(dir_, true), std::runtime_error);
  fs::create_directories(dir_ / "x.jsonl");
  EXPECT_THROW(RecordFile(dir_ / "x.jsonl", false), std::runtime_error);
}

// One run's files, sharded or not, and nothing else of the folder (bench merge, evaluate's
// resume and merge all find their shards this way); a JSONL line check sees every line.
TEST_F(RecordFileTest, ShardFilesAndCheckedLines) {
  for (const char* f : {"records.jsonl", "records.shard-2-of-2.jsonl", "records.shard-1-of-2.jsonl",
                        "records.jsonl.partial", "records_old.jsonl", "reference.jsonl",
                        "records.shard-1-of-2.json"})
    std::ofstream(dir_ / f) << Rec(0).dump() << "\n" << Rec(1).dump() << "\n{\"cut";
  const auto files = ShardFiles(dir_, "records", ".jsonl");
  ASSERT_EQ(files.size(), 3u);
  EXPECT_EQ(files[0].filename(), "records.jsonl");
  EXPECT_EQ(files[1].filename(), "records.shard-1-of-2.jsonl");
  EXPECT_EQ(files[2].filename(), "records.shard-2-of-2.jsonl");
  EXPECT_EQ(ShardFiles(dir_, "reference", ".jsonl").size(), 1u);
  EXPECT_TRUE(ShardFiles(dir_, "summary", ".json").empty());
  std::vector<std::string> seen;
  const auto check = [&](const nlohmann::json& j, const std::string& where) {
    seen.push_back(where);
    if (j.at("image_index") == 1) throw std::runtime_error(where + ": image 1 refused");
  };
  try {
    ReadJsonLines(files[0], check);
    ADD_FAILURE() << "the check's refusal was swallowed";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), files[0].string() + ": line 2: image 1 refused");
  }
  EXPECT_EQ(seen.size(), 2u);
  const auto lines = ReadJsonLines(files[1], [](const nlohmann::json&, const std::string&) {});
  EXPECT_EQ(lines.size(), 2u);  // the cut-short last line dropped
  EXPECT_THROW(ReadJsonLines(dir_ / "none.jsonl", check), std::runtime_error);
}

TEST_F(RecordFileTest, AtomicWriteReplacesWholeFiles) {
  WriteFileAtomic(dir_ / "t.txt", "one\n");
  WriteFileAtomic(dir_ / "t.txt", "two\n");
  std::ifstream in(dir_ / "t.txt");
  std::string s((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(s, "two\n");
  EXPECT_FALSE(fs::exists(dir_ / "t.txt.partial"));
  EXPECT_THROW(WriteFileAtomic(dir_ / "no" / "such" / "t.txt", "x"), std::runtime_error);
}

TEST(ExperimentSettings, MismatchNamesTheSetting) {
  nlohmann::json r = {{"budget", 900},   {"epsilon", 0.3},     {"seed", 0},
                      {"model", "m.pt"}, {"dataset", "mnist"}, {"threat_model", "clip"}};
  const nlohmann::json s = RecordSettings(r);
  EXPECT_EQ(s["defense"], "none");
  EXPECT_EQ(SettingsMismatch(r, s), "");
  r["epsilon"] = 0.2;
  EXPECT_NE(SettingsMismatch(r, s).find("epsilon 0.2"), std::string::npos)
      << SettingsMismatch(r, s);
  r["epsilon"] = 0.3;
  r["defense"] = "jpeg:quality=75";
  EXPECT_NE(SettingsMismatch(r, s).find("defense"), std::string::npos);
}

// A record without its timing fields (they differ from run to run).
nlohmann::json WithoutTimings(nlohmann::json r) {
  for (const char* k : {"seconds", "model_seconds", "wait_seconds", "bo_seconds"}) r.erase(k);
  return r;
}

// The runner on the shipped model: every job stays in the eps-ball and within budget, and a
// job's record does not depend on which jobs ran before it (instance seeds are positional).
// Run() called directly scores one call at a time (records: lockstep 1), so the spec says so.
TEST(ExperimentRunner, JobsRespectTheThreatModelAndAreOrderIndependent) {
  ExperimentSpec s;
  s.attacks = {"square", "random"};
  s.indices = {0, 1};
  s.budget = 40;
  s.threads = 1;
  s.lockstep = 1;
  const Experiment ex(s);
  ASSERT_EQ(ex.instances().size(), 18u);  // 2 images x 9 targets
  EXPECT_DOUBLE_EQ(ex.epsilon(), 0.3);
  std::vector<nlohmann::json> forward;
  for (size_t i = 0; i < 4; ++i)
    for (size_t j = 0; j < 2; ++j) {
      const JobResult r = ex.Run(i, j, nullptr);
      EXPECT_LE(r.record["queries_used"].get<long>(), 40);
      EXPECT_LE(r.record["linf"].get<double>(), 0.3 + 1e-6);
      for (size_t p = 0; p < r.clean.size(); ++p) {
        EXPECT_LE(std::abs(r.result.adversarial[p] - r.clean[p]), 0.3f + 1e-6f);
        ASSERT_GE(r.result.adversarial[p], 0.0f);
        ASSERT_LE(r.result.adversarial[p], 1.0f);
      }
      EXPECT_EQ(SettingsMismatch(r.record, ex.Settings()), "");
      forward.push_back(WithoutTimings(r.record));
    }
  // The same jobs in reverse order give the same records.
  for (size_t i = 4; i-- > 0;)
    for (size_t j = 2; j-- > 0;)
      EXPECT_EQ(WithoutTimings(ex.Run(i, j, nullptr).record), forward[i * 2 + j]);
}

// Bad queries: the Blacklight monitor beside the model flags exactly the queries
// the Blacklight defense in flag mode (the same paper setting, reached through the defense
// chain instead of the referee's observer) detects on the same run; Square's near-duplicate
// queries are mostly flagged; without the monitor records carry no count.
TEST(ExperimentRunner, BadQueriesAreWhatABlacklightDefenseInFlagModeDetects) {
  ExperimentSpec s;
  s.attacks = {"square"};
  s.indices = {0, 1};
  s.untargeted = true;
  s.budget = 80;
  s.eps = 0.03;  // too small to succeed: Square spends the budget
  s.threads = 1;
  s.lockstep = 1;
  s.clean_images = 2;
  s.defense = "blacklight:action=flag";
  const Experiment ex(s);
  for (size_t i = 0; i < ex.instances().size(); ++i) {
    const JobResult r = ex.Run(i, 0, nullptr);
    ASSERT_TRUE(r.record["bad_queries"].is_number()) << r.record.dump();
    EXPECT_EQ(r.record["bad_queries"], r.record["detections"]);
    EXPECT_EQ(r.record["first_bad_query"], r.record["first_detection"]);
    EXPECT_EQ(r.record["queries_used"], 80);
    EXPECT_GT(r.record["bad_queries"].get<long>(), 40);
  }
  s.bad_queries = false;
  s.defense = "none";
  const JobResult quiet = Experiment(s).Run(0, 0, nullptr);
  EXPECT_FALSE(quiet.record.contains("bad_queries"));
}

// Targeted hard-label runs start from an image of the target class that the model
// classifies so: none of the attacked images 0-1 (a 7 and a 2) is a 3, so the runner scans the
// 3s in index order; the first, test image 18, is correctly classified. Its index is recorded.
TEST(ExperimentRunner, TargetedHardLabelRunsStartFromACorrectImageOfTheTarget) {
  ExperimentSpec s;
  s.attacks = {"hsja"};
  s.indices = {0, 1};
  s.target = 3;
  s.feedback = "label";
  s.norm = "l2";
  s.budget = 20;
  s.threads = 1;
  s.lockstep = 1;
  const Experiment ex(s);
  ASSERT_EQ(ex.instances().size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    const JobResult r = ex.Run(i, 0, nullptr);
    EXPECT_EQ(r.record["start_image_index"], 18);
  }
  EXPECT_EQ(ex.images().labels[18], 3);
  for (int i = 0; i < 18; ++i) EXPECT_NE(ex.images().labels[i], 3) << i;
  Eigen::Index arg;
  ex.model().LogProbabilities(ex.images().image(18), 1).row(0).maxCoeff(&arg);
  EXPECT_EQ(arg, 3);
}

// --start-images: the user's folder gives the targeted start. Its class-3 folder
// holds test image 0 (a 7, which the model does not put in class 3) before test image 18 (a 3
// it classifies so): the second is picked, and its index in the folder and the folder are
// recorded. A folder without a usable 3 is refused naming the class, and so is the option on an
// untargeted or score-based run.
TEST(ExperimentRunner, TargetedStartsComeFromTheUsersFolder) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("advbo_start_" + std::to_string(getpid()));
  fs::create_directories(dir / "3");
  fs::create_directories(dir / "5");
  ExperimentSpec s;
  s.attacks = {"hsja"};
  s.indices = {0};
  s.target = 3;
  s.feedback = "label";
  s.norm = "l2";
  s.budget = 20;
  s.threads = 1;
  s.lockstep = 1;
  const Experiment plain(s);
  const auto& images = plain.images();
  data::WritePng((dir / "3" / "a.png").string(), images.image(0), 1, 28, 28);
  data::WritePng((dir / "3" / "b.png").string(), images.image(18), 1, 28, 28);
  data::WritePng((dir / "5" / "c.png").string(), images.image(18), 1, 28, 28);
  s.start_images = dir.string();
  const Experiment ex(s);
  const JobResult r = ex.Run(0, 0, nullptr);
  EXPECT_EQ(r.record["start_image_index"], 1);
  EXPECT_EQ(r.record["start_images"], dir.string());
  fs::remove_all(dir / "3");
  try {
    Experiment bad(s);
    ADD_FAILURE() << "a folder without a 3 was taken";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("no image of class 3"), std::string::npos) << e.what();
  }
  fs::remove_all(dir);
  s.target.reset();
  s.untargeted = true;
  EXPECT_THROW(Validate(s), std::invalid_argument);
  s.untargeted = false;
  s.target = 3;
  s.feedback = "scores";
  EXPECT_THROW(Validate(s), std::invalid_argument);
}

// RunJobs in lockstep. Jobs in another order meet other jobs in their batches, yet
// every record is the same (each forward pass has B rows and an image's scores do not depend on
// its row); commits come in job order; records carry B and match the experiment's settings;
// auto picks the largest power of two <= 8 that the jobs fill, and 1 for MNIST-size models.
TEST(ExperimentRunner, LockstepJobsGiveTheSameRecordsInAnyOrder) {
  ExperimentSpec s;
  s.attacks = {"square", "parsimonious"};
  s.indices = {0, 1};
  s.budget = 60;
  s.eps = 0.1;
  s.lockstep = 4;
  const Experiment ex(s);
  ASSERT_EQ(ex.lockstep(), 4);
  const size_t n = 12;  // (instance, attack) = (k / 2, k % 2)
  auto run = [&](bool reverse) {
    std::map<size_t, nlohmann::json> out;
    std::vector<size_t> committed;
    ex.RunJobs(n, [&](size_t k) -> oracle::Lockstep::Commit {
      const size_t job = reverse ? n - 1 - k : k;
      auto r = std::make_shared<JobResult>(ex.Run(job / 2, job % 2, nullptr));
      return [&, k, job, r] {
        committed.push_back(k);
        out[job] = r->record;
      };
    });
    std::vector<size_t> order(n);
    for (size_t k = 0; k < n; ++k) order[k] = k;
    EXPECT_EQ(committed, order);
    return out;
  };
  const auto forward = run(false), backward = run(true);
  ASSERT_EQ(forward.size(), n);
  for (const auto& [job, r] : forward) {
    const nlohmann::json a = WithoutTimings(r), b = WithoutTimings(backward.at(job));
    EXPECT_EQ(a, b) << "job " << job << ": " << nlohmann::json::diff(a, b).dump();
    EXPECT_EQ(r["lockstep"], 4);
    EXPECT_EQ(SettingsMismatch(r, ex.Settings()), "");
  }
  const oracle::LockstepStats st = ex.lockstep_stats();
  EXPECT_GT(st.forwards, 0);
  EXPECT_EQ(st.forwards * 4, st.rows + st.padded_rows);
  EXPECT_EQ(AutoLockstepLanes(1, 3072), 1);
  EXPECT_EQ(AutoLockstepLanes(3, 3072), 2);
  EXPECT_EQ(AutoLockstepLanes(7, 3072), 4);
  EXPECT_EQ(AutoLockstepLanes(450, 3072), 8);
  EXPECT_EQ(AutoLockstepLanes(450, 784), 1);  // MNIST: batching does not pay
  s.lockstep = 0;
  s.indices = {0};
  s.target = 3;  // 1 instance x 2 attacks
  EXPECT_EQ(Experiment(s).lockstep(), 1);
  s.dataset = "cifar10";
  s.eps = 8.0 / 255;
  {
    // Auto W: one worker group per core (at most the jobs); auto B from a group's share.
    const Experiment auto_ex(s);
    const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    EXPECT_EQ(auto_ex.workers(), std::min(cores, 2));
    EXPECT_EQ(auto_ex.lockstep(), auto_ex.workers() == 2 ? 1 : 2);
  }
  s.workers = 1;
  EXPECT_EQ(Experiment(s).lockstep(), 2);
  EXPECT_EQ(AutoWorkers(450, 2), 2);
  EXPECT_EQ(AutoWorkers(1, 2), 1);
  EXPECT_EQ(AutoWorkers(450, 0), 1);
  s.workers = 65;
  EXPECT_THROW(Validate(s), std::invalid_argument);
  s.workers = 0;
  s.lockstep = 65;
  EXPECT_THROW(Validate(s), std::invalid_argument);
  s.lockstep = 2;
  s.model = "http://127.0.0.1:1/predict";
  EXPECT_THROW(Validate(s), std::invalid_argument);
}

TEST(ExperimentRunner, NoInstanceMessagesSayWhy) {
  ExperimentSpec s;
  s.attacks = {"random"};
  s.indices = {0};  // image 0 of the shipped MNIST sample is a 7
  s.target = 7;
  try {
    Experiment ex(s);
    ADD_FAILURE() << "accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("already of class 7"), std::string::npos) << e.what();
  }
  s.target = 12;
  try {
    Experiment ex(s);
    ADD_FAILURE() << "accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("10 classes"), std::string::npos) << e.what();
  }
}

// The verified 8-bit image: inside the ball, on the grid, its recorded success is the model's
// verdict on it, and written as PNG it reads back unchanged.
TEST(ExperimentRunner, QuantizedImagesAreVerifiedAndExactAsPng) {
  ExperimentSpec s;
  s.attacks = {"square"};
  s.indices = {0, 1};
  s.budget = 300;
  s.threads = 1;
  const Experiment ex(s);
  const fs::path dir =
      fs::temp_directory_path() / ("advbo_experiment_png_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "3");
  int checked = 0;
  for (size_t i = 0; i < ex.instances().size(); ++i) {
    const JobResult r = ex.Run(i, 0, nullptr);
    EXPECT_EQ(r.record["quantized_queries"], 1);
    EXPECT_LE(r.record["quantized_linf"].get<double>(), 0.3);
    const Eigen::MatrixXd lp = ex.model().LogProbabilities(r.quantized.data(), 1);
    Eigen::Index pred;
    lp.row(0).maxCoeff(&pred);
    EXPECT_EQ(r.quantized_success, pred == ex.instances()[i].target) << i;
    EXPECT_EQ(r.record["quantized_success"], r.quantized_success);
    if (i == 0) {
      data::WritePng((dir / "3" / "a.png").string(), r.quantized.data(), 1, 28, 28);
      const data::ImageSet back = data::ReadImages(dir.string(), 1);
      ASSERT_EQ(back.size(), 1u);
      for (size_t p = 0; p < r.quantized.size(); ++p) ASSERT_EQ(back.pixels[p], r.quantized[p]);
    }
    ++checked;
  }
  EXPECT_EQ(checked, 18);
  fs::remove_all(dir);
}

// A back end that counts every image the model behind it scores (what a metered API or a
// stateful defense sees), whatever the caller says the images are for.
class CountingBackend : public oracle::ScoreBackend {
 public:
  CountingBackend(std::unique_ptr<oracle::ScoreBackend> inner, long* count)
      : inner_(std::move(inner)), count_(count) {}
  Eigen::MatrixXd Scores(const float* images, int n, int c, int h, int w,
                         const oracle::QueryContext* context) const override {
    Eigen::MatrixXd out = inner_->Scores(images, n, c, h, w, context);
    *count_ += n;
    return out;
  }
  std::string name() const override { return inner_->name(); }

 private:
  std::unique_ptr<oracle::ScoreBackend> inner_;
  long* count_;
};

// Honest accounting: every image the model scores is an attack query
// (queries_used) or a setup query listed in the records (setup_queries, quantized_queries);
// with --no-setup-queries the model scores the attacks' queries and nothing else.
TEST(ExperimentRunner, EveryScoredImageIsACountedOrListedQuery) {
  for (const bool setup : {true, false}) {
    SCOPED_TRACE(setup ? "with setup queries" : "without setup queries");
    long scored = 0;
    oracle::ClassifierOptions copt;
    copt.channels = 1;
    copt.height = copt.width = 28;
    copt.threads = 1;
    copt.output = oracle::OutputKind::kLogits;
    copt.probe = setup;  // without the probe the first answer gives the class count
    auto model = oracle::Classifier::FromBackend(
        std::make_unique<CountingBackend>(
            oracle::MakeTorchScriptBackend(DefaultModelPath("mnist"), 1), &scored),
        copt);
    ExperimentSpec s;
    s.attacks = {"square"};
    s.num_images = 3;
    s.untargeted = true;
    s.budget = 60;
    s.defense = "bits:depth=5";
    s.clean_images = 25;
    s.output = "logits";
    s.setup_queries = setup;
    const Experiment ex(s, LoadImages("mnist", "", "auto"), std::move(model), "mnist");
    const nlohmann::json& setup_q = ex.setup_queries();
    EXPECT_EQ(setup_q["shape_probe"], setup ? 2 : 0);
    // The first 3 MNIST test images are classified correctly: exactly 3 selection queries
    // (not a whole block of 200), and the clean accuracy with and without the defense.
    EXPECT_EQ(setup_q["selection"], setup ? 3 : 0);
    EXPECT_EQ(setup_q["clean_accuracy"], setup ? 50 : 0);
    long listed = setup_q["shape_probe"].get<long>() + setup_q["selection"].get<long>() +
                  setup_q["clean_accuracy"].get<long>();
    EXPECT_EQ(scored, listed);  // nothing else before the attacks
    ASSERT_EQ(ex.instances().size(), 3u);
    for (size_t i = 0; i < ex.instances().size(); ++i) {
      const JobResult r = ex.Run(i, 0, nullptr);
      EXPECT_EQ(r.record["setup_queries"], setup_q);
      EXPECT_LE(r.record["queries_used"].get<long>(), 60);
      EXPECT_EQ(r.record["quantized_queries"], setup ? 1 : 0);
      listed += r.record["queries_used"].get<long>() + r.record["quantized_queries"].get<long>();
      if (!setup) {
        // 8-bit queries: the reported image was itself queried, so its answer is known.
        ASSERT_TRUE(r.record["quantized_success"].is_boolean()) << r.record.dump();
        EXPECT_EQ(r.record["quantized_success"], r.record["success"]);
      }
    }
    EXPECT_EQ(scored, listed);
  }
}

TEST(ExperimentRunner, NoSetupQueriesNeedsLabelsAndAnOutputKind) {
  ExperimentSpec s = Good();
  s.setup_queries = false;
  try {
    Validate(s);
    ADD_FAILURE() << "accepted --no-setup-queries with --output auto";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("--output"), std::string::npos) << e.what();
  }
  data::ImageSet images = LoadImages("mnist", "", "auto");
  images.labels[0] = -1;  // an unlabelled image would need the model's prediction
  s.output = "logits";
  s.indices = {0};
  try {
    Experiment ex(s, images,
                  LoadModelFor(images, DefaultModelPath("mnist"), "logits", 1, "", {}, false),
                  "mine");
    ADD_FAILURE() << "accepted an unlabelled image without setup queries";
  } catch (const data::DataError& e) {
    EXPECT_NE(std::string(e.what()).find("no label"), std::string::npos) << e.what();
  }
}

TEST(Evaluate, WorstCaseTakesTheFirstBreakingAttackInOrder) {
  auto rec = [](int image, const char* attack, bool success, nlohmann::json q8, long used) {
    return nlohmann::json{{"image_index", image},
                          {"attack", attack},
                          {"success", success},
                          {"quantized_success", q8},
                          {"queries_used", used}};
  };
  const std::vector<nlohmann::json> records = {
      rec(0, "a", false, false, 100), rec(0, "b", true, true, 30),     // broken by b
      rec(1, "a", true, false, 100),  rec(1, "b", false, false, 100),  // float-only success
      rec(2, "a", true, nullptr, 5),                                   // no 8-bit check
      rec(3, "b", true, true, 7),     rec(3, "a", true, true, 9)};     // both: a comes first
  const auto v = WorstCaseVerdicts({0, 1, 2, 3, 4}, {4}, records, {"a", "b"});
  ASSERT_EQ(v.size(), 5u);
  EXPECT_EQ(v[0].broken_by, "b");
  EXPECT_EQ(v[0].queries, 130);
  EXPECT_TRUE(v[1].robust);  // a success whose saved 8-bit image is not adversarial
  EXPECT_EQ(v[1].attacks_run, 2);
  EXPECT_EQ(v[2].broken_by, "a");
  EXPECT_EQ(v[3].broken_by, "a");
  EXPECT_EQ(v[3].queries, 9);
  EXPECT_FALSE(v[4].clean_correct);
  EXPECT_FALSE(v[4].robust);
  // Over the subset {b} only, image 3 falls to b; image 2 was never attacked by b, so it is
  // not evaluated -- never robust.
  const auto only_b = WorstCaseVerdicts({0, 1, 2, 3, 4}, {4}, records, {"b"});
  EXPECT_EQ(only_b[3].broken_by, "b");
  EXPECT_FALSE(only_b[2].robust);
  EXPECT_FALSE(only_b[2].evaluated);
  EXPECT_EQ(only_b[2].missing, "b");
  const nlohmann::json s = SummarizeVerdicts(v, {"a", "b"});
  EXPECT_EQ(s["robust"], 1);
  EXPECT_DOUBLE_EQ(s["clean_accuracy"].get<double>(), 0.8);
  EXPECT_EQ(s["broken_by"]["a"], 2);
  EXPECT_EQ(s["broken_by"]["b"], 1);
  // Wilson 95 % interval of 1/5: (0.0362, 0.6245) (closed form).
  const auto [lo, hi] = WilsonInterval(1, 5);
  EXPECT_NEAR(lo, 0.03622, 1e-4);
  EXPECT_NEAR(hi, 0.62449, 1e-4);
  EXPECT_EQ(WilsonInterval(0, 0), std::make_pair(0.0, 0.0));
}

TEST(Evaluate, AMissingOrPartialRecordIsNeverRobust) {
  const std::vector<nlohmann::json> records = {
      {{"image_index", 0}, {"attack", "a"}, {"success", false}, {"queries_used", 10}},
      {{"image_index", 0}, {"attack", "b"}, {"success", false}, {"queries_used", 10}},
      {{"image_index", 1}, {"attack", "a"}, {"success", false}, {"queries_used", 10}},
      // image 1: b missing; image 2: a partial (no success field), b present
      {{"image_index", 2}, {"attack", "a"}, {"queries_used", 3}},
      {{"image_index", 2}, {"attack", "b"}, {"success", false}, {"queries_used", 10}},
      // image 3: a breaks it, b never needed
      {{"image_index", 3}, {"attack", "a"}, {"success", true}, {"queries_used", 2}}};
  const auto v = WorstCaseVerdicts({0, 1, 2, 3}, {}, records, {"a", "b"});
  EXPECT_TRUE(v[0].robust);
  EXPECT_TRUE(v[0].evaluated);
  EXPECT_FALSE(v[1].robust);
  EXPECT_FALSE(v[1].evaluated);
  EXPECT_EQ(v[1].missing, "b");
  EXPECT_FALSE(v[2].robust);
  EXPECT_EQ(v[2].missing, "a");
  EXPECT_TRUE(v[3].evaluated);
  EXPECT_EQ(v[3].broken_by, "a");
  const nlohmann::json s = SummarizeVerdicts(v, {"a", "b"});
  EXPECT_EQ(s["robust"], 1);
  EXPECT_EQ(s["not_evaluated"], 2);
  EXPECT_DOUBLE_EQ(s["robust_accuracy"].get<double>(), 0.25);
}

TEST(Evaluate, ReferenceAndCombinedWorstCase) {
  const std::vector<nlohmann::json> records = {
      {{"image_index", 0}, {"attack", "a"}, {"success", false}},
      {{"image_index", 1}, {"attack", "a"}, {"success", false}},
      {{"image_index", 2}, {"attack", "a"}, {"success", true}}};
  auto v = WorstCaseVerdicts({0, 1, 2, 3}, {3}, records, {"a"});
  AttachReference(
      &v, {{{"image_index", 0}, {"reference_robust", true}, {"reference_broken_by", nullptr}},
           {{"image_index", 1}, {"reference_robust", false}, {"reference_broken_by", "apgd-t"}},
           {{"image_index", 2}, {"reference_robust", true}, {"reference_broken_by", nullptr}}});
  EXPECT_EQ(v[1].reference_broken_by, "apgd-t");
  EXPECT_FALSE(*v[3].reference_robust);  // misclassified
  const nlohmann::json s = SummarizeVerdicts(v, {"a"});
  EXPECT_DOUBLE_EQ(s["robust_accuracy"].get<double>(), 0.5);            // images 0, 1
  EXPECT_DOUBLE_EQ(s["reference_robust_accuracy"].get<double>(), 0.5);  // images 0, 2
  EXPECT_DOUBLE_EQ(s["combined_robust_accuracy"].get<double>(), 0.25);  // image 0 only
  EXPECT_EQ(s["robust_blackbox_only"], 1);                              // image 1
  EXPECT_EQ(s["robust_reference_only"], 1);                             // image 2
}

TEST(Evaluate, EveryMemberIsWrappedByTheAdaptiveAttackNeverTwice) {
  const auto aaa = [](const std::string& b) { return "aaa-adaptive:interval=4,reverse=1/" + b; };
  EXPECT_EQ(
      AdaptiveEnsemble({"square", "aaa-adaptive:interval=4,reverse=1/parsimonious", "bos2"}, aaa),
      (std::vector<std::string>{"aaa-adaptive:interval=4,reverse=1/square",
                                "aaa-adaptive:interval=4,reverse=1/parsimonious",
                                "aaa-adaptive:interval=4,reverse=1/bos2"}));
  EXPECT_EQ(AdaptiveWrapperName("square", aaa), "aaa-adaptive");
  // EOT around a member that is already EOT inside another wrapper: left alone.
  const auto eot = [](const std::string& b) { return "eot:k=10/" + b; };
  EXPECT_EQ(AdaptiveEnsemble({"square", "eot:k=4/confirm/square"}, eot),
            (std::vector<std::string>{"eot:k=10/square", "eot:k=4/confirm/square"}));
  // A wrapper only counts as a spec component: "eot" inside another name is not one.
  EXPECT_EQ(AdaptiveEnsemble({"square:p_init=0.3"}, eot),
            (std::vector<std::string>{"eot:k=10/square:p_init=0.3"}));
  // A deterministic defense (or none): the plain attacks already see it.
  const auto same = [](const std::string& b) { return b; };
  EXPECT_EQ(AdaptiveEnsemble({"square", "bos2"}, same),
            (std::vector<std::string>{"square", "bos2"}));
  EXPECT_EQ(AdaptiveWrapperName("square", same), "");
}

TEST(Evaluate, BudgetSharesNeverExceedThePerImageBudget) {
  const std::vector<double> shares = {0.5, 0.25, 0.25};
  EXPECT_EQ(EnsembleShare(10000, 0, shares, 0), 5000);
  EXPECT_EQ(EnsembleShare(10000, 5000, shares, 1), 2500);
  EXPECT_EQ(EnsembleShare(10000, 7500, shares, 2), 2500);  // the last takes what is left
  // An attack that stopped early passes its unused queries on.
  EXPECT_EQ(EnsembleShare(10000, 1000, shares, 1), 4500);
  EXPECT_EQ(EnsembleShare(10000, 5500, shares, 2), 4500);
  // Exhaustive check: whatever each attack uses of its share, the total stays <= budget.
  for (long budget : {3L, 10L, 997L})
    for (long u0 = 0; u0 <= budget; u0 += std::max<long>(1, budget / 7))
      for (long u1 = 0; u1 <= budget; u1 += std::max<long>(1, budget / 7)) {
        long used = 0, total = 0;
        const long uses[] = {u0, u1, budget};
        for (size_t j = 0; j < 3; ++j) {
          const long b = EnsembleShare(budget, used, shares, j);
          const long spent = std::min(b, uses[j]);
          used += spent;
          total += spent;
        }
        EXPECT_LE(total, budget);
      }
}

}  // namespace
}  // namespace advbo::experiment
