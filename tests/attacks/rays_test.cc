// RayS (Chen & Gu, KDD 2020, Algorithms 1-2; attacks/rays) on a linear decision boundary, whose
// L_inf distance from the clean image has a closed form (a test of its own).
#include "attacks/rays/rays.h"

#include <gtest/gtest.h>

#include <vector>

#include "attacks/linear_model.h"
#include "oracle/oracle.h"

namespace advbo::attacks {
namespace {

// The boundary a . (x - x0) + m0 = 0 lies at L_inf distance -m0 / |a|_1 from x0, reached along
// the vertex direction sign(a) (x0 = 0.5 and a distance ~ 0.06: [0, 1] never clips). On a
// linear boundary flipping a wrong sign always shortens the ray's boundary radius and flipping
// a right one lengthens it, so RayS' hierarchical search holds sign(a) after its single-pixel
// level (1 + 2 + 4 + 8 + 16 searches) and its binary search ends within the tolerance above
// the closed form. Keeping a worse direction, or a binary search that keeps the wrong end, fails
// it.
TEST(Rays, ReachesTheClosedFormLinfDistanceToALinearBoundary) {
  constexpr int kSide = 4, kD = kSide * kSide;
  const Eigen::VectorXd a = testing::MixedSignWeights(kD, 7);
  const std::vector<float> x0(kD, 0.5f);
  auto model = testing::LinearModel(a, x0, -1.0, kSide, nullptr);
  const double closest = 1.0 / a.lpNorm<1>();
  oracle::Referee orc(*model, x0.data(), 0, -1, 0.01, 1000);  // a ball it cannot reach
  orc.set_feedback_type(oracle::Feedback::kLabel);
  RaysOptions o;
  o.tolerance = 1e-5;
  bo::Rng rng(1);
  const AttackResult r = RaysAttack(o).Run(orc, rng, nullptr);
  EXPECT_FALSE(r.success);
  EXPECT_EQ(orc.queries(), 1000);
  EXPECT_GE(orc.best_distance(), closest * (1 - 1e-5));  // no adversarial image is closer
  EXPECT_LE(orc.best_distance(), closest + o.tolerance * (1 + 1e-3));
  EXPECT_NEAR(r.details["rays_radius"].get<double>(), orc.best_distance(), 1e-6);
}

}  // namespace
}  // namespace advbo::attacks
