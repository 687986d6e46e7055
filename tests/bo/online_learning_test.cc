// Online learners: closed-form Hedge weights, numerical stability, EXP3 concentration,
// unbiasedness of the linear-bandit estimator, GP-MW = Hedge on UCB rewards.
#include "bo/online_learning.h"

#include <gtest/gtest.h>

#include <cmath>

#include "bo/acquisition.h"

namespace advbo::bo {
namespace {

TEST(Hedge, ExponentialWeightsInClosedFormAndStable) {
  Hedge h(3, 0.5);
  h.Update(Eigen::Vector3d(1.0, 0.0, 2.0));
  h.Update(Eigen::Vector3d(1.0, 1.0, 0.0));
  Eigen::Vector3d w(std::exp(0.5 * 2), std::exp(0.5 * 1), std::exp(0.5 * 2));
  EXPECT_LT((h.Probabilities() - w / w.sum()).cwiseAbs().maxCoeff(), 1e-12);
  // Rewards that would overflow exp() without log-sum-exp.
  Hedge big(2, 1.0);
  big.Update(Eigen::Vector2d(5000.0, 4999.0));
  const Eigen::VectorXd p = big.Probabilities();
  EXPECT_TRUE(p.allFinite());
  EXPECT_NEAR(p(0), 1.0 / (1.0 + std::exp(-1.0)), 1e-12);
  EXPECT_THROW(big.Update(Eigen::Vector3d(1, 2, 3)), std::invalid_argument);
  EXPECT_THROW(Hedge(0, 1.0), std::invalid_argument);
}

TEST(Exp3, ConcentratesOnTheBestArmWithExplorationFloor) {
  Rng rng(1);
  Exp3 e(4, 0.05, 0.1);
  std::bernoulli_distribution arm_good(0.8), arm_bad(0.3);
  for (int t = 0; t < 3000; ++t) {
    const int a = e.Sample(rng);
    e.Update(a, a == 2 ? arm_good(rng) : arm_bad(rng));
  }
  const Eigen::VectorXd p = e.Probabilities();
  EXPECT_GT(p(2), 0.85);
  EXPECT_GE(p.minCoeff(), 0.1 / 4 - 1e-12);  // gamma / K floor
  EXPECT_NEAR(p.sum(), 1.0, 1e-12);
}

TEST(Exp3Linear, EstimatorIsUnbiasedAndLearnsTheBestAction) {
  Rng rng(2);
  std::normal_distribution<double> n01(0, 1);
  Eigen::MatrixXd phi = Eigen::MatrixXd::NullaryExpr(8, 3, [&]() { return n01(rng); });
  Eigen::Vector3d theta(0.5, -0.2, 0.3);
  // E_a[theta^] = sum_a p(a) Q^+ phi(a) phi(a)^T theta = theta (Q full rank): check via the
  // change in the estimated rewards averaged over the sampling distribution.
  Exp3Linear base(phi, 0.1, 0.2);
  const Eigen::VectorXd p = base.Probabilities();
  Eigen::VectorXd expected_increment = Eigen::VectorXd::Zero(8);
  for (int a = 0; a < 8; ++a) {
    Exp3Linear e(phi, 0.1, 0.2);
    e.Update(a, phi.row(a).dot(theta));
    expected_increment += p(a) * e.estimated_rewards();
  }
  EXPECT_LT((expected_increment - phi * theta).cwiseAbs().maxCoeff(), 1e-9);
  // Playing the game: the best action gets most of the mass.
  Exp3Linear e(phi, 0.05, 0.05);
  Eigen::Index best;
  (phi * theta).maxCoeff(&best);
  for (int t = 0; t < 2000; ++t) {
    const int a = e.Sample(rng);
    e.Update(a, phi.row(a).dot(theta) + 0.1 * n01(rng));
  }
  EXPECT_GT(e.Probabilities()(best), 0.5);
}

TEST(GpMw, IsHedgeOnUcbRewards) {
  Rng rng(3);
  std::uniform_real_distribution<double> u(0, 1);
  Eigen::MatrixXd x = Eigen::MatrixXd::NullaryExpr(10, 2, [&]() { return u(rng); });
  Eigen::VectorXd y = x.col(0) - x.col(1);
  ExactGP gp(std::make_unique<StationaryKernel>(KernelFamily::kSquaredExponential, 2, false,
                                                std::vector<int>{}, 0.5),
             1e-2);
  gp.SetData(x, y);
  Eigen::MatrixXd joint = Eigen::MatrixXd::NullaryExpr(5, 2, [&]() { return u(rng); });
  GpMw mw(5);
  mw.Update(gp, joint, 2.0);
  Eigen::VectorXd mu, var;
  gp.Predict(joint, &mu, &var);
  const Eigen::VectorXd expect = SoftmaxFromLog(0.1 * Ucb(mu, var, 2.0));
  EXPECT_LT((mw.Probabilities() - expect).cwiseAbs().maxCoeff(), 1e-12);
  GpMw clipped(5, GpMwOptions{1.0, true});
  clipped.Update(gp, joint, 2.0);
  const Eigen::VectorXd expect_c = SoftmaxFromLog(Ucb(mu, var, 2.0).cwiseMax(0.0).cwiseMin(1.0));
  EXPECT_LT((clipped.Probabilities() - expect_c).cwiseAbs().maxCoeff(), 1e-12);
  EXPECT_THROW(mw.Update(gp, joint.topRows(3), 2.0), std::invalid_argument);
}

}  // namespace
}  // namespace advbo::bo
