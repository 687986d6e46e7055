// RM-GP-UCB pieces (Dai 2021 thesis, Ch. 7): the meta-weights of eq. 7.4 against a brute-force
// minimiser of the FTRL objective (7.3), the gap estimates and the nu schedule against closed
// forms, and the acquisition of eq. 7.1 (nu = 0 is GP-UCB exactly; gradients by finite
// differences).
#include "algorithms/rm_gp_ucb/rm_gp_ucb.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>

#include "bo/acquisition_optimizer.h"
#include "bo/kernel.h"

namespace advbo::algorithms {
namespace {

bo::ExactGP RandomGp(int n, int d, double shift, bo::Rng& rng) {
  std::uniform_real_distribution<double> u(0, 1);
  Eigen::MatrixXd x(n, d);
  Eigen::VectorXd y(n);
  for (int i = 0; i < n; ++i) {
    for (int k = 0; k < d; ++k) x(i, k) = u(rng);
    y(i) = std::sin(6 * x(i, 0)) + (d > 1 ? x(i, 1) : 0.0) + shift;
  }
  bo::ExactGP gp(std::make_unique<bo::StationaryKernel>(bo::KernelFamily::kSquaredExponential, d,
                                                        false, std::vector<int>{}, 0.2, 1.0),
                 1e-2);
  gp.SetData(x, y);
  return gp;
}

TEST(RmGpUcb, MetaWeightsAreUniformAtFirstAndMinimiseTheFtrlObjective) {
  EXPECT_TRUE(
      MetaWeights(Eigen::VectorXd::Zero(4), 1.0).isApprox(Eigen::VectorXd::Constant(4, 0.25)));
  // (7.3) for M = 3: sum_i w_i L_i + (1/eta) sum_i w_i log w_i over the simplex, by brute force.
  const Eigen::Vector3d loss(0.7, 2.1, 1.3);
  const double eta = 1.5;
  auto objective = [&](double a, double b) {
    const double c = 1 - a - b;
    double f = a * loss(0) + b * loss(1) + c * loss(2);
    for (double w : {a, b, c})
      if (w > 0) f += w * std::log(w) / eta;
    return f;
  };
  double best = 1e300, ba = 0, bb = 0;
  const int steps = 1000;
  for (int i = 0; i <= steps; ++i)
    for (int j = 0; i + j <= steps; ++j) {
      const double f = objective(i / double(steps), j / double(steps));
      if (f < best) best = f, ba = i / double(steps), bb = j / double(steps);
    }
  const Eigen::VectorXd w = MetaWeights(loss, eta);
  EXPECT_NEAR(w(0), ba, 2e-3);
  EXPECT_NEAR(w(1), bb, 2e-3);
  EXPECT_LE(objective(w(0), w(1)), best + 1e-12);  // the closed form is at least as good
  EXPECT_NEAR(w.sum(), 1.0, 1e-15);
  // Huge losses neither overflow nor underflow to NaN; the smallest loss wins.
  const Eigen::VectorXd big = MetaWeights(Eigen::Vector3d(1e6, 1e6 + 1, 5e6), 1.0);
  EXPECT_TRUE(big.allFinite());
  EXPECT_NEAR(big(0), 1 / (1 + std::exp(-1.0)), 1e-12);
  EXPECT_THROW(MetaWeights(Eigen::VectorXd(), 1.0), std::invalid_argument);
  EXPECT_THROW(MetaWeights(loss, -1.0), std::invalid_argument);
}

TEST(RmGpUcb, GapEstimatesAreMeanOrMaxOfTheConfidenceViolations) {
  const Eigen::Vector3d y(1.0, 0.0, 5.0), up(2.0, 0.5, 3.0), lo(0.0, -0.5, 1.0);
  // max(|y-U|, |y-L|) = (1, 0.5, 4)
  EXPECT_NEAR(GapEstimate(y, up, lo), (1 + 0.5 + 4) / 3.0, 1e-15);
  EXPECT_NEAR(GapEstimate(y, up, lo, false), 4.0, 1e-15);
  EXPECT_THROW(GapEstimate(y, up, Eigen::Vector2d(0, 0)), std::invalid_argument);
}

TEST(RmGpUcb, NuScheduleHasItsClosedFormForAConstantWeightedGap) {
  for (double gap : {0.5, 1.0, 4.0, 10.0}) {
    const double c = std::min(0.7, std::pow(gap, -0.7));
    double nu = 1.0;  // nu_1
    for (int t = 2; t <= 12; ++t) {
      nu = NextNu(nu, gap, 0.7, 0.7);
      EXPECT_NEAR(nu, std::pow(c, t - 1), 1e-14) << "gap " << gap << " t " << t;
    }
  }
  EXPECT_NEAR(NextNu(0.5, 0.0, 0.7, 0.7), 0.35, 1e-15);
  EXPECT_THROW(NextNu(1.5, 1, 0.7, 0.7), std::invalid_argument);
  EXPECT_THROW(NextNu(1, 1, 1.0, 0.7), std::invalid_argument);
  EXPECT_THROW(NextNu(1, 1, 0.7, 0.0), std::invalid_argument);
}

TEST(RmGpUcb, AcquisitionCombinesTheUcbsAndIsGpUcbAtNuZero) {
  bo::Rng rng(3);
  const bo::ExactGP target = RandomGp(6, 2, 0.0, rng);
  const bo::ExactGP m1 = RandomGp(20, 2, 0.1, rng), m2 = RandomGp(20, 2, 3.0, rng);
  const std::vector<const bo::ExactGP*> metas = {&m1, &m2};
  const Eigen::Vector2d w(0.8, 0.2);
  const double beta = 4.0, tau = 2.0, nu = 0.6;
  const MetaUcbAcquisition acq(target, metas, w, nu, beta, tau);
  std::uniform_real_distribution<double> u(0, 1);
  Eigen::MatrixXd xs(50, 2);
  for (Eigen::Index i = 0; i < xs.rows(); ++i) xs.row(i) << u(rng), u(rng);
  const Eigen::VectorXd v = acq.Evaluate(xs);
  const bo::UcbAcquisition ut(target, beta), u1(m1, tau), u2(m2, tau);
  const Eigen::VectorXd manual =
      (1 - nu) * ut.Evaluate(xs) + nu * (0.8 * u1.Evaluate(xs) + 0.2 * u2.Evaluate(xs));
  EXPECT_LT((v - manual).cwiseAbs().maxCoeff(), 1e-12);
  // Gradient against central differences.
  for (int i = 0; i < 5; ++i) {
    const Eigen::VectorXd x = xs.row(i).transpose();
    Eigen::VectorXd g;
    const double f = acq.ValueAndGradient(x, &g);
    EXPECT_NEAR(f, v(i), 1e-12);
    for (int k = 0; k < 2; ++k) {
      Eigen::VectorXd a = x, b = x;
      a(k) += 1e-6;
      b(k) -= 1e-6;
      const double fd =
          (acq.ValueAndGradient(a, nullptr) - acq.ValueAndGradient(b, nullptr)) / 2e-6;
      EXPECT_NEAR(g(k), fd, 1e-5 * (1 + std::abs(fd)));
    }
  }
  // nu = 0: exactly GP-UCB's values, hence its pick over any set.
  const MetaUcbAcquisition plain(target, metas, w, 0.0, beta, tau);
  EXPECT_EQ(plain.Evaluate(xs), ut.Evaluate(xs));
  int i_plain = -1, i_ucb = -1;
  bo::MaximizeOverSet(plain, xs, &i_plain);
  bo::MaximizeOverSet(ut, xs, &i_ucb);
  EXPECT_EQ(i_plain, i_ucb);
  EXPECT_THROW(MetaUcbAcquisition(target, metas, Eigen::Vector2d(0.5, 0.6), nu, beta, tau),
               std::invalid_argument);
  EXPECT_THROW(MetaUcbAcquisition(target, metas, w, 1.5, beta, tau), std::invalid_argument);
  EXPECT_THROW(MetaUcbAcquisition(target, {&m1}, w, nu, beta, tau), std::invalid_argument);
}

}  // namespace
}  // namespace advbo::algorithms
