// BO agents that ignore their opponent (Dai 2021 thesis App. E.6.2.2b): GP-UCB plays the
// UCB maximiser of a GP over its own action, Thompson sampling concentrates on the maximum
// but stays mixed, a copy fed the same history plays the same action (refits included), and
// a level-1 defender therefore simulates a GP-UCB attacker exactly every round.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <set>

#include "bo/kernel.h"
#include "games/r2b2.h"

namespace advbo::games {
namespace {

bo::ExactGP OwnPrior(int d) {
  return bo::ExactGP(std::make_unique<bo::StationaryKernel>(bo::KernelFamily::kSquaredExponential,
                                                            d, true, std::vector<int>{}, 0.3, 1.0),
                     1e-4);
}

// Payoffs of a two-agent constant-sum game on [0, 1] x [0, 1]: agent 0 wants a_1 near 0.7
// and a_2 far from a_1.
class ToyGame final : public GameEnvironment {
 public:
  ToyGame() : spaces_{ActionSpace::Box(1, 0, 1), ActionSpace::Box(1, 0, 1)} {}
  int num_agents() const override { return 2; }
  const ActionSpace& space(int m) const override { return spaces_.at(m); }
  Eigen::VectorXd Payoffs(const std::vector<Eigen::VectorXd>& a) override {
    const double d1 = a[0](0) - 0.7, d2 = a[1](0) - a[0](0);
    const double f = std::exp(-d1 * d1 / 0.05) * (1.0 - std::exp(-d2 * d2 / 0.02));
    return Eigen::Vector2d(f, 1.0 - f);
  }

 private:
  std::vector<ActionSpace> spaces_;
};

GameHistory RandomHistory(ToyGame& g, int rounds, uint64_t seed) {
  bo::Rng rng(seed);
  GameHistory h({1, 1});
  for (int t = 0; t < rounds; ++t) {
    std::vector<Eigen::VectorXd> a = {g.space(0).SampleUniform(1, rng).row(0),
                                      g.space(1).SampleUniform(1, rng).row(0)};
    h.Add(Eigen::Vector2d(a[0](0), a[1](0)), g.Payoffs(a));
  }
  return h;
}

const bo::ExactGP& Unused() {
  static const bo::ExactGP gp = OwnPrior(2);
  return gp;
}

TEST(OwnActionBo, GpUcbPlaysTheUcbMaximiserOfItsOwnActionGp) {
  ToyGame g;
  const GameHistory h = RandomHistory(g, 12, 5);
  BeliefOptions no_refit;
  no_refit.refit_every = 0;
  OwnActionBoStrategy s(g.space(0), OwnActionBoStrategy::Acquisition::kUcb, OwnPrior(1), 64, 9,
                        no_refit);
  const double beta = 2.5;
  s.Observe(h, 0, Unused(), beta);
  // Independently: the GP of agent 0's payoff on its own action only.
  bo::ExactGP ref = OwnPrior(1);
  Eigen::MatrixXd x(12, 1);
  for (int t = 0; t < 12; ++t) x(t, 0) = h.Action(t, 0)(0);
  ref.SetData(x, h.Payoffs(0));
  Eigen::VectorXd mu, var;
  ref.Predict(s.candidates(), &mu, &var);
  Eigen::Index best;
  (mu.array() + std::sqrt(beta) * var.cwiseSqrt().array()).maxCoeff(&best);
  bo::Rng rng(1);
  const Eigen::MatrixXd draw = s.Sample(3, rng);
  for (int i = 0; i < 3; ++i) EXPECT_DOUBLE_EQ(draw(i, 0), s.candidates()(best, 0));
  Eigen::MatrixXd support;
  Eigen::VectorXd probs;
  ASSERT_TRUE(s.FiniteDistribution(&support, &probs));  // a pure strategy
  ASSERT_EQ(support.rows(), 1);
  EXPECT_DOUBLE_EQ(support(0, 0), s.candidates()(best, 0));
  EXPECT_DOUBLE_EQ(probs(0), 1.0);
}

// --gp-outputs raw (the reference code's GPy GPRegression): a zero prior mean in payoff
// units, so far from every observation the posterior mean is 0, not the payoffs' mean.
TEST(OwnActionBo, RawOutputsPutAZeroPriorMeanUnderTheObservedPayoffs) {
  ToyGame g;
  GameHistory h({1, 1});
  for (double a : {0.0, 0.05, 0.1}) h.Add(Eigen::Vector2d(a, 0.5), Eigen::Vector2d(0.9, 0.1));
  Level0Options lo;
  lo.belief.refit_every = 0;
  for (bool standardize : {true, false}) {
    lo.standardize = standardize;
    bo::Rng rng(3);
    auto s = MakeLevel0("gpucb", g.space(0), lo, rng);
    s->Observe(h, 0, Unused(), 2.0);
    const auto& bo_strategy = dynamic_cast<const OwnActionBoStrategy&>(*s);
    EXPECT_EQ(bo_strategy.gp().standardize(), standardize);
    Eigen::VectorXd mu, var;
    bo_strategy.gp().Predict(Eigen::MatrixXd::Constant(1, 1, 50.0), &mu, &var);
    EXPECT_NEAR(mu(0), standardize ? 0.9 : 0.0, 1e-9) << "standardize " << standardize;
  }
}

TEST(PayoffBelief, AnOwnActionBeliefFedRoundByRoundIsTheGpOfTheOwnActionColumns) {
  ToyGame g;
  const GameHistory h = RandomHistory(g, 9, 3);
  BeliefOptions no_refit;
  no_refit.refit_every = 0;
  PayoffBelief b(1, 1, OwnPrior(1), no_refit, BeliefInputs::kOwnAction);
  GameHistory partial({1, 1});
  for (int t = 0; t < h.rounds(); ++t) {  // the append path, one round at a time
    partial.Add(h.JointAt(t), h.PayoffsAt(t));
    b.Update(partial);
  }
  bo::ExactGP ref = OwnPrior(1);
  Eigen::MatrixXd x(9, 1);
  for (int t = 0; t < 9; ++t) x(t, 0) = h.Action(t, 1)(0);
  ref.SetData(x, h.Payoffs(1));
  const Eigen::MatrixXd q = Eigen::VectorXd::LinSpaced(11, 0, 1);
  Eigen::VectorXd mu, var, mu_ref, var_ref;
  b.gp().Predict(q, &mu, &var);
  ref.Predict(q, &mu_ref, &var_ref);
  EXPECT_LT((mu - mu_ref).cwiseAbs().maxCoeff(), 1e-9);
  EXPECT_LT((var - var_ref).cwiseAbs().maxCoeff(), 1e-9);
  // A joint-action belief of the same dimension is the wrong input for this history.
  PayoffBelief joint(1, 1, OwnPrior(1), no_refit, BeliefInputs::kJointAction);
  EXPECT_THROW(joint.Update(h), std::invalid_argument);
  PayoffBelief absent(2, 1, OwnPrior(1), no_refit, BeliefInputs::kOwnAction);
  EXPECT_THROW(absent.Update(h), std::invalid_argument);
}

TEST(OwnActionBo, ThompsonSamplingIsMixedAndConcentratesOnTheMaximum) {
  ToyGame g;
  OwnActionBoStrategy s(g.space(0), OwnActionBoStrategy::Acquisition::kThompson, OwnPrior(1), 200,
                        3);
  // Noise-free observations of h(a) = exp(-(a - 0.7)^2 / 0.05) at 8 points.
  GameHistory h({1, 1});
  for (int t = 0; t < 8; ++t) {
    const double a = (t + 0.5) / 8;
    const double f = std::exp(-(a - 0.7) * (a - 0.7) / 0.05);
    h.Add(Eigen::Vector2d(a, 0.5), Eigen::Vector2d(f, 1 - f));
  }
  s.Observe(h, 0, Unused(), 2.0);
  Eigen::MatrixXd support;
  Eigen::VectorXd probs;
  EXPECT_FALSE(s.FiniteDistribution(&support, &probs));
  bo::Rng rng(4);
  const Eigen::MatrixXd draws = s.Sample(300, rng);
  std::set<double> distinct;
  double dist = 0;
  for (int i = 0; i < 300; ++i) {
    distinct.insert(draws(i, 0));
    dist += std::abs(draws(i, 0) - 0.7) / 300;
  }
  EXPECT_GT(distinct.size(), 1u);  // mixed
  EXPECT_LT(dist, 0.1);            // uniform play would average ~0.29
}

TEST(OwnActionBo, ACopyFedTheSameHistoryPlaysTheSameActionAcrossRefits) {
  ToyGame g;
  const GameHistory h = RandomHistory(g, 23, 17);
  BeliefOptions b;
  b.refit_every = 5;
  b.fit_seed = 99;
  OwnActionBoStrategy incremental(g.space(0), OwnActionBoStrategy::Acquisition::kUcb, OwnPrior(1),
                                  100, 4, b);
  GameHistory grow({1, 1});
  for (int t = 0; t < h.rounds(); ++t) {
    grow.Add(h.JointAt(t), h.PayoffsAt(t));
    incremental.Observe(grow, 0, Unused(), 3.0);
  }
  // A second copy built from the same options sees the rounds in two batches.
  OwnActionBoStrategy copy(g.space(0), OwnActionBoStrategy::Acquisition::kUcb, OwnPrior(1), 100, 4,
                           b);
  GameHistory first({1, 1});
  for (int t = 0; t < 20; ++t) first.Add(h.JointAt(t), h.PayoffsAt(t));
  copy.Observe(first, 0, Unused(), 3.0);
  for (int t = 20; t < h.rounds(); ++t) {
    first.Add(h.JointAt(t), h.PayoffsAt(t));
    copy.Observe(first, 0, Unused(), 3.0);
  }
  bo::Rng r1(1), r2(2);
  EXPECT_DOUBLE_EQ(incremental.Sample(1, r1)(0, 0), copy.Sample(1, r2)(0, 0));
  EXPECT_NE(incremental.gp().LogHyperparameters()(0), OwnPrior(1).LogHyperparameters()(0))
      << "the refit schedule ran";
  EXPECT_EQ(incremental.gp().LogHyperparameters(), copy.gp().LogHyperparameters());
}

TEST(OwnActionBo, ALevelOneDefenderSimulatesAGpUcbAttackerExactlyEveryRound) {
  ToyGame g;
  std::vector<ActionSpace> spaces = {g.space(0), g.space(1)};
  BeliefOptions b;
  b.refit_every = 5;
  b.fit_seed = 7;
  auto level0 = [&]() {
    std::vector<std::unique_ptr<Level0Strategy>> v;
    v.push_back(std::make_unique<OwnActionBoStrategy>(
        g.space(0), OwnActionBoStrategy::Acquisition::kUcb, OwnPrior(1), 100, 21, b));
    v.push_back(std::make_unique<RandomSearchStrategy>(g.space(1)));
    return v;
  };
  auto beliefs = [&]() {
    std::vector<PayoffBelief> v;
    for (int m = 0; m < 2; ++m) v.emplace_back(m, 2, OwnPrior(2), b);
    return v;
  };
  R2b2Options att_opt;
  att_opt.level = 0;
  R2b2Options def_opt;
  def_opt.level = 1;
  def_opt.lite = true;
  def_opt.candidates = 100;
  R2b2Agent attacker(0, spaces, beliefs(), level0(), att_opt);
  R2b2Agent defender(1, spaces, beliefs(), level0(), def_opt);
  GameHistory h = RandomHistory(g, 5, 3);
  attacker.Observe(h);
  defender.Observe(h);
  bo::Rng ra(11), rd(12);
  int distinct_moves = 0;
  Eigen::VectorXd previous;
  for (int t = 0; t < 25; ++t) {
    const Eigen::VectorXd a1 = attacker.Act(h, {}, ra);
    bo::Rng probe(t);
    const Eigen::VectorXd simulated = defender.level0(0).Sample(1, probe).row(0).transpose();
    ASSERT_DOUBLE_EQ(simulated(0), a1(0)) << "round " << t;
    if (previous.size() == 0 || previous(0) != a1(0)) ++distinct_moves;
    previous = a1;
    const Eigen::VectorXd a2 = defender.Act(h, {}, rd);
    // What the defender's decision assumed is what the attacker played.
    ASSERT_EQ(defender.PredictedAction(0).size(), 1) << "round " << t;
    EXPECT_EQ(defender.PredictedAction(0)(0), a1(0)) << "round " << t;
    EXPECT_EQ(attacker.PredictedAction(1).size(), 0);  // level 0 models nobody
    h.Add(Eigen::Vector2d(a1(0), a2(0)), g.Payoffs({a1, a2}));
    attacker.Observe(h);
    defender.Observe(h);
  }
  EXPECT_GT(distinct_moves, 2);  // the attacker does learn and move
}

// The same defender modelling the attacker as random search (a wrong opponent model) assumes
// one sampled action a round -- recorded, but almost never the one played.
TEST(OwnActionBo, ALevelOneDefenderWithAWrongOpponentModelMispredicts) {
  ToyGame g;
  std::vector<ActionSpace> spaces = {g.space(0), g.space(1)};
  BeliefOptions b;
  b.refit_every = 5;
  auto level0 = [&](bool truth) {
    std::vector<std::unique_ptr<Level0Strategy>> v;
    if (truth)
      v.push_back(std::make_unique<OwnActionBoStrategy>(
          g.space(0), OwnActionBoStrategy::Acquisition::kUcb, OwnPrior(1), 100, 21, b));
    else
      v.push_back(std::make_unique<RandomSearchStrategy>(g.space(0)));
    v.push_back(std::make_unique<RandomSearchStrategy>(g.space(1)));
    return v;
  };
  auto beliefs = [&]() {
    std::vector<PayoffBelief> v;
    for (int m = 0; m < 2; ++m) v.emplace_back(m, 2, OwnPrior(2), b);
    return v;
  };
  R2b2Options att_opt;
  att_opt.level = 0;
  R2b2Options def_opt;
  def_opt.level = 1;
  def_opt.lite = true;
  def_opt.candidates = 100;
  R2b2Agent attacker(0, spaces, beliefs(), level0(true), att_opt);
  R2b2Agent defender(1, spaces, beliefs(), level0(false), def_opt);
  GameHistory h = RandomHistory(g, 5, 3);
  attacker.Observe(h);
  defender.Observe(h);
  bo::Rng ra(11), rd(12);
  int predicted = 0, matched = 0;
  for (int t = 0; t < 25; ++t) {
    const Eigen::VectorXd a1 = attacker.Act(h, {}, ra), a2 = defender.Act(h, {}, rd);
    if (defender.PredictedAction(0).size() == 1) {
      ++predicted;
      matched += defender.PredictedAction(0)(0) == a1(0);
    }
    h.Add(Eigen::Vector2d(a1(0), a2(0)), g.Payoffs({a1, a2}));
    attacker.Observe(h);
    defender.Observe(h);
  }
  EXPECT_EQ(predicted, 25);
  EXPECT_LE(matched, 1);
}

}  // namespace
}  // namespace advbo::games

namespace advbo::games {
namespace {

TEST(GameHistory, DropOldestKeepsTheRecentRoundsAndCountsTheRest) {
  ToyGame g;
  GameHistory h = RandomHistory(g, 12, 7);
  const GameHistory full = h;
  h.DropOldest(5);
  EXPECT_EQ(h.rounds(), 7);
  EXPECT_EQ(h.dropped(), 5);
  EXPECT_EQ(h.total_rounds(), 12);
  for (int t = 0; t < 7; ++t) EXPECT_TRUE(h.JointAt(t) == full.JointAt(t + 5)) << t;
  EXPECT_THROW(h.DropOldest(8), std::invalid_argument);
  EXPECT_THROW(h.DropOldest(-1), std::invalid_argument);
}

TEST(PayoffBelief, FollowsAWindowedHistory) {
  // After DropOldest the belief holds exactly the kept rounds: its posterior mean equals a
  // belief built from those rounds alone (no stale points, none counted twice).
  ToyGame g;
  GameHistory h = RandomHistory(g, 20, 11);
  BeliefOptions no_refit;
  no_refit.refit_every = 0;
  PayoffBelief windowed(0, 2, OwnPrior(2), no_refit);
  windowed.Update(h);
  h.DropOldest(12);
  windowed.Update(h);
  ASSERT_EQ(windowed.gp().num_data(), 8);
  GameHistory recent({1, 1});
  for (int t = 0; t < h.rounds(); ++t) recent.Add(h.JointAt(t), h.PayoffsAt(t));
  PayoffBelief fresh(0, 2, OwnPrior(2), no_refit);
  fresh.Update(recent);
  Eigen::MatrixXd x(3, 2);
  x << 0.1, 0.2, 0.7, 0.5, 0.9, 0.1;
  Eigen::VectorXd m1, v1, m2, v2;
  windowed.gp().Predict(x, &m1, &v1);
  fresh.gp().Predict(x, &m2, &v2);
  EXPECT_TRUE(m1.isApprox(m2, 1e-10)) << m1.transpose() << " vs " << m2.transpose();
  // One more round after the drop is appended, not mistaken for the old count.
  h.Add(Eigen::Vector2d(0.3, 0.4), Eigen::Vector2d(0.5, 0.5));
  windowed.Update(h);
  EXPECT_EQ(windowed.gp().num_data(), 9);
}

}  // namespace
}  // namespace advbo::games
