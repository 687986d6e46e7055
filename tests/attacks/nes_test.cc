// NES (Ilyas et al., ICML 2018, Algorithm 1; attacks/nes) against a linear model's closed-form
// gradient (NES had no test of its own).
#include "attacks/nes/nes.h"

#include <gtest/gtest.h>

#include <vector>

#include "attacks/linear_model.h"
#include "oracle/oracle.h"

namespace advbo::attacks {
namespace {

// The antithetic estimate g = 1/(2 n sigma) sum_i [L(x + sigma u_i) - L(x - sigma u_i)] u_i of a
// linear objective a . x has mean a, so NES's first signed step x0 + lr sign(g) -- the query
// after its 2n probes -- moves every pixel by lr in the direction of sign(a) (with 2,000 pairs
// in 64 dimensions the estimate's noise per coordinate is ~0.18 |a|_2 / 8 against |a_i| >= 0.5:
// a wrong sign is a 3-sigma event). A sign error in the estimate or the step fails it.
TEST(Nes, FirstStepFollowsTheSignOfTheLinearModelsGradient) {
  constexpr int kSide = 8, kD = kSide * kSide, kPairs = 2000;
  const Eigen::VectorXd a = testing::MixedSignWeights(kD, 5);
  const std::vector<float> x0(kD, 0.5f);
  std::vector<std::vector<float>> seen;
  auto model = testing::LinearModel(a, x0, -50.0, kSide, &seen);  // unreachable: never a success
  const double eps = 0.05;
  oracle::Referee orc(*model, x0.data(), 0, -1, eps, 2 * kPairs + 1);
  NesOptions o;
  o.samples = kPairs;
  o.sigma = 0.01;
  bo::Rng rng(3);
  const AttackResult r = NesAttack(o).Run(orc, rng, nullptr);
  EXPECT_FALSE(r.success);
  ASSERT_EQ(seen.size(), static_cast<size_t>(2 * kPairs + 1));  // n pairs, then the step
  const std::vector<float>& step = seen.back();
  const double lr = o.lr_ratio * eps;
  int along = 0;
  for (int i = 0; i < kD; ++i) {
    EXPECT_NEAR(std::abs(step[i] - x0[i]), lr, 1e-6) << i;  // a full signed step on every pixel
    along += (step[i] - x0[i] > 0) == (a(i) > 0);
  }
  EXPECT_EQ(along, kD);
  // The objective rose by lr |a|_1, the most a step of L_inf length lr can give.
  EXPECT_NEAR(r.best_objective, -50.0 + lr * a.lpNorm<1>(), 1e-4);
}

// Unsigned steps (nes:unsigned=1): the first step is lr g / max|g| with g ~ a, so pixel i moves
// by lr a_i / max|a| (noise ~0.18 |a|_2 / 8 ~ 0.2 per coordinate on g, i.e. ~0.15 lr on the
// step: tolerance 0.5 lr) and no pixel by more than lr; a signed step (every pixel by exactly
// lr) or a wrong normalisation fails it. After 75 % of the budget the step is lr / 4: the
// last iterate moves by at most lr / 4 from the one before.
TEST(Nes, UnsignedStepsFollowTheGradientsMagnitudesAndShrink) {
  constexpr int kSide = 8, kD = kSide * kSide, kPairs = 2000;
  const Eigen::VectorXd a = testing::MixedSignWeights(kD, 5);
  const std::vector<float> x0(kD, 0.5f);
  std::vector<std::vector<float>> seen;
  auto model = testing::LinearModel(a, x0, -50.0, kSide, &seen);
  const double eps = 0.05;
  oracle::Referee orc(*model, x0.data(), 0, -1, eps, 4 * (2 * kPairs + 1));  // four steps
  NesOptions o;
  o.samples = kPairs;
  o.sigma = 0.01;
  o.unsigned_steps = 1;
  bo::Rng rng(3);
  NesAttack(o).Run(orc, rng, nullptr);
  ASSERT_EQ(seen.size(), static_cast<size_t>(4 * (2 * kPairs + 1)));
  const double lr = o.lr_ratio * eps, top = a.cwiseAbs().maxCoeff();
  const std::vector<float>& first = seen[2 * kPairs];
  double largest = 0;
  for (int i = 0; i < kD; ++i) {
    const double move = first[i] - x0[i];
    EXPECT_NEAR(move, lr * a(i) / top, 0.5 * lr) << i;
    largest = std::max(largest, std::abs(move));
  }
  EXPECT_NEAR(largest, lr, 1e-6);  // the largest estimated coordinate moves by exactly lr
  const std::vector<float>& third = seen[3 * (2 * kPairs + 1) - 1];
  const std::vector<float>& last = seen.back();
  double last_move = 0;
  for (int i = 0; i < kD; ++i) last_move = std::max(last_move, std::abs(last[i] - third[i]) + 0.0);
  EXPECT_NEAR(last_move, lr / 4, 1e-6);
}

}  // namespace
}  // namespace advbo::attacks
