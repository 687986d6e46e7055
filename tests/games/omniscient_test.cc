// The omniscient agent (games/omniscient.h): the bound on what any defender with a
// given candidate set can achieve, checked against the payoff table of a synthetic game.
#include "games/omniscient.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "bo/kernel.h"
#include "games/r2b2.h"
#include "games/synthetic.h"

namespace advbo::games {
namespace {

// Each round the omniscient defender plays the best column of the payoff table's row of the
// attacker's action: its payoff is max_j f_2(i_t, j) over the whole grid, never below what any
// other defender action would have paid in that round.
TEST(Omniscient, PlaysTheBestDefenderActionOfEachRoundOnTheTrueTable) {
  bo::Rng game_rng(4);
  SyntheticGame game(GameType::kConstantSum, game_rng, 30, 0.1);
  const ActionSpace& space = game.space(1);
  OmniscientAgent defender(1, game, CandidateActions(space, 30, 1));
  ASSERT_EQ(defender.candidates().rows(), 30);  // the whole grid
  std::vector<ActionSpace> spaces = {game.space(0), game.space(1)};
  std::vector<PayoffBelief> beliefs;
  for (int m = 0; m < 2; ++m) beliefs.emplace_back(m, 2, game.TruePrior(), BeliefOptions{});
  std::vector<std::unique_ptr<Level0Strategy>> level0;
  level0.push_back(std::make_unique<RandomSearchStrategy>(spaces[0]));
  level0.push_back(std::make_unique<RandomSearchStrategy>(spaces[1]));
  R2b2Options ao;
  ao.level = 0;
  R2b2Agent attacker(0, spaces, std::move(beliefs), std::move(level0), ao);
  GameOptions go;
  go.rounds = 40;
  go.init_rounds = 0;
  bo::Rng rng(2);
  const auto records = RunRepeatedGame(game, {&attacker, &defender}, go, rng);
  ASSERT_EQ(records.size(), 40u);
  for (const auto& r : records) {
    const int i = space.NearestIndex(r.actions[0]);
    EXPECT_DOUBLE_EQ(r.payoffs(1), game.payoff_table(1).row(i).maxCoeff()) << r.round;
  }
  EXPECT_DOUBLE_EQ(defender.last_payoff(), records.back().payoffs(1));
  EXPECT_EQ(defender.evaluations(), 40 * 30);
}

// A candidate outside the space, an empty set, and a round where the attacker's action is not
// revealed are errors, never a silent choice.
TEST(Omniscient, RefusesBadCandidatesAndUnrevealedOpponents) {
  bo::Rng game_rng(4);
  SyntheticGame game(GameType::kConstantSum, game_rng, 10, 0.1);
  EXPECT_THROW(OmniscientAgent(1, game, Eigen::MatrixXd(0, 1)), std::invalid_argument);
  EXPECT_THROW(OmniscientAgent(1, game, Eigen::MatrixXd::Constant(1, 1, 0.55)),
               std::invalid_argument);  // not a grid point
  EXPECT_THROW(OmniscientAgent(2, game, CandidateActions(game.space(1), 10, 1)),
               std::invalid_argument);
  OmniscientAgent defender(1, game, CandidateActions(game.space(1), 10, 1));
  GameHistory h({1, 1});
  bo::Rng rng(1);
  EXPECT_THROW(defender.Act(h, {Eigen::VectorXd(), Eigen::VectorXd()}, rng), std::invalid_argument);
}

// CandidateActions: the grid itself when small enough, a fixed subset (same seed, same rows)
// when larger, a Sobol design in the box on a continuous space; R2-B2 agents use the same sets.
TEST(CandidateActions, SameSeedSameSetAndR2b2UsesIt) {
  const ActionSpace grid = ActionSpace::Grid1d(50, 0, 1);
  EXPECT_EQ(CandidateActions(grid, 60, 3), grid.grid);
  const Eigen::MatrixXd sub = CandidateActions(grid, 20, 3);
  EXPECT_EQ(sub.rows(), 20);
  EXPECT_EQ(sub, CandidateActions(grid, 20, 3));
  const ActionSpace box = ActionSpace::Box(2, -2, 2);
  const Eigen::MatrixXd sobol = CandidateActions(box, 64, 5);
  for (Eigen::Index k = 0; k < sobol.rows(); ++k)
    EXPECT_TRUE(box.Contains(sobol.row(k).transpose()));
  EXPECT_THROW(CandidateActions(box, 0, 5), std::invalid_argument);
  std::vector<ActionSpace> spaces = {box, box};
  std::vector<PayoffBelief> beliefs;
  bo::ExactGP prior(
      std::make_unique<bo::StationaryKernel>(bo::KernelFamily::kSquaredExponential, 4, false),
      1e-2);
  for (int m = 0; m < 2; ++m) beliefs.emplace_back(m, 4, prior, BeliefOptions{});
  std::vector<std::unique_ptr<Level0Strategy>> level0;
  for (int m = 0; m < 2; ++m) level0.push_back(std::make_unique<RandomSearchStrategy>(box));
  R2b2Options o;
  o.candidates = 64;
  o.candidate_seed = 9;
  R2b2Agent agent(1, spaces, std::move(beliefs), std::move(level0), o);
  EXPECT_EQ(agent.Candidates(1), CandidateActions(box, 64, bo::DeriveSeed(9, 1)));
}

// The defender's own search set: own_candidates enlarges only its own set, whose
// first `candidates` rows are the shared set the others model it with; vertex_candidates adds
// the 2^d box vertices to it alone; agent_betas gives each agent its own beta_t.
TEST(R2b2Options, OwnCandidatesVerticesAndPerAgentBetas) {
  const ActionSpace box = ActionSpace::Box(2, -2, 2);
  std::vector<ActionSpace> spaces = {box, box};
  bo::ExactGP prior(
      std::make_unique<bo::StationaryKernel>(bo::KernelFamily::kSquaredExponential, 4, false),
      1e-2);
  auto make = [&](const R2b2Options& o) {
    std::vector<PayoffBelief> beliefs;
    for (int m = 0; m < 2; ++m) beliefs.emplace_back(m, 4, prior, BeliefOptions{});
    std::vector<std::unique_ptr<Level0Strategy>> level0;
    for (int m = 0; m < 2; ++m) level0.push_back(std::make_unique<RandomSearchStrategy>(box));
    return std::make_unique<R2b2Agent>(1, spaces, std::move(beliefs), std::move(level0), o);
  };
  R2b2Options o;
  o.candidates = 50;
  o.own_candidates = 300;
  o.vertex_candidates = true;
  o.agent_betas = {bo::ExplorationWeight{bo::BetaPolicy::kConstant, 4.0, 0.1},
                   bo::ExplorationWeight{bo::BetaPolicy::kConstant, 0.1, 0.1}};
  const auto agent = make(o);
  const Eigen::MatrixXd& own = agent->Candidates(1);
  ASSERT_EQ(own.rows(), 300 + 4);
  EXPECT_EQ(agent->Candidates(0).rows(), 50);  // the opponent's set is the shared one
  EXPECT_EQ(own.topRows(50), CandidateActions(box, 50, bo::DeriveSeed(0, 1)));
  for (int k = 0; k < 4; ++k) {
    EXPECT_EQ(std::abs(own(300 + k, 0)), 2.0);
    EXPECT_EQ(std::abs(own(300 + k, 1)), 2.0);
  }
  EXPECT_EQ(agent->BetaOf(0, 10), 4.0);
  EXPECT_EQ(agent->BetaOf(1, 10), 0.1);
  o.agent_betas.pop_back();  // one entry for two agents
  EXPECT_THROW(make(o), std::invalid_argument);
  o.agent_betas.clear();
  o.own_candidates = -1;
  EXPECT_THROW(make(o), std::invalid_argument);
}

}  // namespace
}  // namespace advbo::games
