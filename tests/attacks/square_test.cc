// Square Attack, L_inf (Andriushchenko et al., ECCV 2020, Algorithms 1-2; attacks/square) on a
// linear model (a test of its own): it reaches the closed-form maximum of a linear
// objective over the L_inf ball, through vertices only.
#include "attacks/square/square.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "attacks/linear_model.h"
#include "oracle/oracle.h"

namespace advbo::attacks {
namespace {

// The maximum of a . (x - x0) + m0 over the L_inf ball of radius eps is m0 + eps |a|_1, at the
// vertex x0 + eps sign(a). Square's windows shrink to single pixels after a tenth of the budget
// (p_init 0.8 on 8 x 8: sides 7, 5, 4, ... 1), each setting one pixel to +-eps and kept only
// when the objective rises, so with 3,000 queries every pixel reaches its sign (a pixel stays
// wrong with probability (1 - 1/128)^2700 ~ e^-21). Every query is a vertex of the ball
// (x0 = 0.5: [0, 1] never clips). Accepting a worse candidate, or a window not at +-eps, fails it.
TEST(Square, ReachesTheMaximumOfALinearObjectiveOverTheBallThroughVertices) {
  constexpr int kSide = 8, kD = kSide * kSide;
  const Eigen::VectorXd a = testing::MixedSignWeights(kD, 13);
  const std::vector<float> x0(kD, 0.5f);
  std::vector<std::vector<float>> seen;
  const double m0 = -50.0, eps = 0.05;  // unreachable: m0 + eps |a|_1 ~ -46.8
  auto model = testing::LinearModel(a, x0, m0, kSide, &seen);
  oracle::Referee orc(*model, x0.data(), 0, -1, eps, 3000);
  SquareOptions o;
  o.p_init = 0.8;
  bo::Rng rng(1);
  const AttackResult r = SquareAttack(o).Run(orc, rng, nullptr);
  EXPECT_FALSE(r.success);
  EXPECT_EQ(seen.size(), 3000u);
  for (size_t k = 0; k < seen.size(); ++k)
    for (int i = 0; i < kD; ++i) ASSERT_NEAR(std::abs(seen[k][i] - x0[i]), eps, 1e-6) << k;
  EXPECT_NEAR(r.best_objective, m0 + eps * a.lpNorm<1>(), 1e-4);
  for (int i = 0; i < kD; ++i)
    EXPECT_NEAR(orc.best_image()[i] - x0[i], (a(i) > 0 ? eps : -eps), 1e-6) << i;
}

}  // namespace
}  // namespace advbo::attacks
