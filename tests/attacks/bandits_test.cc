// Bandits-TD (Ilyas, Engstrom & Madry, ICLR 2019, Algorithms 1-3; attacks/bandits) against a
// linear model, whose objective over the L_inf ball has a closed-form maximiser (
// Bandits had no test of its own).
#include "attacks/bandits/bandits.h"

#include <gtest/gtest.h>

#include <vector>

#include "attacks/linear_model.h"
#include "oracle/oracle.h"

namespace advbo::attacks {
namespace {

// A linear objective a . x over the ball |x - x0|_inf <= eps is largest at the vertex
// x0 + eps sign(a), where it gains eps |a|_1. Bandits' time prior, learnt from finite
// differences, must steer its signed steps there: within 600 queries (200 steps of 3) its best
// image sits at that vertex on nearly every pixel and gains nearly eps |a|_1. The online rate
// is 0.1 here, so that the prior accumulates evidence over steps: the default 100 (for CIFAR-10's
// 3,072 values) saturates the prior at +-1 on every step on 64 values (measured over 5 seeds:
// gain 47 % of eps |a|_1 at 100, 86-94 % at 0.1-10 with exploration 10). A sign error in the
// finite difference or the prior's update walks away from the vertex (the gain falls below 0).
TEST(Bandits, SignedStepsClimbALinearObjectiveToTheBallsBestVertex) {
  constexpr int kSide = 8, kD = kSide * kSide;
  const Eigen::VectorXd a = testing::MixedSignWeights(kD, 11);
  const std::vector<float> x0(kD, 0.5f);
  auto model = testing::LinearModel(a, x0, -50.0, kSide, nullptr);  // never a success
  const double eps = 0.05;
  oracle::Referee orc(*model, x0.data(), 0, -1, eps, 600);
  bo::Rng rng(2);
  BanditsOptions o;
  o.online_lr = 0.1;
  const AttackResult r = BanditsAttack(o).Run(orc, rng, nullptr);
  EXPECT_FALSE(r.success);
  EXPECT_EQ(orc.queries(), 600);
  const double best_gain = eps * a.lpNorm<1>();
  EXPECT_GT(r.best_objective + 50.0, 0.85 * best_gain) << "gain " << r.best_objective + 50.0;
  int at_vertex = 0;
  for (int i = 0; i < kD; ++i)
    at_vertex += std::abs(r.adversarial[i] - (x0[i] + (a(i) > 0 ? eps : -eps))) < 1e-6;
  EXPECT_GE(at_vertex, 0.85 * kD);
}

}  // namespace
}  // namespace advbo::attacks
