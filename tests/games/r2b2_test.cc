// R2-B2 agents (Dai 2021 thesis Ch. 8): level-1 against a point mass is the best response,
// exact and sampled level 1 agree, the level-k recursion simulates exactly what the
// opponent plays, and the game engine's contracts.
#include "games/r2b2.h"

#include <gtest/gtest.h>

#include <memory>

#include "bo/acquisition.h"
#include "games/synthetic.h"

namespace advbo::games {
namespace {

struct GameFixture {
  std::unique_ptr<SyntheticGame> game;
  GameHistory history{std::vector<int>{1, 1}};
};

// A synthetic game with `rounds` random joint actions already observed.
GameFixture MakeSetup(GameType type, int grid, int rounds, uint64_t seed) {
  bo::Rng rng(seed);
  GameFixture s;
  s.game = std::make_unique<SyntheticGame>(type, rng, grid, 0.1);
  for (int t = 0; t < rounds; ++t) {
    std::vector<Eigen::VectorXd> a = {s.game->space(0).SampleUniform(1, rng).row(0),
                                      s.game->space(1).SampleUniform(1, rng).row(0)};
    Eigen::VectorXd joint(2);
    joint << a[0](0), a[1](0);
    s.history.Add(joint, s.game->Payoffs(a));
  }
  return s;
}

std::unique_ptr<R2b2Agent> MakeAgent(const SyntheticGame& g, int self, R2b2Options opt,
                                     std::vector<std::unique_ptr<Level0Strategy>> level0,
                                     const GameHistory* history = nullptr, int refit_every = 0) {
  BeliefOptions bopt;
  bopt.refit_every = refit_every;
  std::vector<PayoffBelief> beliefs;
  for (int m = 0; m < 2; ++m) beliefs.emplace_back(m, 2, g.TruePrior(), bopt);
  auto a = std::make_unique<R2b2Agent>(self, std::vector<ActionSpace>{g.space(0), g.space(1)},
                                       std::move(beliefs), std::move(level0), opt);
  if (history) a->Observe(*history);
  return a;
}

std::vector<std::unique_ptr<Level0Strategy>> RandomLevel0(const SyntheticGame& g) {
  std::vector<std::unique_ptr<Level0Strategy>> v;
  v.push_back(std::make_unique<RandomSearchStrategy>(g.space(0)));
  v.push_back(std::make_unique<RandomSearchStrategy>(g.space(1)));
  return v;
}

TEST(SyntheticGame, PayoffTablesFollowTheGameType) {
  bo::Rng rng(3);
  SyntheticGame common(GameType::kCommonPayoff, rng, 50), general(GameType::kGeneralSum, rng, 50),
      constant(GameType::kConstantSum, rng, 50);
  for (const SyntheticGame* g : {&common, &general, &constant}) {
    for (int m = 0; m < 2; ++m) {
      EXPECT_NEAR(g->payoff_table(m).minCoeff(), 0.0, 1e-12);
      EXPECT_NEAR(g->payoff_table(m).maxCoeff(), 1.0, 1e-12);
    }
  }
  EXPECT_EQ((common.payoff_table(0) - common.payoff_table(1)).cwiseAbs().maxCoeff(), 0.0);
  EXPECT_NEAR((constant.payoff_table(0) + constant.payoff_table(1)).array().maxCoeff(), 1.0, 1e-12);
  EXPECT_NEAR((constant.payoff_table(0) + constant.payoff_table(1)).array().minCoeff(), 1.0, 1e-12);
  EXPECT_GT((general.payoff_table(0) - general.payoff_table(1)).cwiseAbs().maxCoeff(), 0.1);
  // Lengthscale 0.1 on a grid step of ~0.02: neighbouring payoffs are strongly correlated,
  // payoffs 0.5 apart are not.
  const Eigen::MatrixXd& f = general.payoff_table(0);
  const Eigen::ArrayXXd near = f.topRows(49).array() - f.bottomRows(49).array();
  const Eigen::ArrayXXd far = f.topRows(25).array() - f.bottomRows(25).array();
  EXPECT_LT(near.square().mean(), 0.1 * far.square().mean());
}

TEST(R2b2, ReferenceBetaUsesTheOwnActionDimension) {
  // The R2-B2 reference code's UCB scores own actions x with d = x.shape[1]: r2b2_ref is
  // 0.5 d log(2t) with d the agent's own dimension (1 here), r2b2_joint uses the joint one (2).
  GameFixture s = MakeSetup(GameType::kGeneralSum, 30, 12, 11);
  R2b2Options ref, joint;
  joint.beta = bo::ParseExplorationWeight("r2b2_joint");
  auto a = MakeAgent(*s.game, 0, ref, RandomLevel0(*s.game));
  auto b = MakeAgent(*s.game, 0, joint, RandomLevel0(*s.game));
  for (int t : {1, 7, 150}) {
    EXPECT_DOUBLE_EQ(a->BetaOf(0, t), 0.5 * 1 * std::log(2.0 * t)) << t;
    EXPECT_DOUBLE_EQ(a->BetaOf(1, t), 0.5 * 1 * std::log(2.0 * t)) << t;
    EXPECT_DOUBLE_EQ(b->BetaOf(0, t), 0.5 * 2 * std::log(2.0 * t)) << t;
  }
}

TEST(R2b2, LevelOneAgainstAPointMassIsTheBestResponse) {
  GameFixture s = MakeSetup(GameType::kGeneralSum, 30, 12, 11);
  const Eigen::VectorXd x2 = s.game->space(1).grid.row(17).transpose();
  std::vector<std::unique_ptr<Level0Strategy>> l0;
  l0.push_back(std::make_unique<RandomSearchStrategy>(s.game->space(0)));
  l0.push_back(std::make_unique<PointMassStrategy>(x2));
  R2b2Options opt;
  opt.level = 1;
  auto agent = MakeAgent(*s.game, 0, opt, std::move(l0), &s.history);
  bo::Rng rng(1);
  const Eigen::VectorXd x1 = agent->Act(s.history, {}, rng);
  // Independent best response: argmax_x1 UCB(x1, x2) of the same GP and beta_t.
  const auto& gp = agent->belief(0).gp();
  Eigen::MatrixXd joint(30, 2);
  joint.col(0) = s.game->space(0).grid;
  joint.col(1).setConstant(x2(0));
  Eigen::VectorXd mu, var;
  gp.Predict(joint, &mu, &var);
  const double beta = opt.beta.Beta(s.history.rounds() + 1, 2, 900.0);
  Eigen::Index best;
  bo::Ucb(mu, var, beta).maxCoeff(&best);
  EXPECT_DOUBLE_EQ(x1(0), joint(best, 0));
}

TEST(R2b2, ExactAndSampledLevelOneAgree) {
  GameFixture s = MakeSetup(GameType::kConstantSum, 15, 10, 5);
  R2b2Options exact, sampled;
  exact.level = sampled.level = 1;
  sampled.exact_limit = 0;
  sampled.samples = 40000;
  auto a = MakeAgent(*s.game, 0, exact, RandomLevel0(*s.game), &s.history);
  auto b = MakeAgent(*s.game, 0, sampled, RandomLevel0(*s.game), &s.history);
  // Expected-UCB scores: exact over the 15 opponent actions vs 40,000 uniform samples.
  const Eigen::MatrixXd& cands = a->Candidates(0);
  Eigen::MatrixXd others = Eigen::MatrixXd::Zero(15, 2);
  others.col(1) = s.game->space(1).grid;
  const int round = s.history.rounds() + 1;
  const Eigen::VectorXd exact_scores =
      a->ExpectedUcbScores(0, cands, others, Eigen::VectorXd::Constant(15, 1.0 / 15), round);
  bo::Rng rng(2);
  Eigen::MatrixXd draws = Eigen::MatrixXd::Zero(40000, 2);
  draws.col(1) = s.game->space(1).SampleUniform(40000, rng);
  const Eigen::VectorXd mc_scores =
      b->ExpectedUcbScores(0, cands, draws, Eigen::VectorXd::Constant(40000, 1.0 / 40000), round);
  EXPECT_LT((exact_scores - mc_scores).cwiseAbs().maxCoeff(),
            0.02 * exact_scores.cwiseAbs().maxCoeff());
  // The chosen actions: the sampled agent's choice is (near-)optimal for the exact objective.
  bo::Rng r1(7), r2(7);
  const Eigen::VectorXd xa = a->Act(s.history, {}, r1), xb = b->Act(s.history, {}, r2);
  const int ia = s.game->space(0).NearestIndex(xa);
  const int ib = s.game->space(0).NearestIndex(xb);
  EXPECT_EQ(exact_scores(ia), exact_scores.maxCoeff());
  EXPECT_GT(exact_scores(ib), exact_scores.maxCoeff() - 0.01 * std::abs(exact_scores.maxCoeff()));
}

void ExpectRecursionMatches(int level_a, int level_d, int refit_every) {
  bo::Rng rng(21);
  SyntheticGame game(GameType::kConstantSum, rng, 25, 0.1);
  R2b2Options oa, od;
  oa.level = level_a;
  od.level = level_d;
  auto a = MakeAgent(game, 0, oa, RandomLevel0(game), nullptr, refit_every);
  auto d = MakeAgent(game, 1, od, RandomLevel0(game), nullptr, refit_every);
  GameOptions go;
  go.rounds = 25;
  go.init_rounds = 3;
  go.payoff_noise = 0.01;
  int checked = 0;
  RunRepeatedGame(game, {a.get(), d.get()}, go, rng, [&](const RoundRecord& r) {
    if (r.init) return;
    ASSERT_EQ(a->last_simulated_opponent().size(), 1);
    EXPECT_EQ(a->last_simulated_opponent()(0), r.actions[1](0)) << "round " << r.round;
    ++checked;
  });
  EXPECT_EQ(checked, 25);
}

TEST(R2b2, LevelTwoSimulatesExactlyWhatTheLevelOneOpponentPlays) {
  ExpectRecursionMatches(2, 1, 0);
  ExpectRecursionMatches(2, 1, 5);  // refitted hyperparameters stay identical across agents
}

TEST(R2b2, LevelThreeSimulatesExactlyWhatTheLevelTwoOpponentPlays) {
  ExpectRecursionMatches(3, 2, 5);
}

TEST(R2b2, LevelOneLearnsTheBestResponseToAKnownOpponent) {
  // Agent 2 always plays one action and agent 1 knows it (point-mass level-0 model): level-1
  // reasoning is then GP-UCB on x_1 -> f_1(x_1, x_2*), whose regret must vanish.
  for (uint64_t seed = 0; seed < 5; ++seed) {
    bo::Rng rng(100 + seed);
    SyntheticGame game(GameType::kGeneralSum, rng, 40, 0.1);
    const int j = static_cast<int>(seed * 7 % 40);
    const Eigen::VectorXd x2 = game.space(1).grid.row(j).transpose();
    std::vector<std::unique_ptr<Level0Strategy>> l0a, l0d;
    l0a.push_back(std::make_unique<RandomSearchStrategy>(game.space(0)));
    l0a.push_back(std::make_unique<PointMassStrategy>(x2));
    l0d.push_back(std::make_unique<RandomSearchStrategy>(game.space(0)));
    l0d.push_back(std::make_unique<PointMassStrategy>(x2));
    R2b2Options o1, o0;
    o1.level = 1;
    o0.level = 0;
    auto a = MakeAgent(game, 0, o1, std::move(l0a));
    auto d = MakeAgent(game, 1, o0, std::move(l0d));
    GameOptions go;
    go.rounds = 60;
    go.payoff_noise = 0.01;
    const double best = game.payoff_table(0).col(j).maxCoeff();
    double late_regret = 0;
    for (const auto& r : RunRepeatedGame(game, {a.get(), d.get()}, go, rng)) {
      if (r.init) continue;
      ASSERT_EQ(r.actions[1](0), x2(0));
      if (r.round > 40) late_regret += best - r.payoffs(0);
    }
    EXPECT_LT(late_regret / 20, 0.02) << "game " << seed;
  }
}

// A 3-agent game on a 12-point grid each: smooth payoffs f_m(x) = sin/cos mixtures.
class ThreeAgentGame final : public GameEnvironment {
 public:
  ThreeAgentGame() : space_(ActionSpace::Grid1d(12, 0.0, 1.0)) {}
  int num_agents() const override { return 3; }
  const ActionSpace& space(int) const override { return space_; }
  Eigen::VectorXd Payoffs(const std::vector<Eigen::VectorXd>& a) override {
    const double x = a[0](0), y = a[1](0), z = a[2](0);
    return Eigen::Vector3d(std::sin(3 * x + y) + 0.5 * std::cos(4 * z),
                           std::cos(2 * y - x) + 0.3 * z, std::sin(5 * z) * std::cos(x + y));
  }

 private:
  ActionSpace space_;
};

TEST(R2b2, ThreeAgentLevelTwoSimulatesItsLevelOneOpponentsExactly) {
  ThreeAgentGame game;
  auto make = [&](int self, int level) {
    BeliefOptions bopt;
    bopt.refit_every = 0;
    std::vector<PayoffBelief> beliefs;
    for (int m = 0; m < 3; ++m)
      beliefs.emplace_back(m, 3,
                           bo::ExactGP(std::make_unique<bo::StationaryKernel>(
                                           bo::KernelFamily::kSquaredExponential, 3, false,
                                           std::vector<int>{}, 0.3, 1.0),
                                       1e-2),
                           bopt);
    std::vector<std::unique_ptr<Level0Strategy>> l0;
    for (int m = 0; m < 3; ++m) l0.push_back(std::make_unique<RandomSearchStrategy>(game.space(m)));
    R2b2Options o;
    o.level = level;
    return std::make_unique<R2b2Agent>(self, std::vector<ActionSpace>(3, game.space(0)),
                                       std::move(beliefs), std::move(l0), o);
  };
  auto a = make(0, 2), b = make(1, 1), c = make(2, 1);
  GameOptions go;
  go.rounds = 15;
  go.init_rounds = 3;
  bo::Rng rng(9);
  int checked = 0;
  RunRepeatedGame(game, {a.get(), b.get(), c.get()}, go, rng, [&](const RoundRecord& r) {
    if (r.init) return;
    // Before the next round, agent 0's simulation of agents 1 and 2 at level 1 (E.1: they
    // average over everybody else's level-0 strategy) is what they will play.
    ++checked;
  });
  EXPECT_EQ(checked, 15);
  // Replay one more decision with the final history and compare simulated vs actual.
  GameHistory h(std::vector<int>{1, 1, 1});
  for (int t = 0; t < 6; ++t) {
    std::vector<Eigen::VectorXd> acts = {game.space(0).SampleUniform(1, rng).row(0),
                                         game.space(1).SampleUniform(1, rng).row(0),
                                         game.space(2).SampleUniform(1, rng).row(0)};
    Eigen::VectorXd joint(3);
    joint << acts[0](0), acts[1](0), acts[2](0);
    h.Add(joint, game.Payoffs(acts));
  }
  auto a2 = make(0, 2), b2 = make(1, 1), c2 = make(2, 1);
  for (auto* ag : {a2.get(), b2.get(), c2.get()}) ag->Observe(h);
  bo::Rng r1(1), r2(2), r3(3);
  for (int m = 1; m <= 2; ++m) {
    const Eigen::VectorXd simulated = a2->Simulate(m, 1, h, {}, r1);
    const Eigen::VectorXd actual = (m == 1 ? b2.get() : c2.get())->Act(h, {}, m == 1 ? r2 : r3);
    EXPECT_EQ(simulated(0), actual(0)) << "agent " << m;
  }
  EXPECT_THROW(make(0, 3), std::invalid_argument);  // levels > 2 undefined for M > 2 (E.2)
}

class FixedAgent final : public Agent {
 public:
  FixedAgent(Eigen::VectorXd a, bool second) : a_(std::move(a)), second_(second) {}
  std::string name() const override { return "fixed"; }
  bool moves_second() const override { return second_; }
  Eigen::VectorXd Act(const GameHistory&, const std::vector<Eigen::VectorXd>& revealed,
                      bo::Rng&) override {
    seen = revealed;
    return a_;
  }
  std::vector<Eigen::VectorXd> seen;

 private:
  Eigen::VectorXd a_;
  bool second_;
};

TEST(RepeatedGame, SecondMoversSeeTheFirstMoversActionAndBadActionsAreRejected) {
  bo::Rng rng(4);
  SyntheticGame game(GameType::kGeneralSum, rng, 10, 0.1);
  FixedAgent first(Eigen::VectorXd::Constant(1, game.space(0).grid(3, 0)), false);
  FixedAgent second(Eigen::VectorXd::Constant(1, game.space(1).grid(7, 0)), true);
  GameOptions go;
  go.rounds = 2;
  go.init_rounds = 0;
  auto recs = RunRepeatedGame(game, {&first, &second}, go, rng);
  ASSERT_EQ(recs.size(), 2u);
  ASSERT_EQ(second.seen.size(), 2u);
  ASSERT_EQ(second.seen[0].size(), 1);
  EXPECT_EQ(second.seen[0](0), game.space(0).grid(3, 0));
  EXPECT_EQ(first.seen[1].size(), 0);  // a first mover sees nothing
  EXPECT_DOUBLE_EQ(recs[0].payoffs(0), game.payoff_table(0)(3, 7));
  FixedAgent outside(Eigen::VectorXd::Constant(1, 0.123456), false);
  EXPECT_THROW(RunRepeatedGame(game, {&outside, &second}, go, rng), std::invalid_argument);
  EXPECT_THROW(RunRepeatedGame(game, {&first}, go, rng), std::invalid_argument);
}

TEST(RepeatedGame, PayoffNoiseIsAddedToObservationsOnly) {
  bo::Rng rng(8);
  SyntheticGame game(GameType::kCommonPayoff, rng, 10, 0.1);
  FixedAgent p(Eigen::VectorXd::Constant(1, game.space(0).grid(1, 0)), false);
  FixedAgent q(Eigen::VectorXd::Constant(1, game.space(1).grid(2, 0)), false);
  GameOptions go;
  go.rounds = 400;
  go.init_rounds = 0;
  go.payoff_noise = 0.1;
  double sum = 0, sq = 0;
  for (const auto& r : RunRepeatedGame(game, {&p, &q}, go, rng)) {
    EXPECT_DOUBLE_EQ(r.payoffs(0), game.payoff_table(0)(1, 2));
    const double e = r.observed(0) - r.payoffs(0);
    sum += e;
    sq += e * e;
  }
  EXPECT_NEAR(sum / 400, 0.0, 0.02);
  EXPECT_NEAR(std::sqrt(sq / 400), 0.1, 0.015);
}

}  // namespace
}  // namespace advbo::games
