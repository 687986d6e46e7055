// TuRBO's trust region (Eriksson et al., NeurIPS 2019, Sec. 2): expansion, shrinking and
// restart on hand-worked sequences, the lengthscale weights and the clipped box.
#include "bo/trust_region.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

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

// Fraction of the rows of z [M, 2] in the sub-box [lo, hi] (each [2]).
double FractionIn(const Eigen::MatrixXd& z, const Eigen::Vector2d& lo, const Eigen::Vector2d& hi) {
  long in = 0;
  for (Eigen::Index c = 0; c < z.rows(); ++c)
    in += z(c, 0) >= lo(0) && z(c, 0) <= hi(0) && z(c, 1) >= lo(1) && z(c, 1) <= hi(1);
  return static_cast<double>(in) / z.rows();
}

Eigen::MatrixXd UniformIn(int m, const Eigen::Vector2d& lo, const Eigen::Vector2d& hi, Rng& rng) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  Eigen::MatrixXd z(m, 2);
  for (int c = 0; c < m; ++c)
    for (int i = 0; i < 2; ++i) z(c, i) = lo(i) + (hi(i) - lo(i)) * u(rng);
  return z;
}

TEST(MoveUniformSample, SameVolumeShiftKeepsExactlyTheRowsInTheOverlap) {
  Rng rng(3);
  const Eigen::Vector2d lo0(0, 0), hi0(1, 1), lo1(0.4, -0.2), hi1(1.4, 0.8);
  Eigen::MatrixXd z = UniformIn(2000, lo0, hi0, rng);
  const Eigen::MatrixXd before = z;
  const std::vector<int> redrawn = MoveUniformSample(&z, lo0, hi0, lo1, hi1, rng);
  std::vector<int> outside;
  for (int c = 0; c < z.rows(); ++c) {
    const bool in_overlap = before(c, 0) >= 0.4 && before(c, 1) <= 0.8;
    if (!in_overlap) outside.push_back(c);
    if (in_overlap) EXPECT_EQ(z.row(c), before.row(c));
    EXPECT_TRUE(z(c, 0) >= 0.4 && z(c, 0) <= 1.4 && z(c, 1) >= -0.2 && z(c, 1) <= 0.8) << c;
  }
  EXPECT_EQ(redrawn, outside);  // |I| = 0.48: about 1040 rows redrawn, all of B' \ I
  for (int c : redrawn)
    EXPECT_FALSE(z(c, 0) <= 1.0 && z(c, 1) >= 0.0) << "a redrawn row landed in the overlap";
}

TEST(MoveUniformSample, ResultIsUniformOnTheNewBoxWhenItShrinksOrGrows) {
  // Large samples: the new box's cells must hold their volume share (within 5 standard
  // errors), and the redrawn count must be M (1 - |I| / max(|B|, |B'|)).
  const int m = 200000;
  struct Case {
    Eigen::Vector2d lo1, hi1;
    double overlap_share;  // |I| / max(|B|, |B'|)
  };
  const Eigen::Vector2d lo0(0, 0), hi0(1, 1);
  const std::vector<Case> cases = {
      {{0.5, 0.25}, {1.0, 0.75}, 0.25},  // shrinks inside B: I = B', |I| / |B| = 1/4
      {{0.6, 0.5}, {1.6, 1.0}, 0.20},    // half the area, partly outside: I = 0.4 x 0.5
      {{-0.5, 0.0}, {1.5, 2.0}, 0.25}};  // grows: |B'| = 4, I = B
  Rng rng(5);
  for (const Case& cs : cases) {
    Eigen::MatrixXd z = UniformIn(m, lo0, hi0, rng);
    const std::vector<int> redrawn = MoveUniformSample(&z, lo0, hi0, cs.lo1, cs.hi1, rng);
    const double p_redrawn = 1.0 - cs.overlap_share;
    EXPECT_NEAR(static_cast<double>(redrawn.size()) / m, p_redrawn,
                5 * std::sqrt(p_redrawn * (1 - p_redrawn) / m));
    EXPECT_TRUE(std::is_sorted(redrawn.begin(), redrawn.end()));
    const Eigen::Vector2d w = cs.hi1 - cs.lo1;
    for (int a = 0; a < 4; ++a)
      for (int b = 0; b < 4; ++b) {  // 16 cells of the new box, 1/16 of the rows each
        const Eigen::Vector2d lo(cs.lo1(0) + w(0) * a / 4, cs.lo1(1) + w(1) * b / 4);
        const Eigen::Vector2d hi = lo + w / 4;
        EXPECT_NEAR(FractionIn(z, lo, hi), 1.0 / 16, 5 * std::sqrt(1.0 / 16 * 15 / 16 / m))
            << "cell " << a << "," << b << " of the box from " << cs.lo1.transpose();
      }
    EXPECT_DOUBLE_EQ(FractionIn(z, cs.lo1, cs.hi1), 1.0);
  }
}

TEST(MoveUniformSample, DisjointBoxesRedrawEveryRowAndBadBoxesAreRejected) {
  Rng rng(9);
  const Eigen::Vector2d lo0(0, 0), hi0(1, 1), lo1(2, 2), hi1(3, 3);
  Eigen::MatrixXd z = UniformIn(100, lo0, hi0, rng);
  EXPECT_EQ(MoveUniformSample(&z, lo0, hi0, lo1, hi1, rng).size(), 100u);
  EXPECT_DOUBLE_EQ(FractionIn(z, lo1, hi1), 1.0);
  EXPECT_THROW(MoveUniformSample(&z, lo0, hi0, lo1, Eigen::Vector2d(3, 2), rng),
               std::invalid_argument);
  EXPECT_THROW(
      MoveUniformSample(&z, lo0, hi0, Eigen::VectorXd::Zero(3), Eigen::VectorXd::Ones(3), rng),
      std::invalid_argument);
}

}  // namespace
}  // namespace advbo::bo
