// bo-hl (this project's BO hard-label attack; attacks/bo_hard_label) on a linear
// decision boundary, whose L_inf distance from the clean image has a closed form (a
// test of its own).
#include "attacks/bo_hard_label/bo_hard_label.h"

#include <gtest/gtest.h>

#include <vector>

#include "attacks/linear_model.h"
#include "oracle/oracle.h"

namespace advbo::attacks {
namespace {

constexpr int kSide = 4, kD = kSide * kSide;

struct BoHlRun {
  double closest;        // -m0 / |a|_1, the closed-form L_inf distance to the boundary
  double after_bo;       // the BO stage's best radius
  double best_distance;  // the closest adversarial query of the whole run
};

BoHlRun RunBoHl(const BoHardLabelOptions& o, long budget) {
  const Eigen::VectorXd a = testing::MixedSignWeights(kD, 7);
  const std::vector<float> x0(kD, 0.5f);
  auto model = testing::LinearModel(a, x0, -1.0, kSide, nullptr);
  oracle::Referee orc(*model, x0.data(), 0, -1, 0.01, budget);  // a ball it cannot reach
  orc.set_feedback_type(oracle::Feedback::kLabel);
  bo::Rng rng(1);
  const AttackResult r = BoHardLabelAttack(o).Run(orc, rng, nullptr);
  EXPECT_FALSE(r.success);
  return {1.0 / a.lpNorm<1>(), r.details["bo_hl_radius_after_bo"].get<double>(),
          orc.best_distance()};
}

// The BO stage alone (side 4 on a 4 x 4 image: the direction space is every vertex direction,
// 2^16 of them), 150 queries: its GP over sign vectors must end within 2.2x the closed-form
// radius and below its start (all +1, RayS' start: |a|_1 / sum(a) = 2.96x here). Measured:
// 1.86x after 110 directions; with the confidence bound's argmin turned into an argmax it stays
// at 3.41x. (Plain random vertices do better on this boundary -- the best of 110 is about 1.6x
// -- since a non-improving direction is observed only as censored at the best radius and one
// without a boundary inside radius 1 not at all; recorded for bo-hl's L2 mode.)
TEST(BoHardLabel, BoStageImprovesOnItsStartTowardsTheBestVertexDirection) {
  BoHardLabelOptions o;
  o.bo_fraction = 1.0;
  const BoHlRun run = RunBoHl(o, 150);
  const Eigen::VectorXd a = testing::MixedSignWeights(kD, 7);
  const double start = a.lpNorm<1>() / a.sum();  // the all +1 direction's radius / closest
  ASSERT_GT(start, 2.5);
  EXPECT_GE(run.after_bo, run.closest * (1 - 1e-6));
  EXPECT_LT(run.after_bo, 2.2 * run.closest) << run.after_bo / run.closest << "x";
  EXPECT_LT(run.after_bo / run.closest, start);
}

// The whole attack (BO for 100 queries, then RayS' search, then HopSkipJump; 600 queries) ends
// within RayS' tolerance (1e-3) of the closed-form distance: sign(a) is the best L_inf
// direction, so nothing can do better, and the hierarchical search reaches it from the BO
// stage's best.
TEST(BoHardLabel, EndsAtTheClosedFormLinfDistanceToALinearBoundary) {
  BoHardLabelOptions o;
  o.bo_max_queries = 100;
  const BoHlRun run = RunBoHl(o, 600);
  EXPECT_GE(run.best_distance, run.closest * (1 - 1e-5));
  EXPECT_LE(run.best_distance, run.closest + 1e-3);
}

}  // namespace
}  // namespace advbo::attacks
