// PO-GP-UCB (Kharkovskii et al. 2020): the paper's printed numbers (omega, sigma_min of the
// synthetic grid, the r the guideline picks, beta_t), Algorithm 1's two branches against their
// definitions, the modeler's dependence on distances only (an orthonormal projection picks the
// non-private indices) and the reconstruction of hidden records from d + 1 known ones.
#include "algorithms/po_gp_ucb/po_gp_ucb.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <vector>

#include "bo/grid_sample.h"

namespace advbo::algorithms {
namespace {

// The paper's synthetic inputs: a 100 x 100 uniform grid, centred and scaled to max-norm 25.
Eigen::MatrixXd Grid(int k) {
  Eigen::MatrixXd x(k * k, 2);
  for (int i = 0; i < k; ++i)
    for (int j = 0; j < k; ++j) x.row(i * k + j) << i, j;
  return NormalizeMaxNorm(x, 25.0);
}

Eigen::MatrixXd RandomRecords(int n, int d, bo::Rng& rng) {
  std::normal_distribution<double> g(0, 1);
  Eigen::MatrixXd x(n, d);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < d; ++j) x(i, j) = 3 * g(rng) + j;
  return x;
}

TEST(PoGpUcb, PrivacyThresholdMatchesTheIssueNumbers) {
  EXPECT_NEAR(PrivacyThreshold(10, std::exp(1.1), 1e-5), 976.07, 0.01);
  EXPECT_NEAR(PrivacyThreshold(15, std::exp(1.3), 1e-5), 1002.66, 0.01);
  EXPECT_NEAR(PrivacyThreshold(20, std::exp(1.5), 1e-5), 963.95, 0.01);
  EXPECT_THROW(PrivacyThreshold(0, 1.0, 1e-5), std::invalid_argument);
  EXPECT_THROW(PrivacyThreshold(10, -1.0, 1e-5), std::invalid_argument);
  EXPECT_THROW(PrivacyThreshold(10, 1.0, 1.0), std::invalid_argument);
}

TEST(PoGpUcb, SyntheticGridSigmaMinAndChosenR) {
  const Eigen::MatrixXd x = Grid(100);
  EXPECT_NEAR(x.rowwise().norm().maxCoeff(), 25.0, 1e-9);
  const double s = SmallestSingularValue(CenterColumns(x));
  EXPECT_NEAR(s, 1030.88, 0.01);
  EXPECT_EQ(ChooseProjectionDim(s, std::exp(1.1), 1e-5), 10);
  EXPECT_EQ(ChooseProjectionDim(s, std::exp(1.3), 1e-5), 15);
  EXPECT_EQ(ChooseProjectionDim(s, std::exp(1.5), 1e-5), 20);
  EXPECT_EQ(ChooseProjectionDim(s, std::exp(0.0), 1e-5), 0);  // no r qualifies
  EXPECT_THROW(ChooseProjectionDim(s, 1.0, 1e-5, {}), std::invalid_argument);
}

TEST(PoGpUcb, BetaScheduleOfAlgorithm2) {
  const Eigen::MatrixXd z = Eigen::MatrixXd::Random(10000, 2);
  const bo::BoLoopOptions o = ModelerLoopOptions(z, bo::BoLoopOptions{}, ModelerOptions{});
  EXPECT_NEAR(o.beta.Beta(1, 2, 1e4), 26.79, 0.005);
  EXPECT_NEAR(o.beta.Beta(50, 2, 1e4), 42.44, 0.005);
  EXPECT_FALSE(o.ard);
  EXPECT_EQ(o.acquisition, bo::AcquisitionKind::kUcb);
  ModelerOptions bad;
  bad.delta_prime = 0;
  EXPECT_THROW(ModelerLoopOptions(z, bo::BoLoopOptions{}, bad), std::invalid_argument);
}

// "if" branch: Z = r^{-1/2} X M exactly, with M the next d * r normals of the engine.
TEST(PoGpUcb, ReleaseIfBranchIsTheScaledProjection) {
  bo::Rng rng(1);
  const Eigen::MatrixXd x = RandomRecords(40, 3, rng) * 1e5;  // sigma_min far above omega
  CuratorOptions o{std::exp(1.0), 1e-3, 7};
  bo::Rng a(5), b(5);
  const CuratorRelease rel = ReleaseDataset(x, o, a);
  ASSERT_FALSE(rel.lifted);
  EXPECT_GE(rel.sigma_min, rel.omega);
  Eigen::MatrixXd m(3, 7);
  std::normal_distribution<double> g(0, 1);
  for (int j = 0; j < 7; ++j)
    for (int i = 0; i < 3; ++i) m(i, j) = g(b);
  const Eigen::MatrixXd expect = CenterColumns(x) * m / std::sqrt(7.0);
  EXPECT_LT((rel.z - expect).norm(), 1e-9 * expect.norm());
}

// "else" branch: X~ = U sqrt(S^2 + omega^2) V^T, so X~^T X~ = X^T X + omega^2 I (n >= d), and
// X~ is recovered from Z through the same M.
TEST(PoGpUcb, ReleaseElseBranchLiftsEverySingularValue) {
  bo::Rng rng(2);
  const Eigen::MatrixXd x = RandomRecords(30, 3, rng);
  CuratorOptions o{1.0, 1e-5, 6};
  bo::Rng a(9), b(9);
  const CuratorRelease rel = ReleaseDataset(x, o, a);
  ASSERT_TRUE(rel.lifted);
  Eigen::MatrixXd m(3, 6);
  std::normal_distribution<double> g(0, 1);
  for (int j = 0; j < 6; ++j)
    for (int i = 0; i < 3; ++i) m(i, j) = g(b);
  const Eigen::MatrixXd pinv = m.transpose() * (m * m.transpose()).inverse();  // M M+ = I
  const Eigen::MatrixXd xt = std::sqrt(6.0) * rel.z * pinv;
  const Eigen::MatrixXd xc = CenterColumns(x);
  const Eigen::MatrixXd expect =
      xc.transpose() * xc + rel.omega * rel.omega * Eigen::MatrixXd::Identity(3, 3);
  EXPECT_LT((xt.transpose() * xt - expect).norm(), 1e-8 * expect.norm());
  EXPECT_NEAR(SmallestSingularValue(xt),
              std::sqrt(rel.sigma_min * rel.sigma_min + rel.omega * rel.omega), 1e-6 * rel.omega);
}

TEST(PoGpUcb, ReleaseIsReproducibleAndValidated) {
  bo::Rng rng(3);
  const Eigen::MatrixXd x = RandomRecords(20, 2, rng);
  bo::Rng a(4), b(4);
  EXPECT_EQ(ReleaseDataset(x, {}, a).z, ReleaseDataset(x, {}, b).z);
  bo::Rng c(4);
  EXPECT_THROW(ReleaseDataset(x, {-1.0, 1e-5, 10}, c), std::invalid_argument);
  EXPECT_THROW(ReleaseDataset(x, {1.0, 1e-5, 0}, c), std::invalid_argument);
  Eigen::MatrixXd bad = x;
  bad(3, 1) = std::nan("");
  EXPECT_THROW(ReleaseDataset(bad, {}, c), std::invalid_argument);
}

// The privacy caveat of the issue: d + 1 known records and their released rows reveal every
// other record, in both branches.
TEST(PoGpUcb, DPlusOneKnownRecordsRevealTheRest) {
  for (double eps : {1.0, 1e9}) {  // lifted, not lifted
    bo::Rng rng(6);
    const int n = 25, d = 3;
    const Eigen::MatrixXd x = RandomRecords(n, d, rng) * (eps > 1 ? 1.0 : 1e6);
    bo::Rng curator(7);
    const CuratorRelease rel = ReleaseDataset(x, {eps, 1e-5, 8}, curator);
    const Eigen::MatrixXd rec =
        ReconstructRecords(x.topRows(d + 1), rel.z.topRows(d + 1), rel.z.bottomRows(n - d - 1));
    EXPECT_LT((rec - x.bottomRows(n - d - 1)).cwiseAbs().maxCoeff(), 1e-6 * x.cwiseAbs().maxCoeff())
        << "epsilon " << eps;
  }
  const Eigen::MatrixXd k = Eigen::MatrixXd::Random(3, 3);
  EXPECT_THROW(ReconstructRecords(k, Eigen::MatrixXd::Random(3, 5), Eigen::MatrixXd::Random(1, 5)),
               std::invalid_argument);  // only d known records
  Eigen::MatrixXd collinear(4, 3);
  collinear << 0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3;
  EXPECT_THROW(
      ReconstructRecords(collinear, Eigen::MatrixXd::Random(4, 5), Eigen::MatrixXd::Random(1, 5)),
      std::invalid_argument);
}

// GP-UCB over the released rows sees the records only through distances: rotating the records
// by an orthonormal matrix (a distance-preserving projection) gives the non-private run's
// indices exactly, with the same fixed isotropic kernel in record units.
TEST(PoGpUcb, OrthonormalProjectionPicksTheNonPrivateIndices) {
  const int k = 30;
  const Eigen::MatrixXd x = Grid(k);
  Eigen::VectorXd axis(k);
  for (int i = 0; i < k; ++i) axis(i) = x(i * k, 0);
  bo::Rng frng(11);
  const Eigen::MatrixXd f = bo::SampleGpOnGrid(axis, axis, 8.0, 1.0, frng);
  auto evaluate = [&](int i) { return f(i / k, i % k); };
  const Eigen::MatrixXd q =
      Eigen::HouseholderQR<Eigen::MatrixXd>(Eigen::MatrixXd::Random(2, 2)).householderQ() *
      Eigen::MatrixXd::Identity(2, 2);
  auto run = [&](const Eigen::MatrixXd& z) {
    bo::BoLoopOptions base;
    base.goal = bo::Goal::kMaximize;
    base.budget = 25;
    base.initial_points = 2;
    base.kernel = bo::KernelFamily::kSquaredExponential;
    base.fit_hyperparameters = false;
    base.standardize = false;
    base.noise_variance = 1e-5;
    const auto [lb, ub] = ModelerBox(z);
    base.initial_lengthscales = Eigen::VectorXd::Constant(1, 8.0 / (ub(0) - lb(0)));
    const bo::BoLoopOptions o = ModelerLoopOptions(z, base, ModelerOptions{});
    bo::Rng rng(13);
    std::vector<int> idx;
    for (const auto& s : RunPoGpUcb(z, evaluate, o, rng).steps) idx.push_back(s.extra["index"]);
    return idx;
  };
  const std::vector<int> plain = run(x), rotated = run(x * q);
  ASSERT_EQ(plain.size(), 25u);
  EXPECT_EQ(plain, rotated);
  double best = -1e300;
  for (int i : plain) best = std::max(best, evaluate(i));
  std::vector<double> all(f.data(), f.data() + f.size());
  std::sort(all.begin(), all.end());
  EXPECT_GE(best, all[all.size() * 95 / 100]);  // and it optimises: a top-5 % cell of 900
}

}  // namespace
}  // namespace advbo::algorithms
