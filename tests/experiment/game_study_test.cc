// The game study's view of the defender's reasoning: predicted attacker actions,
// the opponent model, and the omniscient defender, on synthetic GP games (no model files).
#include "experiment/game_study.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace advbo::experiment {
namespace {

GameStudyOptions Synthetic(const std::string& defender, const std::string& opponent_model) {
  GameStudyOptions o;
  o.game = "synthetic";
  o.type = "constant";
  o.attacker = "gpucb";
  o.defender = defender;
  o.opponent_model = opponent_model;
  o.rounds = 15;
  o.grid = 30;
  o.seed = 3;
  o.ResolveDefaults();
  return o;
}

// Against a GP-UCB attacker a level-1 R2-B2-Lite defender that models it by its own strategy
// (the default, "self") predicts every played action exactly; modelling it as random search
// it predicts one action a round and misses almost all. Every round's line says which.
TEST(GameStudy, TheDefenderPredictsAGpUcbAttackerExactlyOnlyWithTheRightOpponentModel) {
  std::vector<nlohmann::json> lines;
  const GameStudyResult self = RunGameStudy(
      Synthetic("r2b2:1-lite", "self"), [&](const nlohmann::json& l) { lines.push_back(l); },
      nullptr);
  EXPECT_EQ(self.predicted[0][1], 15);
  EXPECT_EQ(self.matched[0][1], 15);
  EXPECT_EQ(self.predicted[0][0], 0);  // the level-0 attacker models nobody
  int checked = 0;
  for (const auto& l : lines) {
    if (l["init_round"].get<bool>()) continue;
    EXPECT_TRUE(l["prediction_matched"][1].get<bool>());
    EXPECT_EQ(l["predicted_actions"][1], l["actions"][0]);
    EXPECT_TRUE(l["predicted_actions"][0].is_null());
    ++checked;
  }
  EXPECT_EQ(checked, 15);
  const GameStudyResult random = RunGameStudy(Synthetic("r2b2:1-lite", "random"), nullptr, nullptr);
  EXPECT_EQ(random.predicted[0][1], 15);
  EXPECT_LE(random.matched[0][1], 3);
}

// With --defender-observes the defender moves second and best-responds to the attacker's
// actual action: every round's assumed action is the played one, even when it models the
// attacker as random search (which without observing misses almost every move, above). A
// defender that is not a level >= 1 R2-B2 agent cannot observe.
TEST(GameStudy, AnObservingDefenderBestRespondsToThePlayedAttackerAction) {
  GameStudyOptions o = Synthetic("r2b2:1-lite", "random");
  o.defender_observes = true;
  std::vector<nlohmann::json> lines;
  const GameStudyResult r = RunGameStudy(
      o, [&](const nlohmann::json& l) { lines.push_back(l); }, nullptr);
  EXPECT_EQ(r.predicted[0][1], 15);
  EXPECT_EQ(r.matched[0][1], 15);
  for (const auto& l : lines)
    if (!l["init_round"].get<bool>()) EXPECT_EQ(l["predicted_actions"][1], l["actions"][0]);
  o.defender = "gpucb";
  EXPECT_THROW(o.Validate(), std::invalid_argument);
  o.defender = "omniscient";
  EXPECT_THROW(o.Validate(), std::invalid_argument);
}

// The mean attacker payoff of the played rounds (lines of one run).
double MeanAttackerPayoff(const GameStudyOptions& o, GameStudyResult* result) {
  double sum = 0;
  int n = 0;
  *result = RunGameStudy(
      o,
      [&](const nlohmann::json& l) {
        if (l["init_round"].get<bool>()) return;
        sum += l["payoffs"][0].get<double>();
        ++n;
      },
      nullptr);
  return sum / n;
}

// On a constant-sum game the omniscient defender plays the row maximum of its payoff table
// each round (games/omniscient_test.cc), so the GP-UCB attacker earns less against it than
// against the learning R2-B2 defender on the same game and seed (by a wide margin here: an
// omniscient defender that picked the worst column instead would give the attacker more).
// The study counts its candidate queries: 30 grid points x 15 rounds.
TEST(GameStudy, AnOmniscientDefenderHoldsTheAttackerBelowALearningDefender) {
  GameStudyResult omni, r2b2;
  const double vs_omni = MeanAttackerPayoff(Synthetic("omniscient", "self"), &omni);
  const double vs_r2b2 = MeanAttackerPayoff(Synthetic("r2b2:1-lite", "self"), &r2b2);
  EXPECT_EQ(omni.names[0][1], "omniscient");
  EXPECT_EQ(omni.candidate_queries[0], 15 * 30);
  EXPECT_EQ(r2b2.candidate_queries[0], 0);
  EXPECT_LT(vs_omni, vs_r2b2);
}

// --opponent-model and --attacker omniscient are checked before anything runs.
TEST(GameStudy, RefusesUnknownOpponentModelsAndAnOmniscientAttacker) {
  GameStudyOptions o = Synthetic("r2b2:1-lite", "self");
  o.opponent_model = "oracle";
  EXPECT_THROW(o.Validate(), std::invalid_argument);
  o.opponent_model = "self";
  o.attacker = "omniscient";
  EXPECT_THROW(o.Validate(), std::invalid_argument);
  o.attacker = "gpucb";
  o.omniscient_candidates = o.candidates - 1;
  EXPECT_THROW(o.Validate(), std::invalid_argument);
  o.omniscient_candidates = o.candidates;
  o.defender_kernel = "rbf";
  EXPECT_THROW(o.Validate(), std::invalid_argument);
  o.defender_kernel = "joint";
  o.defender_beta = "greedy";
  EXPECT_THROW(o.Validate(), std::invalid_argument);
}

}  // namespace
}  // namespace advbo::experiment
