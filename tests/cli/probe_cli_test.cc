// The findings of a reliability probe of evaluate's shards, merge and resume, the game's
// defender options and the messages of a few options, each as a test that failed before its
// fix (docs/testing.md lists them).
#include "cli/cli_test_util.h"

namespace advbo::testing {
namespace {
namespace fs = std::filesystem;

class ProbeCli : public TempDirTest {
 protected:
  // `advbo evaluate` of the first `n` MNIST images of the adversarially trained model with
  // random and Square at 40 queries per image, no reference, into `out`.
  int Evaluate(const std::string& extra, const fs::path& out, int n = 4) {
    return RunAdvbo("evaluate --model " + kRoot + "/models/mnist_fgsm_overfit.pt -n " +
                        std::to_string(n) +
                        " --ensemble random,square --budget 40 --reference none --threads 1 -q " +
                        extra + " -o " + out.string(),
                    dir_ / "log");
  }
  int Merge(const std::string& inputs, const fs::path& out) {
    return RunAdvbo("evaluate merge " + inputs + " -o " + out.string(), dir_ / "log");
  }
  std::string Log() { return Slurp(dir_ / "log"); }
  nlohmann::json Summary(const fs::path& d) {
    return nlohmann::json::parse(Slurp(d / "summary.json"));
  }
  // The two shards of the 4-image evaluation, in s1 and s2.
  void TwoShards(const std::string& extra = "") {
    ASSERT_EQ(Evaluate(extra + " --shard 1/2", dir_ / "s1"), 0) << Log();
    ASSERT_EQ(Evaluate(extra + " --shard 2/2", dir_ / "s2"), 0) << Log();
  }
  std::string S12() { return (dir_ / "s1").string() + " " + (dir_ / "s2").string(); }
};

// Finding 1: a shard folder without its images file, shards of another split (--shard 2/3)
// or of another image list (-n 6) were merged silently with images dropped or mixed.
TEST_F(ProbeCli, MergeRefusesIncompleteOrForeignShardsAndCountsMissingImages) {
  TwoShards();
  ASSERT_EQ(Merge(S12(), dir_ / "ok"), 0) << Log();
  EXPECT_EQ(Summary(dir_ / "ok")["images"], 4);
  // s2 without its images file: refused, naming it.
  fs::copy(dir_ / "s2", dir_ / "s2x");
  fs::remove(dir_ / "s2x" / "images.shard-2-of-2.jsonl");
  EXPECT_EQ(Merge((dir_ / "s1").string() + " " + (dir_ / "s2x").string(), dir_ / "m1"), 1);
  EXPECT_NE(Log().find("images.shard-2-of-2.jsonl is missing"), std::string::npos) << Log();
  EXPECT_FALSE(fs::exists(dir_ / "m1"));
  // Shard 1/2 with shard 2/3 of the same evaluation: image 3 is in neither -> not evaluated.
  ASSERT_EQ(Evaluate("--shard 2/3", dir_ / "t2"), 0) << Log();
  EXPECT_EQ(Merge((dir_ / "s1").string() + " " + (dir_ / "t2").string(), dir_ / "m2"), 3) << Log();
  const auto m2 = Summary(dir_ / "m2");
  EXPECT_EQ(m2["images"], 4);
  EXPECT_GE(m2["not_evaluated"].get<long>(), 1);
  // A shard of another image list (-n 6): refused.
  ASSERT_EQ(Evaluate("--shard 2/2", dir_ / "n6", 6), 0) << Log();
  EXPECT_EQ(Merge((dir_ / "s1").string() + " " + (dir_ / "n6").string(), dir_ / "m3"), 1);
  EXPECT_NE(Log().find("evaluation_images"), std::string::npos) << Log();
  EXPECT_FALSE(fs::exists(dir_ / "m3"));
}

// Finding 2: two folders whose records of one attack run disagree made the verdict depend on
// the order of the arguments. Refused either way.
TEST_F(ProbeCli, MergeRefusesConflictingRecords) {
  TwoShards();
  fs::copy(dir_ / "s1", dir_ / "s1x");
  const fs::path f = dir_ / "s1x" / "records.shard-1-of-2.jsonl";
  auto records = ReadJsonl(f);
  ASSERT_FALSE(records.empty());
  records[0]["success"] = !records[0]["success"].get<bool>();
  {
    std::ofstream out(f);
    for (const auto& r : records) out << r.dump() << "\n";
  }
  for (const std::string order : {(dir_ / "s1").string() + " " + (dir_ / "s1x").string(),
                                  (dir_ / "s1x").string() + " " + (dir_ / "s1").string()}) {
    EXPECT_EQ(Merge(order + " " + (dir_ / "s2").string(), dir_ / "m"), 1) << order;
    EXPECT_NE(Log().find("disagree on image"), std::string::npos) << Log();
    EXPECT_FALSE(fs::exists(dir_ / "m"));
  }
}

// Finding 3: settings that change results (the budget split, bad-query counting) were not
// checked on resume or merge: the summary claimed a split the records never ran.
TEST_F(ProbeCli, ResumeAndMergeCheckEverySettingThatChangesResults) {
  ASSERT_EQ(Evaluate("", dir_ / "ev"), 0) << Log();
  EXPECT_EQ(Evaluate("--split 1,3", dir_ / "ev"), 1);
  EXPECT_NE(Log().find("budget_split"), std::string::npos) << Log();
  EXPECT_EQ(Evaluate("--no-bad-queries", dir_ / "ev"), 1);
  EXPECT_NE(Log().find("bad_queries"), std::string::npos) << Log();
  ASSERT_EQ(Evaluate("--shard 1/2", dir_ / "a1"), 0) << Log();
  for (const std::string other : {"--split 1,3", "--no-bad-queries"}) {
    fs::remove_all(dir_ / "a2");
    ASSERT_EQ(Evaluate(other + " --shard 2/2", dir_ / "a2"), 0) << Log();
    EXPECT_EQ(Merge((dir_ / "a1").string() + " " + (dir_ / "a2").string(), dir_ / "m"), 1) << other;
    EXPECT_NE(Log().find("only shards of one evaluation merge"), std::string::npos) << Log();
    EXPECT_FALSE(fs::exists(dir_ / "m"));
  }
}

// Finding 4: --split 1e308,1e308 overflowed the sum of weights: shares 0 %, random got 1
// query of 40. Finding 10 (part): --split 1e-320,1 called a positive number "not a number".
TEST_F(ProbeCli, SplitWeightsNearTheLimitsOfDoubles) {
  ASSERT_EQ(Evaluate("--split 1e308,1e308", dir_ / "ev"), 0) << Log();
  const auto s = Summary(dir_ / "ev");
  EXPECT_DOUBLE_EQ(s["budget_split"]["random"].get<double>(), 0.5);
  for (const auto& r : ReadJsonl(dir_ / "ev" / "records.jsonl"))
    if (r["attack"] == "random") EXPECT_EQ(r["budget"], 20);
  EXPECT_EQ(Evaluate("--split 1e-320,1", dir_ / "x"), 1);
  EXPECT_NE(Log().find("outside the range of doubles"), std::string::npos) << Log();
  EXPECT_EQ(Log().find("not a number"), std::string::npos) << Log();
}

// Finding 5: merging into a folder that holds another evaluation mixed the two.
TEST_F(ProbeCli, MergeRefusesAFolderThatIsNotEmpty) {
  TwoShards();
  ASSERT_EQ(Evaluate("", dir_ / "other"), 0) << Log();
  const std::string before = Slurp(dir_ / "other" / "summary.json");
  EXPECT_EQ(Merge(S12(), dir_ / "other"), 1);
  EXPECT_NE(Log().find("not empty"), std::string::npos) << Log();
  EXPECT_EQ(Slurp(dir_ / "other" / "summary.json"), before);
}

// Finding 8 (and the small one on merged summaries): a merged summary.json keeps every field
// of an unmerged one, threat_model among them.
TEST_F(ProbeCli, AMergedSummaryHasEveryFieldOfAnUnmergedOne) {
  TwoShards();
  ASSERT_EQ(Merge(S12(), dir_ / "m"), 0) << Log();
  const auto shard = nlohmann::json::parse(Slurp(dir_ / "s1" / "summary.shard-1-of-2.json"));
  const auto merged = Summary(dir_ / "m");
  for (const auto& [k, v] : shard.items()) EXPECT_TRUE(merged.contains(k)) << k;
  EXPECT_EQ(merged["threat_model"], shard["threat_model"]);
  EXPECT_EQ(merged["shard"], "merged");
  EXPECT_EQ(merged["merged_shards"], nlohmann::json({"1/2", "2/2"}));
  // The time lines name wall and summed lane time.
  EXPECT_NE(Slurp(dir_ / "m" / "table.txt").find("s wall ("), std::string::npos);
  EXPECT_TRUE(merged["time_by_attack"]["square"].contains("lane_seconds"));
}

// Finding 7: --reference-targets 50 on a 10-class model claimed 50 APGD-T targets; 9 ran.
TEST_F(ProbeCli, ReferenceTargetsAreTheOnesThatRan) {
  ASSERT_EQ(RunAdvbo("evaluate --model " + kRoot +
                         "/models/mnist_fgsm_overfit.pt -n 2 --ensemble random --budget 10 "
                         "--reference-steps 2 --reference-targets 50 --threads 1 -q -o " +
                         (dir_ / "ev").string(),
                     dir_ / "log"),
            0)
      << Log();
  EXPECT_EQ(Summary(dir_ / "ev")["reference"]["settings"]["target_classes"], 9);
  EXPECT_NE(Log().find("--reference-targets 50: the model has 10 classes"), std::string::npos)
      << Log();
}

// Finding 6: game defender options that no defender reads were taken silently (summary.json
// said defender_vertices: true for a level-0 defender). Finding 10 (part): the omniscient
// candidates' message offered 0, which is refused too.
TEST_F(ProbeCli, GameDefenderOptionsNoDefenderReadsAreRefused) {
  const std::string base =
      "game --game mnist --attacker gpucb --defender r2b2:0 --rounds 3 "
      "--games 1 --seed 1 -q -o " +
      (dir_ / "g").string() + " ";
  for (const std::string opt :
       {"--defender-vertices", "--defender-candidates 50", "--defender-kernel additive",
        "--defender-beta constant:0.1", "--omniscient-candidates 2000"}) {
    EXPECT_EQ(RunAdvbo(base + opt, dir_ / "log"), 1) << opt;
    const std::string name = opt.substr(0, opt.find(' '));
    EXPECT_NE(Log().find(name + " changes nothing here"), std::string::npos) << Log();
    EXPECT_FALSE(fs::exists(dir_ / "g")) << opt;
  }
  EXPECT_EQ(RunAdvbo("game --game mnist --attacker gpucb --defender omniscient "
                     "--omniscient-candidates 5 --rounds 3 -q -o " +
                         (dir_ / "g").string(),
                     dir_ / "log"),
            1);
  EXPECT_NE(Log().find("--omniscient-candidates must be in"), std::string::npos) << Log();
  EXPECT_EQ(Log().find("0 ="), std::string::npos) << Log();
}

// Finding 10 (part): an EOT member whose share of the budget is below its k was refused as
// "eot: k = 10 ... [1, the budget 6]", naming neither --budget nor --no-adaptive.
TEST_F(ProbeCli, AnEotMemberBelowItsSamplesNamesTheBudgetAndTheWayOut) {
  EXPECT_EQ(RunAdvbo("evaluate --feedback label --defense noise:sigma=0.02 --budget 20 -n 2 "
                     "--reference none -q -o " +
                         (dir_ / "ev").string(),
                     dir_ / "log"),
            1);
  EXPECT_NE(Log().find("--budget 20"), std::string::npos) << Log();
  EXPECT_NE(Log().find("--no-adaptive"), std::string::npos) << Log();
  EXPECT_FALSE(fs::exists(dir_ / "ev"));
}

// The small ones: `advbo bench --save-images` writes each attack's PNGs in a sub-folder of its
// own, an adversarial image only where the saved 8-bit image was verified adversarial.
TEST_F(ProbeCli, BenchSavesEachAttacksImages) {
  const fs::path img = dir_ / "img";
  ASSERT_EQ(RunAdvbo("bench --attacks square,oars:quantization=50/square --indices 0,1 "
                     "--untargeted --eps 0.3 --budget 100 --seed 0 -q --save-images " +
                         img.string() + " -o " + (dir_ / "b").string(),
                     dir_ / "log"),
            0)
      << Log();
  long verified = 0;
  for (const auto& r : ReadJsonl(dir_ / "b" / "records.jsonl")) {
    const fs::path sub = img / (r["attack"] == "square" ? "square" : "oars_quantization=50_square");
    const std::string tag = std::to_string(r["image_index"].get<int>()) + "_tu.png";
    EXPECT_TRUE(fs::exists(sub / ("clean_" + tag))) << sub;
    EXPECT_EQ(fs::exists(sub / ("adversarial_" + tag)), r["quantized_success"].get<bool>()) << sub;
    verified += r["quantized_success"].get<bool>();
  }
  EXPECT_GT(verified, 0);
  EXPECT_NE(Log().find("saved images: " + std::to_string(verified)), std::string::npos) << Log();
  EXPECT_EQ(RunAdvbo("bench --attacks square --indices 0 --untargeted --budget 5 -q "
                     "--save-images " +
                         (dir_ / "log").string() + " -o " + (dir_ / "c").string(),
                     dir_ / "log2"),
            1);
  EXPECT_NE(Slurp(dir_ / "log2").find("is a file, not a folder"), std::string::npos);
}

}  // namespace
}  // namespace advbo::testing
