// The robust-accuracy evaluation as a library (experiment/evaluation.h): the verdicts are the
// worst case of the per-attack records (recomputed here independently), the budget is per
// image, runs resume and shards merge to the same verdicts, a lost record is "not evaluated",
// the ensemble and radius follow the threat model, every member is wrapped behind a defense,
// randomised defenses are verified by majority, and the white-box reference sits beside the
// ensemble where it applies. The command's own part (parsing, printing, exit statuses) is
// tests/cli/bench_cli_test.cc's.
#include "experiment/evaluation.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/cli_test_util.h"

namespace advbo::experiment {
namespace {
namespace fs = std::filesystem;
using advbo::testing::ReadJsonl;
using advbo::testing::Slurp;

class Evaluation : public advbo::testing::TempDirTest {};

// An evaluation of the first n images of a shipped dataset at one thread, into `out`.
EvaluationOptions Options(const std::string& dataset, int n, long budget, const fs::path& out) {
  EvaluationOptions o;
  o.spec.dataset = dataset;
  o.spec.num_images = n;
  o.spec.budget = budget;
  o.spec.threads = 1;
  o.out_dir = out.string();
  return o;
}

long Lines(const fs::path& p) { return static_cast<long>(ReadJsonl(p).size()); }

// The first attack in `order` whose record breaks the image (success and its saved 8-bit
// image adversarial), checking the per-image budget on the way; "" when none does. Sets
// *runs to the records read and *queries to their model queries.
std::string FirstBreak(const std::vector<nlohmann::json>& mine,
                       const std::vector<std::string>& order, long budget, size_t* runs,
                       long* queries) {
  *runs = 0;
  *queries = 0;
  for (const auto& name : order) {
    const nlohmann::json* r = nullptr;
    for (const auto& m : mine)
      if (m["attack"] == name) r = &m;
    EXPECT_NE(r, nullptr) << "missing " << name;
    if (!r) return "";
    ++*runs;
    EXPECT_TRUE((*r)["target"].is_null());  // untargeted
    EXPECT_EQ((*r)["evaluation"]["budget"].get<long>(), budget);
    EXPECT_EQ((*r)["evaluation"]["budget_unit"], "model queries per image");
    EXPECT_EQ((*r)["budget_unit"], "model queries per instance");  // its attack's share
    *queries += (*r)["queries_used"].get<long>();
    EXPECT_LE(*queries, budget) << "the budget is per image";
    if ((*r)["success"].get<bool>() && (*r)["quantized_success"].get<bool>()) return name;
  }
  return "";
}

TEST_F(Evaluation, WorstCaseEqualsThePerAttackRecordsAndResumes) {
  const std::vector<std::string> order = {"random", "parsimonious", "square"};
  EvaluationOptions o = Options("cifar10", 10, 150, dir_ / "ev");
  o.spec.eps = 0.03;
  o.reference = "none";
  o.ensemble = "random,parsimonious,square";
  const EvaluationResult first = Evaluate(o);
  EXPECT_EQ(first.status, 0);
  const auto records = ReadJsonl(dir_ / "ev" / "records.jsonl");
  const auto images = ReadJsonl(dir_ / "ev" / "images.jsonl");
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
    size_t runs = 0;
    long queries = 0;
    const std::string by = FirstBreak(mine, order, 150, &runs, &queries);
    EXPECT_EQ(mine.size(), runs) << "image " << i << ": no attack after the breaking one";
    EXPECT_EQ(v["robust"].get<bool>(), by.empty()) << i;
    EXPECT_EQ(v["broken_by"], by.empty() ? nlohmann::json(nullptr) : nlohmann::json(by));
    EXPECT_EQ(v["queries"].get<long>(), queries) << i;
    (by.empty() ? robust : broken)++;
  }
  // The run exercises robust, broken and misclassified images alike.
  EXPECT_GT(robust, 0);
  EXPECT_GT(broken, 0);
  EXPECT_GT(wrong, 0);
  EXPECT_EQ(first.summary["robust"], robust);
  EXPECT_DOUBLE_EQ(first.summary["robust_accuracy"].get<double>(), robust / 10.0);
  EXPECT_DOUBLE_EQ(first.summary["clean_accuracy"].get<double>(), (10 - wrong) / 10.0);
  EXPECT_EQ(first.summary["budget"], 150);
  EXPECT_EQ(first.table, Slurp(dir_ / "ev" / "table.txt"));
  // A re-run resumes: no new record, the same verdicts.
  const std::string verdicts = Slurp(dir_ / "ev" / "images.jsonl");
  Evaluate(o);
  EXPECT_EQ(Lines(dir_ / "ev" / "records.jsonl"), static_cast<long>(records.size()));
  EXPECT_EQ(Slurp(dir_ / "ev" / "images.jsonl"), verdicts);
  // A shard started on the finished unsharded folder redoes nothing.
  EvaluationOptions shard = o;
  shard.shard_k = 1;
  shard.shard_n = 2;
  Evaluate(shard);
  EXPECT_EQ(Lines(dir_ / "ev" / "records.shard-1-of-2.jsonl"), 0);
  // Two shards, then the unsharded run on their folder: the same verdicts, no new record.
  EvaluationOptions sh = o;
  sh.out_dir = (dir_ / "sh").string();
  std::map<std::string, double> shard_wall;  // each attack's wall seconds, summed over shards
  for (int k = 1; k <= 2; ++k) {
    EvaluationOptions part = sh;
    part.shard_k = k;
    part.shard_n = 2;
    const EvaluationResult r = Evaluate(part);
    for (const auto& [name, t] : r.summary["time_by_attack"].items())
      shard_wall[name] += t["wall_seconds"].get<double>();
  }
  const EvaluationResult combined = Evaluate(sh);
  EXPECT_EQ(Slurp(dir_ / "sh" / "images.jsonl"), verdicts);
  EXPECT_EQ(Lines(dir_ / "sh" / "records.jsonl"), 0);
  // It ran no attack, so each attack's wall time is what its shards took, as a merge gives it.
  ASSERT_FALSE(shard_wall.empty());
  for (const auto& [name, wall] : shard_wall) {
    EXPECT_GT(wall, 0.0) << name;
    EXPECT_DOUBLE_EQ(combined.summary["time_by_attack"][name]["wall_seconds"].get<double>(), wall)
        << name;
  }
  // Shards in separate folders, merged: the same verdicts.
  fs::create_directories(dir_ / "m1");
  fs::create_directories(dir_ / "m2");
  for (const auto& f : fs::directory_iterator(dir_ / "sh")) {
    const std::string name = f.path().filename().string();
    if (name.find("shard-1-of-2") != std::string::npos) fs::copy(f.path(), dir_ / "m1" / name);
    if (name.find("shard-2-of-2") != std::string::npos) fs::copy(f.path(), dir_ / "m2" / name);
  }
  const std::vector<std::string> inputs = {(dir_ / "m1").string(), (dir_ / "m2").string()};
  const EvaluationResult merged = MergeEvaluations(inputs, (dir_ / "merged").string());
  EXPECT_EQ(merged.status, 0);
  EXPECT_EQ(Slurp(dir_ / "merged" / "images.jsonl"), verdicts);
  EXPECT_EQ(merged.record_count, static_cast<long>(records.size()));
  // A record lost from a shard: its image is "not evaluated" -- never robust -- status 3.
  const fs::path shard_records = dir_ / "m2" / "records.shard-2-of-2.jsonl";
  std::vector<std::string> lines;
  {
    std::ifstream in(shard_records);
    for (std::string l; std::getline(in, l);) lines.push_back(l);
  }
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
  const EvaluationResult lost = MergeEvaluations(inputs, (dir_ / "merged2").string());
  EXPECT_EQ(lost.status, 3);
  EXPECT_EQ(lost.summary["not_evaluated"], 1);
  EXPECT_EQ(lost.summary["robust"].get<long>(), robust - 1);
  EXPECT_NE(lost.table.find("NOT EVALUATED"), std::string::npos);
  // Into a folder that is not empty: refused, nothing overwritten.
  EXPECT_THROW(MergeEvaluations(inputs, (dir_ / "merged").string()), std::invalid_argument);
}

TEST_F(Evaluation, PicksTheEnsembleAndRadiusOfTheThreatModel) {
  const struct {
    std::string norm, feedback;
    std::vector<std::string> ensemble;
    double eps;
  } cases[] = {{"linf", "label", {"rays", "bo-hl", "hsja"}, 8.0 / 255},
               {"l2", "scores", {"simba-dct", "square-l2"}, 0.5}};
  int n = 0;
  for (const auto& c : cases) {
    EvaluationOptions o = Options("cifar10", 2, 30, dir_ / ("ev" + std::to_string(n++)));
    o.spec.norm = c.norm;
    o.spec.feedback = c.feedback;
    o.reference = "none";
    const EvaluationResult r = Evaluate(o);
    EXPECT_EQ(r.summary["plain_ensemble"].get<std::vector<std::string>>(), c.ensemble) << c.norm;
    const auto records = ReadJsonl(o.out_dir + "/records.jsonl");
    ASSERT_FALSE(records.empty()) << c.norm;
    for (const auto& rec : records) {
      EXPECT_NEAR(rec["epsilon"].get<double>(), c.eps, 1e-9) << c.norm;
      EXPECT_EQ(rec["feedback"], c.feedback);
      EXPECT_EQ(rec["norm"], c.norm);
      if (c.feedback == "label") EXPECT_TRUE(rec.contains("distance")) << rec.dump();
      EXPECT_LE(rec["queries_used"].get<long>(), 30);
    }
  }
}

TEST_F(Evaluation, ReferenceBesideTheEnsemble) {
  EvaluationOptions o = Options("mnist", 8, 90, dir_ / "ref");
  o.spec.model = std::string(ADVBO_SOURCE_DIR) + "/models/mnist_fgsm_overfit.pt";
  o.spec.eps = 0.4;
  o.apgd.iterations = 20;
  o.apgd.target_classes = 3;
  o.save_images = (dir_ / "png").string();
  const EvaluationResult r = Evaluate(o);
  const nlohmann::json& summary = r.summary;
  ASSERT_TRUE(summary["reference"]["applies"].get<bool>()) << summary.dump();
  EXPECT_TRUE(summary["reference"]["settings"]["grid"].get<bool>());
  const auto refs = ReadJsonl(dir_ / "ref" / "reference.jsonl");
  const auto images = ReadJsonl(dir_ / "ref" / "images.jsonl");
  ASSERT_EQ(images.size(), 8u);
  long ref_robust = 0, combined = 0, broken = 0;
  for (const auto& v : images) {
    if (!v["clean_correct"].get<bool>()) continue;
    const nlohmann::json* x = nullptr;
    for (const auto& y : refs)
      if (y["image_index"] == v["image_index"]) x = &y;
    ASSERT_NE(x, nullptr) << v.dump();
    EXPECT_EQ(v["reference_robust"], (*x)["reference_robust"]);
    if ((*x)["reference_robust"].get<bool>()) {
      ++ref_robust;
      combined += v["robust"].get<bool>();
    } else {
      ++broken;
      // Inside the ball the attacks are held to (linf is a float32 difference: 0.4 rounds up).
      EXPECT_LE((*x)["linf"].get<double>(), 0.4 + 1e-7);
      EXPECT_NE((*x)["adversarial_class"], (*x)["true_class"]);
      EXPECT_LT((*x)["margin"].get<double>(), 0);
      EXPECT_EQ((*x)["gradient_steps"].get<long>() % 20, 0);
    }
  }
  EXPECT_GT(broken, 0);  // the model is trained at 0.3: breakable at 0.4
  EXPECT_DOUBLE_EQ(summary["reference_robust_accuracy"].get<double>(), ref_robust / 8.0);
  EXPECT_DOUBLE_EQ(summary["combined_robust_accuracy"].get<double>(), combined / 8.0);
  EXPECT_LE(summary["combined_robust_accuracy"].get<double>(),
            summary["robust_accuracy"].get<double>());
  // The saved images within the enforced radius (102/255 at 0.4), the curve, each attack's
  // time, one PNG per broken image.
  EXPECT_LE(summary["max_perturbation_linf"].get<double>(),
            summary["epsilon_effective"].get<double>() + 1e-7);
  EXPECT_DOUBLE_EQ(summary["epsilon_effective"].get<double>(), 102 / 255.0);
  EXPECT_TRUE(fs::exists(dir_ / "ref" / "curves.csv"));
  EXPECT_EQ(r.curve.size(), 91u);  // 0..90 queries per image, one point each
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
  for (const char* row : {"white-box reference", "max L_inf", "combined (best known)"})
    EXPECT_NE(r.table.find(row), std::string::npos) << r.table;
  // A re-run resumes: no new reference work, the same verdicts.
  const std::string verdicts = Slurp(dir_ / "ref" / "images.jsonl");
  Evaluate(o);
  EXPECT_EQ(Slurp(dir_ / "ref" / "images.jsonl"), verdicts);
  EXPECT_EQ(Lines(dir_ / "ref" / "reference.jsonl"), static_cast<long>(refs.size()));
  // Behind JPEG there is no gradient: no number, a reason.
  EvaluationOptions jpeg = Options("mnist", 2, 30, dir_ / "ref_jpeg");
  jpeg.spec.defense = "jpeg";
  const EvaluationResult j = Evaluate(jpeg);
  EXPECT_FALSE(j.summary["reference"]["applies"].get<bool>());
  EXPECT_TRUE(j.summary["reference_robust_accuracy"].is_null());
  EXPECT_NE(j.table.find("does not apply"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir_ / "ref_jpeg" / "reference.jsonl"));
}

TEST_F(Evaluation, WrapsEveryMemberBehindADefense) {
  EvaluationOptions o = Options("cifar10", 2, 40, dir_ / "aaa");
  o.spec.defense = "aaa";
  o.ensemble = "square,aaa-adaptive:interval=4,reverse=1/parsimonious";
  const EvaluationResult r = Evaluate(o);
  EXPECT_EQ(r.summary["ensemble"].get<std::vector<std::string>>(),
            (std::vector<std::string>{"aaa-adaptive:interval=4,reverse=1/square",
                                      "aaa-adaptive:interval=4,reverse=1/parsimonious"}));
  EXPECT_TRUE(r.summary["robust_accuracy_plain_ensemble"].is_null());
  EXPECT_TRUE(r.summary["upper_bound"].get<bool>());  // 40 queries: below the default
  EXPECT_NE(r.table.find("UPPER BOUND"), std::string::npos) << r.table;
  for (const auto& rec : ReadJsonl(dir_ / "aaa" / "records.jsonl"))
    EXPECT_EQ(rec["attack"].get<std::string>().rfind("aaa-adaptive:", 0), 0u) << rec["attack"];
}

TEST_F(Evaluation, RunsEveryThreatModelBehindEveryDefense) {
  const struct {
    std::string norm, feedback, defense, ensemble;
    std::string attack;  // the ensemble member as run
  } runs[] = {
      {"l2", "scores", "noise:sigma=0.02", "square-l2", "eot:k=10/square-l2"},
      {"linf", "label", "noise:sigma=0.02", "rays", "eot:k=10/rays"},
      {"linf", "scores", "aaa:reverse=0", "square", "square"},
      {"l2", "scores", "blacklight", "simba-dct", "oars:quantization=50/simba-dct"},
  };
  int k = 0;
  for (const auto& run : runs) {
    EvaluationOptions o = Options("mnist", 1, 30, dir_ / ("tm" + std::to_string(k++)));
    o.spec.norm = run.norm;
    o.spec.feedback = run.feedback;
    o.spec.defense = run.defense;
    o.ensemble = run.ensemble;
    o.reference = "none";
    Evaluate(o);
    const auto records = ReadJsonl(o.out_dir + "/records.jsonl");
    ASSERT_EQ(records.size(), 1u) << run.defense;
    EXPECT_EQ(records[0]["attack"], run.attack) << run.defense;
    // Label feedback: the saved image's scores are the evaluator's, named so.
    const bool label = run.feedback == "label";
    EXPECT_EQ(records[0].contains("evaluator_log_probs"), label) << records[0].dump();
    EXPECT_EQ(records[0].contains("adversarial_log_probs"), !label) << records[0].dump();
  }
  // Refusals name the data's size, the option and the reason, and write nothing.
  const fs::path out = dir_ / "refused";
  EvaluationOptions big = Options("mnist", 100000000, 30, out);
  EvaluationOptions comma = Options("mnist", 1, 30, out);
  comma.ensemble = ",";
  EvaluationOptions window = Options("mnist", 1, 30, out);
  window.spec.defense = "blacklight:window=1000";
  const struct {
    EvaluationOptions options;
    std::string message;
  } refused[] = {
      {big, "-n/--num-images 100000000 exceeds the 10000 images of the shipped mnist test set"},
      {comma, "--ensemble names no attack (',')"},
      {window, "window 1000 is longer than the image's 784"},
  };
  for (const auto& r : refused) {
    try {
      Evaluate(r.options);
      ADD_FAILURE() << "accepted: " << r.message;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(r.message), std::string::npos) << e.what();
    }
    EXPECT_FALSE(fs::exists(out)) << r.message;  // nothing written
  }
}

TEST_F(Evaluation, VerifiesRandomisedDefensesByMajority) {
  EvaluationOptions o = Options("cifar10", 3, 60, dir_ / "rnd");
  o.spec.defense = "noise:sigma=0.05";
  o.spec.verify_draws = 5;
  o.ensemble = "square";
  Evaluate(o);
  const auto records = ReadJsonl(dir_ / "rnd" / "records.jsonl");
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
  EvaluationOptions jpeg = Options("cifar10", 2, 30, dir_ / "det");
  jpeg.spec.defense = "jpeg";
  jpeg.ensemble = "random";
  jpeg.reference = "none";
  Evaluate(jpeg);
  for (const auto& r : ReadJsonl(dir_ / "det" / "records.jsonl")) {
    EXPECT_EQ(r["quantized_queries"], 1);
    EXPECT_FALSE(r.contains("quantized_draws"));
  }
}

}  // namespace
}  // namespace advbo::experiment
