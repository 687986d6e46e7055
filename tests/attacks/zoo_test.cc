// ZOO-ADAM (Chen et al., AISec 2017, Algorithm 2; attacks/zoo) on a linear model, whose
// coordinate derivatives are known in closed form (a test of its own).
#include "attacks/zoo/zoo.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "attacks/linear_model.h"
#include "oracle/oracle.h"

namespace advbo::attacks {
namespace {

// With 2 classes and logits (0, z) the C&W loss of class 0 is f = log p_0 - log p_1 = -z
// (kappa = 0, z < 0), so ZOO's symmetric difference of c f + |x - x0|^2 at x = x0 is exactly
// -c a_i on coordinate i, and ADAM's first step (m / sqrt(v) = sign after bias correction) moves
// every coordinate by the learning rate along sign(a_i). With `coordinates` = d one round probes
// every coordinate (2 d queries); the next round's two probes of one coordinate average to the
// new image. A sign error in the difference or the update fails it.
TEST(Zoo, FirstAdamStepMovesEachCoordinateByTheLearningRateAlongTheGradientSign) {
  constexpr int kSide = 4, kD = kSide * kSide;
  const Eigen::VectorXd a = testing::MixedSignWeights(kD, 5);
  const std::vector<float> x0(kD, 0.5f);
  std::vector<std::vector<float>> seen;
  auto model = testing::LinearModel(a, x0, -50.0, kSide, &seen);  // unreachable
  oracle::Referee orc(*model, x0.data(), 0, -1, 0.05, 4 * kD);
  ZooOptions o;
  o.coordinates = kD;
  bo::Rng rng(3);
  const AttackResult r = ZooAttack(o).Run(orc, rng, nullptr);
  EXPECT_FALSE(r.success);
  ASSERT_EQ(seen.size(), static_cast<size_t>(4 * kD));
  for (size_t k = 0; k < 2 * kD; k += 2) {  // round 1: pairs x0 +- h e_i, one per coordinate
    int moved = 0;
    for (int i = 0; i < kD; ++i) {
      EXPECT_NEAR(seen[k][i] + seen[k + 1][i], 2 * x0[i], 1e-6);
      moved += seen[k][i] != x0[i];
    }
    EXPECT_EQ(moved, 1) << k;
  }
  for (int i = 0; i < kD; ++i) {
    const double x1 = 0.5 * (seen[2 * kD][i] + seen[2 * kD + 1][i]);  // round 2's image
    EXPECT_NEAR(x1 - x0[i], (a(i) > 0 ? 1 : -1) * o.learning_rate, 1e-6) << i;
  }
}

}  // namespace
}  // namespace advbo::attacks
