// End-to-end: `advbo game` (rounds, summary, curves, bad input) and `advbo attack --defense`.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli_test_util.h"

namespace {

namespace fs = std::filesystem;
using advbo::testing::RunAdvbo;
using advbo::testing::Slurp;

class GameCli : public advbo::testing::TempDirTest {};

std::vector<nlohmann::json> Lines(const fs::path& p) {
  std::vector<nlohmann::json> v;
  std::ifstream in(p);
  for (std::string l; std::getline(in, l);) v.push_back(nlohmann::json::parse(l));
  return v;
}

TEST_F(GameCli, SyntheticGameWritesOneLinePerRoundAndASummary) {
  const fs::path out = dir_ / "g";
  ASSERT_EQ(RunAdvbo("game --type constant --matchups 0v0,1v0,2v1 --grid 20 --rounds 12 --games 2 "
                     "--inits 2 --init-rounds 2 --seed 3 -q --out-dir " +
                         out.string(),
                     dir_ / "log"),
            0)
      << Slurp(dir_ / "log");
  const auto rounds = Lines(out / "rounds.jsonl");
  ASSERT_EQ(rounds.size(), 3u * 2 * 2 * (12 + 2));
  for (const auto& r : rounds) {
    // Constant-sum: payoffs sum to 1; regret = max f - f; actions on the grid in [0, 1].
    EXPECT_NEAR(r["payoffs"][0].get<double>() + r["payoffs"][1].get<double>(), 1.0, 1e-12);
    EXPECT_GE(r["regret"][0].get<double>(), 0.0);
    for (int m = 0; m < 2; ++m) {
      const double a = r["actions"][m][0].get<double>();
      EXPECT_NEAR(a * 19, std::round(a * 19), 1e-9);
    }
    EXPECT_EQ(r["seed"].get<int>(), 3);
  }
  const auto summary = nlohmann::json::parse(Slurp(out / "summary.json"));
  ASSERT_EQ(summary["results"].size(), 3u);
  EXPECT_EQ(summary["results"][2]["matchup"], "2v1");
  EXPECT_EQ(summary["results"][2]["agents"][0], "r2b2:2(gpmw)");
  // The summary's mean regret equals the mean over the played rounds in rounds.jsonl.
  double sum = 0;
  int n = 0;
  for (const auto& r : rounds)
    if (r["matchup"] == "1v0" && !r["init_round"].get<bool>()) {
      sum += r["regret"][0].get<double>();
      ++n;
    }
  EXPECT_NEAR(summary["results"][1]["mean_regret"][0].get<double>(), sum / n, 1e-9);
  EXPECT_TRUE(fs::exists(out / "curves.png"));
  EXPECT_NE(Slurp(out / "curves.csv").find("round,0v0_agent1"), std::string::npos);
  // Same seed, same rounds (apart from timings).
  const fs::path again = dir_ / "g2";
  ASSERT_EQ(RunAdvbo("game --type constant --matchups 0v0,1v0,2v1 --grid 20 --rounds 12 --games 2 "
                     "--inits 2 --init-rounds 2 --seed 3 -q --out-dir " +
                         again.string(),
                     dir_ / "log2"),
            0);
  auto r2 = Lines(again / "rounds.jsonl");
  for (size_t i = 0; i < rounds.size(); ++i) {
    auto a = rounds[i], b = r2[i];
    a.erase("seconds");
    b.erase("seconds");
    ASSERT_EQ(a, b) << i;
  }
}

TEST_F(GameCli, AdversarialGameOnMnistKeepsBothClipsAndConstantSum) {
  const fs::path out = dir_ / "adv";
  ASSERT_EQ(RunAdvbo("game --game mnist --matchups 1v0,0v1 --rounds 6 --init-rounds 2 --samples 50 "
                     "--candidates 40 --indices 3 -q --out-dir " +
                         out.string(),
                     dir_ / "log"),
            0)
      << Slurp(dir_ / "log");
  const auto rounds = Lines(out / "rounds.jsonl");
  ASSERT_EQ(rounds.size(), 2u * (6 + 2));
  for (const auto& r : rounds) {
    EXPECT_NEAR(r["payoffs"][0].get<double>() + r["payoffs"][1].get<double>(), 1.0, 1e-12);
    EXPECT_LE(r["linf_attacker"].get<double>(), 0.2 + 1e-6);
    EXPECT_LE(r["linf_defender"].get<double>(), 0.2 + 1e-6);
    EXPECT_EQ(r["success"].get<bool>(),
              r["attack_score"].get<double>() > r["true_prob"].get<double>());
    EXPECT_EQ(r["image_index"].get<int>(), 3);
    for (int m = 0; m < 2; ++m) {
      ASSERT_EQ(r["actions"][m].size(), 2u);  // the MNIST VAE's 2-D latent
      for (const auto& v : r["actions"][m]) EXPECT_LE(std::abs(v.get<double>()), 2.0);
    }
  }
  const auto summary = nlohmann::json::parse(Slurp(out / "summary.json"));
  EXPECT_EQ(summary["results"][0]["agents"][0], "r2b2:1(random)");
  int successes = 0;
  for (const auto& r : rounds)
    if (r["matchup"] == "1v0" && !r["init_round"].get<bool>())
      successes += r["success"].get<bool>();
  EXPECT_EQ(summary["results"][0]["successful_attacks"].get<double>(), successes);
}

// On MNIST: the Lite defender records what it assumed the GP-UCB attacker would play
// -- the action played, every round, with the default opponent model -- and the omniscient
// defender scores its 60 candidates per round on the model (counted in the summary and each
// round's line), letting through no more successful rounds than the R2-B2 defender on this
// image. Its misuse as the attacker, and an unknown opponent model, fail before any output.
TEST_F(GameCli, AdversarialGameRecordsPredictionsAndPlaysTheOmniscientBound) {
  const std::string common =
      "game --game mnist --rounds 8 --init-rounds 2 --candidates 20 --indices 3 -q --out-dir ";
  const fs::path lite = dir_ / "lite", omni = dir_ / "omni";
  ASSERT_EQ(
      RunAdvbo(common + lite.string() + " --attacker gpucb --defender r2b2:1-lite", dir_ / "log"),
      0)
      << Slurp(dir_ / "log");
  const auto summary = nlohmann::json::parse(Slurp(lite / "summary.json"));
  const auto& pred = summary["results"][0]["predictions"]["defender"];
  EXPECT_EQ(pred["rounds_predicted"].get<int>(), 8);
  EXPECT_EQ(pred["match_rate"].get<double>(), 1.0);
  EXPECT_TRUE(summary["results"][0]["predictions"]["attacker"]["match_rate"].is_null());
  EXPECT_EQ(summary["opponent_model"], "self");
  for (const auto& r : Lines(lite / "rounds.jsonl"))
    if (!r["init_round"].get<bool>()) EXPECT_EQ(r["predicted_actions"][1], r["actions"][0]);
  ASSERT_EQ(RunAdvbo(common + omni.string() +
                         " --attacker gpucb --defender omniscient --omniscient-candidates 60",
                     dir_ / "log"),
            0)
      << Slurp(dir_ / "log");
  const auto os = nlohmann::json::parse(Slurp(omni / "summary.json"));
  EXPECT_EQ(os["results"][0]["agents"][1], "omniscient");
  EXPECT_EQ(os["results"][0]["omniscient_candidate_queries"].get<int>(), 8 * 60);
  EXPECT_LE(os["results"][0]["successful_attacks"].get<double>(),
            summary["results"][0]["successful_attacks"].get<double>());
  for (const auto& r : Lines(omni / "rounds.jsonl"))
    if (!r["init_round"].get<bool>()) {
      EXPECT_EQ(r["omniscient_evaluations"].get<int>(), 60);
      EXPECT_LE(r["linf_defender"].get<double>(), 0.2 + 1e-6);
    }
  EXPECT_NE(RunAdvbo(common + (dir_ / "x").string() + " --attacker omniscient", dir_ / "log"), 0);
  EXPECT_NE(Slurp(dir_ / "log").find("it can only defend"), std::string::npos);
  EXPECT_NE(RunAdvbo(common + (dir_ / "x").string() +
                         " --attacker gpucb --defender r2b2:1-lite --opponent-model oracle",
                     dir_ / "log"),
            0);
  EXPECT_NE(Slurp(dir_ / "log").find("--opponent-model oracle"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir_ / "x"));
}

TEST_F(GameCli, BadGameInputFailsClearlyAndWritesNothing) {
  const fs::path out = dir_ / "bad";
  EXPECT_NE(RunAdvbo("game --matchups 1x0 --out-dir " + out.string(), dir_ / "log"), 0);
  EXPECT_NE(Slurp(dir_ / "log").find("matchup '1x0'"), std::string::npos);
  EXPECT_NE(RunAdvbo("game --attacker r2b2:2-lite --out-dir " + out.string(), dir_ / "log"), 0);
  EXPECT_NE(Slurp(dir_ / "log").find("level-1"), std::string::npos);
  EXPECT_NE(RunAdvbo("game --type zerosum --out-dir " + out.string(), dir_ / "log"), 0);
  EXPECT_NE(Slurp(dir_ / "log").find("unknown game type 'zerosum' (use common, general, constant)"),
            std::string::npos);
  EXPECT_NE(RunAdvbo("game --data x.bin --out-dir " + out.string(), dir_ / "log"), 0);
  EXPECT_NE(Slurp(dir_ / "log").find("--data is for the adversarial games"), std::string::npos);
  EXPECT_FALSE(fs::exists(out));
}

// --data: the game plays image i of the given file, not of the shipped sample. The file holds
// the shipped CIFAR-10 sample's images 9 and 2 in that order, so its image 0 has image 9's
// label, which differs from the label of the shipped sample's image 0.
TEST_F(GameCli, AdversarialGamePlaysOnTheImagesOfData) {
  std::ifstream in(advbo::testing::kRoot + "/data/cifar10/test_batch_first2000.bin",
                   std::ios::binary);
  std::vector<char> all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t rec = 1 + 3 * 32 * 32;
  ASSERT_GE(all.size(), 10 * rec);
  const fs::path data = dir_ / "two.bin";
  {
    std::ofstream f(data, std::ios::binary);
    for (size_t i : {9u, 2u}) f.write(all.data() + i * rec, static_cast<std::streamsize>(rec));
  }
  const int label = static_cast<unsigned char>(all[9 * rec]);
  ASSERT_NE(label, static_cast<unsigned char>(all[0]));
  const fs::path out = dir_ / "data";
  ASSERT_EQ(RunAdvbo("game --game cifar10 --data " + data.string() +
                         " --matchups 0v0 --rounds 2 --init-rounds 1 --candidates 10 --indices 0 "
                         "--defender-strength -q --out-dir " +
                         out.string(),
                     dir_ / "log"),
            0)
      << Slurp(dir_ / "log");
  const auto rounds = Lines(out / "rounds.jsonl");
  ASSERT_EQ(rounds.size(), 3u);
  for (const auto& r : rounds) {
    EXPECT_EQ(r["image_index"].get<int>(), 0);
    EXPECT_EQ(r["true_class"].get<int>(), label);
    // The defender's action: 8 latent coordinates and its purification strength, recorded.
    ASSERT_EQ(r["actions"][1].size(), 9u);
    EXPECT_DOUBLE_EQ(r["strength"].get<double>(), r["actions"][1][8].get<double>());
    EXPECT_GE(r["strength"].get<double>(), 0.0);
    EXPECT_LE(r["strength"].get<double>(), 1.0);
  }
  const auto summary = nlohmann::json::parse(Slurp(out / "summary.json"));
  EXPECT_NE(summary["data"].get<std::string>().find("two.bin"), std::string::npos);
  EXPECT_TRUE(summary["defender_strength"].get<bool>());
}

TEST_F(GameCli, AttackBehindADefenseReportsItAndItsCleanAccuracy) {
  const fs::path rec = dir_ / "r.jsonl";
  ASSERT_EQ(RunAdvbo("attack --attack square --dataset mnist --indices 0 --target 3 --budget 100 "
                     "--defense bits:depth=1+median:size=3 --clean-images 200 -q -o " +
                         rec.string(),
                     dir_ / "log"),
            0)
      << Slurp(dir_ / "log");
  const std::string log = Slurp(dir_ / "log");
  EXPECT_NE(log.find("bits:depth=1+median:size=3 (clean accuracy"), std::string::npos) << log;
  const auto lines = Lines(rec);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0]["defense"], "bits:depth=1+median:size=3");
  EXPECT_LE(lines[0]["queries_used"].get<int>(), 100);
  // A bad spec fails before any work and writes nothing.
  const fs::path rec2 = dir_ / "r2.jsonl";
  EXPECT_NE(RunAdvbo("attack --dataset mnist --indices 0 --defense jpeg:quality=500 -q -o " +
                         rec2.string(),
                     dir_ / "log2"),
            0);
  EXPECT_NE(Slurp(dir_ / "log2").find("quality must be an integer in [1, 100]"), std::string::npos);
  EXPECT_FALSE(fs::exists(rec2));
  EXPECT_FALSE(fs::exists(rec2.string() + ".partial"));
}

TEST_F(GameCli, AnAttackPlaysAQueryLoopDefenderOneRoundPerQuery) {
  const fs::path out = dir_ / "ag";
  ASSERT_EQ(
      RunAdvbo("game --game mnist --attacker parsimonious --defender r2b2:bits+blur --eps 0.1 "
               "--rounds 40 --games 2 -q --out-dir " +
                   out.string(),
               dir_ / "log"),
      0)
      << Slurp(dir_ / "log");
  const auto rounds = Lines(out / "rounds.jsonl");
  const auto summary = nlohmann::json::parse(Slurp(out / "summary.json"));
  ASSERT_EQ(summary["per_run_success"].size(), 2u);
  EXPECT_EQ(summary["defender"], "r2b2:bits+blur");
  for (int run = 0; run < 2; ++run) {
    const int image = summary["images"][run].get<int>();
    long expected = 1, first_success = -1;
    for (const auto& r : rounds) {
      if (r["image_index"].get<int>() != image) continue;
      EXPECT_EQ(r["round"].get<long>(), expected++) << "one line per query, in order";
      ASSERT_EQ(r["defender_action"].size(), 2u);  // bits depth and blur sigma, in [0, 1]^2
      for (const auto& v : r["defender_action"]) {
        EXPECT_GE(v.get<double>(), 0.0);
        EXPECT_LE(v.get<double>(), 1.0);
      }
      EXPECT_EQ(r["success"].get<bool>(), r["objective"].get<double>() > 0);
      if (r["success"].get<bool>() && first_success < 0) first_success = r["round"].get<long>();
    }
    EXPECT_LE(expected - 1, 40) << "never more queries than T";
    const bool ok = summary["per_run_success"][run].get<double>() > 0;
    EXPECT_EQ(ok, first_success > 0);
    if (ok) EXPECT_EQ(summary["per_run_queries"][run].get<long>(), first_success);
  }
  // advbo attack with a latent R2-B2 defender: every query answered by the defender.
  const fs::path rec = dir_ / "lat.jsonl";
  ASSERT_EQ(RunAdvbo("attack --attack square --dataset mnist --indices 1 --untargeted --eps 0.1 "
                     "--budget 30 --defense r2b2:latent --defender-eps 0.05 --clean-images 100 -q "
                     "-o " +
                         rec.string(),
                     dir_ / "log3"),
            0)
      << Slurp(dir_ / "log3");
  const auto lines = Lines(rec);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0]["defense"], "r2b2:latent");
  EXPECT_EQ(lines[0]["defender_rounds"].get<long>(), lines[0]["queries_used"].get<long>());
  EXPECT_EQ(lines[0]["defender_mean_action"].size(), 2u);
  EXPECT_NE(RunAdvbo("attack --dataset mnist --indices 0 --defense r2b2:latent --defender-vae " +
                         (dir_ / "missing.pt").string() + " -q -o " + (dir_ / "x.jsonl").string(),
                     dir_ / "log4"),
            0);
  EXPECT_NE(Slurp(dir_ / "log4").find("missing.pt"), std::string::npos) << Slurp(dir_ / "log4");
  EXPECT_FALSE(fs::exists(dir_ / "x.jsonl"));
}

}  // namespace
