// Random Fourier features: kernel approximation (within 0.03 for D = 20,000 on
// random pairs) and the Bayesian linear-regression posterior against the exact GP.
#include "bo/random_features.h"

#include <gtest/gtest.h>

#include <cmath>

#include "bo/gp.h"

namespace advbo::bo {
namespace {

TEST(RandomFeatures, ApproximateEveryStationaryKernelWithin003At20000Features) {
  Rng rng(1);
  std::uniform_real_distribution<double> u(-1, 1);
  for (auto fam : {KernelFamily::kSquaredExponential, KernelFamily::kMatern52,
                   KernelFamily::kMatern32, KernelFamily::kMatern12}) {
    for (bool ard : {false, true}) {
      StationaryKernel k(fam, 3, ard, {}, 0.6, 1.0);
      if (ard) k.SetLogParams(Eigen::Vector4d(std::log(0.4), std::log(0.9), std::log(1.5), 0.0));
      RandomFeatures rff(k, 20000, rng);
      Eigen::MatrixXd a = Eigen::MatrixXd::NullaryExpr(50, 3, [&]() { return u(rng); });
      Eigen::MatrixXd b = Eigen::MatrixXd::NullaryExpr(50, 3, [&]() { return u(rng); });
      const Eigen::VectorXd approx =
          (rff.Features(a).array() * rff.Features(b).array()).rowwise().sum();
      const Eigen::VectorXd exact = k.Eval(a, b).diagonal();
      EXPECT_LT((approx - exact).cwiseAbs().maxCoeff(), 0.03)
          << KernelFamilyName(fam) << (ard ? " ARD" : "");
      // Same point: phi(x)^T phi(x) ~ s2.
      const Eigen::VectorXd self = rff.Features(a).rowwise().squaredNorm();
      EXPECT_LT((self.array() - 1.0).abs().maxCoeff(), 0.03);
    }
  }
}

TEST(RandomFeatures, ActiveDimensionsAndJacobian) {
  Rng rng(2);
  StationaryKernel k(KernelFamily::kSquaredExponential, 4, false, {1, 3}, 0.5, 1.0);
  RandomFeatures rff(k, 64, rng);
  Eigen::MatrixXd x(1, 4), y(1, 4);
  x << 0.1, 0.2, 0.3, 0.4;
  y << 0.9, 0.2, -0.7, 0.4;  // differs only in inactive coordinates
  EXPECT_LT((rff.Features(x) - rff.Features(y)).cwiseAbs().maxCoeff(), 1e-15);
  Eigen::MatrixXd jac = rff.Jacobian(x.row(0).transpose());
  for (int a = 0; a < 4; ++a) {
    Eigen::MatrixXd p = x, q = x;
    p(0, a) += 1e-6;
    q(0, a) -= 1e-6;
    Eigen::VectorXd fd = (rff.Features(p) - rff.Features(q)).row(0).transpose() / 2e-6;
    EXPECT_LT((fd - jac.col(a)).cwiseAbs().maxCoeff(), 1e-6);
  }
}

TEST(RffPosterior, ConvergesToTheExactGpPosterior) {
  Rng rng(3);
  std::uniform_real_distribution<double> u(0, 1);
  Eigen::MatrixXd x = Eigen::MatrixXd::NullaryExpr(15, 1, [&]() { return u(rng); });
  Eigen::VectorXd y = (6 * x.col(0)).array().sin();
  const double noise = 1e-2;
  StationaryKernel k(KernelFamily::kSquaredExponential, 1, false, {}, 0.3, 1.0);
  ExactGP gp(k.Clone(), noise, false);
  gp.SetData(x, y);
  RffPosterior post(RandomFeatures(k, 4000, rng), x, y, noise);
  Eigen::MatrixXd xs = Eigen::MatrixXd::NullaryExpr(10, 1, [&]() { return u(rng); });
  Eigen::VectorXd m1, v1, m2, v2;
  gp.Predict(xs, &m1, &v1);
  post.Predict(xs, &m2, &v2);
  EXPECT_LT((m1 - m2).cwiseAbs().maxCoeff(), 0.05);
  EXPECT_LT((v1 - v2).cwiseAbs().maxCoeff(), 0.05);
  // Sampled weights have the posterior mean on average.
  Eigen::VectorXd acc = Eigen::VectorXd::Zero(post.mean_weights().size());
  for (int i = 0; i < 400; ++i) acc += post.SampleWeights(rng);
  const Eigen::VectorXd f_mean = post.features().Features(xs) * (acc / 400.0);
  EXPECT_LT((f_mean - m2).cwiseAbs().maxCoeff(), 0.1);
  EXPECT_THROW(RffPosterior(RandomFeatures(k, 10, rng), x, y, 0.0), std::invalid_argument);
}

}  // namespace
}  // namespace advbo::bo
