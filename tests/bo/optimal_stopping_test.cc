// Bayesian optimal stopping: decisions on curves with a known answer.
#include "bo/optimal_stopping.h"

#include <gtest/gtest.h>

namespace advbo::bo {
namespace {

BosOptions SmallOptions() {
  BosOptions o;
  o.num_paths = 20000;  // the default 100,000 is exercised in the BOS^2 tests
  return o;
}

// Runs the rule along a full curve e_1..e_N, returns the first stopping step or 0.
int FirstStop(const Eigen::VectorXd& curve, int n0, double threshold, Rng& rng) {
  auto table =
      BosDecisionTable::Solve(curve.head(n0), curve.size(), threshold, 1, SmallOptions(), rng);
  for (int n = n0 + 1; n <= curve.size(); ++n)
    if (table.Decide(n, table.SummaryStatistic(curve.head(n))) == BosDecision::kStop) return n;
  return 0;
}

TEST(BayesianOptimalStopping, CurveClearlyBeatingTheThresholdNeverStops) {
  Rng rng(0);
  // Error falls from 0.5 towards 0.05; the threshold is 0.4, beaten from step 3 on.
  Eigen::VectorXd curve(40);
  for (int n = 0; n < 40; ++n) curve(n) = 0.05 + 0.45 * std::exp(-0.3 * n);
  EXPECT_EQ(FirstStop(curve, 8, 0.4, rng), 0);
}

TEST(BayesianOptimalStopping, FlatCurveFarBelowTheThresholdStops) {
  Rng rng(1);
  // A flat error of 0.9 while the incumbent is at 0.2: hopeless, stop right after warm-up.
  Eigen::VectorXd curve = Eigen::VectorXd::Constant(40, 0.9);
  for (int n = 0; n < 40; ++n) curve(n) += 0.002 * ((n * 7) % 3 - 1);
  const int stop = FirstStop(curve, 8, 0.2, rng);
  EXPECT_GT(stop, 8);
  EXPECT_LE(stop, 12);
}

TEST(BayesianOptimalStopping, DecisionTableShapeAndK1Schedule) {
  Rng rng(2);
  Eigen::VectorXd warm = Eigen::VectorXd::Constant(8, 0.6);
  auto t = BosDecisionTable::Solve(warm, 40, 0.59, 1, SmallOptions(), rng);
  EXPECT_EQ(t.decisions().rows(), 32);
  EXPECT_EQ(t.decisions().cols(), 100);
  EXPECT_EQ(t.Decide(5, 0.6), BosDecision::kContinue);  // warm-up steps never stop
  // A larger outer iteration t makes K1 larger, so stopping can only become rarer.
  Rng r1(3), r2(3);
  auto early = BosDecisionTable::Solve(warm, 40, 0.59, 1, SmallOptions(), r1);
  auto late = BosDecisionTable::Solve(warm, 40, 0.59, 400, SmallOptions(), r2);
  EXPECT_GE((early.decisions().array() == 1).count(), (late.decisions().array() == 1).count());
  EXPECT_THROW(BosDecisionTable::Solve(warm, 8, 0.5, 1, SmallOptions(), rng),
               std::invalid_argument);
}

TEST(BayesianOptimalStopping, AsymptoteModelStopsCurvesThatLevelOffAboveTheIncumbent) {
  // BO-BOS' case: e_n = 0.2 + 0.5 exp(-0.3 n) levels off at 0.2, the incumbent is 0.06.
  // The zero-mean decay model forecasts errors falling to 0 and keeps training; the
  // asymptote model (Swersky et al. 2014) sees the plateau and stops.
  Eigen::VectorXd curve(50);
  for (int n = 0; n < 50; ++n) curve(n) = 0.2 + 0.5 * std::exp(-0.3 * (n + 1));
  BosOptions o = SmallOptions();
  o.summary_from_first_step = true;
  o.k1_exponent_offset = -1;
  auto first_stop = [&](bool asymptote, double threshold, uint64_t seed) {
    Rng rng(seed);
    o.asymptote = asymptote;
    auto t = BosDecisionTable::Solve(curve.head(8), 50, threshold, 1, o, rng);
    for (int n = 9; n < 50; ++n)
      if (t.Decide(n, t.SummaryStatistic(curve.head(n))) == BosDecision::kStop) return n;
    return 0;
  };
  EXPECT_EQ(first_stop(false, 0.06, 4), 0);
  const int stop = first_stop(true, 0.06, 4);
  EXPECT_GT(stop, 8);
  EXPECT_LE(stop, 20);
  EXPECT_EQ(first_stop(true, 0.5, 5), 0);  // the same curve beats an incumbent of 0.5
}

}  // namespace
}  // namespace advbo::bo
