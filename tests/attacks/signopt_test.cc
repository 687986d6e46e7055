// Sign-OPT (Cheng et al., ICLR 2020, Algorithm 1; attacks/signopt) against a linear decision
// boundary, whose L2 distance from the clean image has a closed form (Sign-OPT had
// no test of its own).
#include "attacks/signopt/signopt.h"

#include <gtest/gtest.h>

#include <vector>

#include "attacks/linear_model.h"
#include "oracle/oracle.h"

namespace advbo::attacks {
namespace {

// The boundary a . (x - x0) + m0 = 0 lies at L2 distance -m0 / |a|_2 from x0, along a: no
// adversarial image is closer (a lower bound every query respects), and Sign-OPT's direction
// search must approach it: from its first adversarial direction (about 7x that distance here)
// to within 5 % in 10,000 queries (measured: 1.20x at 1,000, 1.12x at 3,000, 1.036x at
// 10,000, 1.013x at 30,000). A sign error in its gradient estimate or line search leaves it
// far off.
TEST(SignOpt, ApproachesTheClosedFormDistanceToALinearBoundary) {
  constexpr int kSide = 4, kD = kSide * kSide;
  const Eigen::VectorXd a = testing::MixedSignWeights(kD, 7);
  const std::vector<float> x0(kD, 0.5f);
  auto model = testing::LinearModel(a, x0, -1.0, kSide, nullptr);
  const double closest = 1.0 / a.norm();  // ~0.24: inside [0, 1] around x0 = 0.5
  oracle::Referee orc(*model, x0.data(), 0, -1, 0.01, 10000);  // a ball it cannot reach
  orc.set_norm(oracle::Norm::kL2);
  orc.set_feedback_type(oracle::Feedback::kLabel);
  bo::Rng rng(1);
  const AttackResult r = SignOptAttack().Run(orc, rng, nullptr);
  EXPECT_FALSE(r.success);
  const auto& trace = orc.distance_trace();
  ASSERT_FALSE(trace.empty());
  EXPECT_GE(orc.best_distance(), closest * (1 - 1e-4));  // no adversarial image is closer
  EXPECT_GT(trace.front().second, 2 * closest);          // the random start is far off
  EXPECT_LT(orc.best_distance(), 1.05 * closest)
      << "start " << trace.front().second / closest << "x, end " << orc.best_distance() / closest
      << "x";
}

}  // namespace
}  // namespace advbo::attacks
