// TuRBO's trust region (Eriksson et al., NeurIPS 2019, Sec. 2): expansion, shrinking and
// restart on hand-worked sequences, the lengthscale weights and the clipped box.
#include "bo/trust_region.h"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

namespace advbo::bo {
namespace {

TEST(TrustRegion, DoublesAfterTauSuccImprovementsAndStopsAtLMax) {
  TrustRegion tr;  // L_init 0.8, tau_succ 3
  double best = -1.0;
  for (int k = 0; k < 2; ++k) {
    EXPECT_TRUE(tr.Update(best + 0.5, best, 1, 10));
    best += 0.5;
  }
  EXPECT_DOUBLE_EQ(tr.length(), 0.8);  // two successes: not yet
  EXPECT_TRUE(tr.Update(best + 0.5, best, 1, 10));
  EXPECT_DOUBLE_EQ(tr.length(), 1.6);  // third: doubled
  for (int k = 0; k < 3; ++k) tr.Update(10.0 + k, 9.0 + k, 1, 10);
  EXPECT_DOUBLE_EQ(tr.length(), 1.6);  // capped at L_max
}

TEST(TrustRegion, ImprovementNeedsTheRelativeMargin) {
  TrustRegion tr;
  // y* = -1: an improvement needs y > -1 + 1e-3.
  EXPECT_FALSE(tr.Update(-1.0 + 0.5e-3, -1.0, 1, 10));
  EXPECT_TRUE(tr.Update(-1.0 + 2e-3, -1.0, 1, 10));
  EXPECT_FALSE(tr.Update(-1.0, -1.0, 1, 10));
}

TEST(TrustRegion, HalvesAfterTauFailMissesAndAMissResetsTheSuccessStreak) {
  // Automatic tau_fail = ceil(max(4/q, d/q)): d = 10, q = 1 -> 10; d = 10, q = 4 -> 3.
  TrustRegion tr;
  EXPECT_EQ(tr.failure_tolerance(1, 10), 10);
  EXPECT_EQ(tr.failure_tolerance(4, 10), 3);
  EXPECT_EQ(tr.failure_tolerance(4, 2), 1);
  for (int k = 0; k < 9; ++k) tr.Update(-2.0, -1.0, 1, 10);
  EXPECT_DOUBLE_EQ(tr.length(), 0.8);
  tr.Update(-2.0, -1.0, 1, 10);
  EXPECT_DOUBLE_EQ(tr.length(), 0.4);
  // Success, success, miss, success, success: no expansion (the streak was broken).
  tr.Update(1.0, 0.0, 1, 10);
  tr.Update(2.0, 1.0, 1, 10);
  tr.Update(0.0, 2.0, 1, 10);
  tr.Update(3.0, 2.0, 1, 10);
  tr.Update(4.0, 3.0, 1, 10);
  EXPECT_DOUBLE_EQ(tr.length(), 0.4);
  tr.Update(5.0, 4.0, 1, 10);
  EXPECT_DOUBLE_EQ(tr.length(), 0.8);
}

TEST(TrustRegion, RestartsAtLInitBelowLMin) {
  TrustRegionOptions o;
  o.failure_tolerance = 2;
  TrustRegion tr(o);
  // 0.8 / 2^7 = 0.00625 < 2^-7: the 7th halving restarts; that takes 14 misses.
  for (int k = 0; k < 13; ++k) tr.Update(-2.0, -1.0, 1, 100);
  EXPECT_DOUBLE_EQ(tr.length(), 0.8 / 64);
  EXPECT_EQ(tr.restarts(), 0);
  tr.Update(-2.0, -1.0, 1, 100);
  EXPECT_DOUBLE_EQ(tr.length(), 0.8);
  EXPECT_EQ(tr.restarts(), 1);
}

TEST(TrustRegion, WeightsHaveGeometricMeanOneAndFollowTheLengthscales) {
  const Eigen::VectorXd w = TrustRegion::Weights(Eigen::Vector3d(1.0, 4.0, 0.25));
  EXPECT_NEAR(w.array().log().sum(), 0.0, 1e-12);
  EXPECT_NEAR(w(1) / w(0), 4.0, 1e-12);
  EXPECT_NEAR(w(2) / w(0), 0.25, 1e-12);
  EXPECT_THROW(TrustRegion::Weights(Eigen::VectorXd()), std::invalid_argument);
  EXPECT_THROW(TrustRegion::Weights(Eigen::Vector2d(1.0, 0.0)), std::invalid_argument);
  EXPECT_THROW(TrustRegion::Weights(Eigen::Vector2d(1.0, NAN)), std::invalid_argument);
}

TEST(TrustRegion, BoxIsCenteredScaledAndClippedToTheDomain) {
  TrustRegion tr;  // L = 0.8
  const Eigen::Vector2d lb(-1, -1), ub(1, 1), w(2.0, 0.5);
  Eigen::VectorXd blb, bub;
  tr.Box(Eigen::Vector2d(0.0, 0.0), w, lb, ub, &blb, &bub);
  // Half-widths L * w * width / 2 = 0.8 * 2 * 1 = 1.6 (clipped to 1) and 0.8 * 0.5 = 0.4.
  EXPECT_DOUBLE_EQ(blb(0), -1.0);
  EXPECT_DOUBLE_EQ(bub(0), 1.0);
  EXPECT_DOUBLE_EQ(blb(1), -0.4);
  EXPECT_DOUBLE_EQ(bub(1), 0.4);
  tr.Box(Eigen::Vector2d(0.9, -0.9), Eigen::Vector2d(0.5, 0.5), lb, ub, &blb, &bub);
  EXPECT_DOUBLE_EQ(blb(0), 0.5);
  EXPECT_DOUBLE_EQ(bub(0), 1.0);
  EXPECT_DOUBLE_EQ(blb(1), -1.0);
  EXPECT_DOUBLE_EQ(bub(1), -0.5);
  EXPECT_THROW(tr.Box(Eigen::Vector3d::Zero(), w, lb, ub, &blb, &bub), std::invalid_argument);
}

TEST(TrustRegion, InvalidOptionsAreRefused) {
  auto refuse = [](auto mutate) {
    TrustRegionOptions o;
    mutate(&o);
    EXPECT_THROW(TrustRegion{o}, std::invalid_argument);
  };
  refuse([](TrustRegionOptions* o) { o->length_init = 0.0; });
  refuse([](TrustRegionOptions* o) { o->length_init = -0.5; });
  refuse([](TrustRegionOptions* o) { o->length_init = 2.0; });  // above L_max
  refuse([](TrustRegionOptions* o) { o->length_min = NAN; });
  refuse([](TrustRegionOptions* o) { o->length_max = INFINITY; });
  refuse([](TrustRegionOptions* o) { o->success_tolerance = 0; });
  refuse([](TrustRegionOptions* o) { o->failure_tolerance = -1; });
  refuse([](TrustRegionOptions* o) { o->improvement = -1e-3; });
  EXPECT_THROW(TrustRegion().Update(0.0, 0.0, 0, 1), std::invalid_argument);
}

}  // namespace
}  // namespace advbo::bo
