// The parsimonious attack (Moon, An & Song, ICML 2019, Algorithms 1-3; attacks/parsimonious)
// against a linear model: on a linear (modular) set function lazy greedy insertion and deletion
// are exact, so the attack must end at the objective's best vertex of the L_inf ball (issue
// #57: a test of its own).
#include "attacks/parsimonious/parsimonious.h"

#include <gtest/gtest.h>

#include <vector>

#include "attacks/linear_model.h"
#include "oracle/oracle.h"

namespace advbo::attacks {
namespace {

// Blocks of 4, 2 and then 1 pixel: once the blocks are single pixels, a pixel is at +eps
// exactly when its a_i is positive -- the vertex x0 + eps sign(a), gain eps |a|_1 -- and no
// query leaves the ball's vertices.
TEST(Parsimonious, LazyGreedyEndsAtTheBestVertexOfALinearObjective) {
  constexpr int kSide = 8, kD = kSide * kSide;
  const Eigen::VectorXd a = testing::MixedSignWeights(kD, 9);
  const std::vector<float> x0(kD, 0.5f);
  std::vector<std::vector<float>> seen;
  auto model = testing::LinearModel(a, x0, -50.0, kSide, &seen);  // never a success
  const double eps = 0.05;
  oracle::Referee orc(*model, x0.data(), 0, -1, eps, 2000);
  bo::Rng rng(4);
  const AttackResult r = ParsimoniousAttack().Run(orc, rng, nullptr);
  for (const auto& q : seen)
    for (int i = 0; i < kD; ++i) ASSERT_NEAR(std::abs(q[i] - x0[i]), eps, 1e-6);
  for (int i = 0; i < kD; ++i)
    EXPECT_FLOAT_EQ(r.adversarial[i], static_cast<float>(x0[i] + (a(i) > 0 ? eps : -eps))) << i;
  EXPECT_NEAR(r.best_objective, -50.0 + eps * a.lpNorm<1>(), 1e-4);
}

}  // namespace
}  // namespace advbo::attacks
