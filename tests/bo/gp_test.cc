// Exact GP: posterior against a direct dense solve, incremental vs full factorisation,
// likelihood gradient vs finite differences, ML-II recovering a known lengthscale.
#include "bo/gp.h"

#include <gtest/gtest.h>

#include <cmath>

#include "bo/hyperparameters.h"

namespace advbo::bo {
namespace {

Eigen::MatrixXd Uniform(int n, int d, Rng& rng, double lo = -1, double hi = 1) {
  std::uniform_real_distribution<double> u(lo, hi);
  return Eigen::MatrixXd::NullaryExpr(n, d, [&]() { return u(rng); });
}

TEST(ExactGP, PosteriorMatchesDirectSolve) {
  Rng rng(0);
  Eigen::MatrixXd x = Uniform(20, 2, rng), xs = Uniform(5, 2, rng);
  Eigen::VectorXd y = (x.col(0).array() * 3).sin().matrix() + x.col(1);
  const double noise = 0.05;
  StationaryKernel k(KernelFamily::kMatern52, 2, true, {}, 0.6, 1.2);
  ExactGP gp(k.Clone(), noise);
  gp.SetData(x, y);
  Eigen::VectorXd mean, var;
  gp.Predict(xs, &mean, &var);
  // Direct: standardise, then m = k*^T (K + s I)^-1 y~, v = k** - k*^T (K + s I)^-1 k*.
  const double mu = y.mean();
  const double sd = std::sqrt((y.array() - mu).square().sum() / (y.size() - 1));
  Eigen::VectorXd yt = (y.array() - mu) / sd;
  Eigen::MatrixXd kk = k.Eval(x, x) + noise * Eigen::MatrixXd::Identity(20, 20);
  Eigen::MatrixXd ks = k.Eval(x, xs);
  Eigen::MatrixXd kinv = kk.inverse();
  Eigen::VectorXd m_direct = (ks.transpose() * kinv * yt).array() * sd + mu;
  Eigen::VectorXd v_direct =
      (k.Diag(xs) - (ks.transpose() * kinv * ks).diagonal()).array() * sd * sd;
  EXPECT_LT((mean - m_direct).cwiseAbs().maxCoeff(), 1e-9);
  EXPECT_LT((var - v_direct).cwiseAbs().maxCoeff(), 1e-9);
  // Joint posterior agrees on the diagonal.
  Eigen::VectorXd mj;
  Eigen::MatrixXd cov;
  gp.PredictJoint(xs, &mj, &cov);
  EXPECT_LT((mj - mean).cwiseAbs().maxCoeff(), 1e-9);
  EXPECT_LT((cov.diagonal() - var).cwiseAbs().maxCoeff(), 1e-9);
}

TEST(ExactGP, IncrementalUpdateEqualsRefactorisation) {
  Rng rng(1);
  Eigen::MatrixXd x = Uniform(40, 3, rng);
  Eigen::VectorXd y = x.rowwise().squaredNorm();
  StationaryKernel k(KernelFamily::kSquaredExponential, 3, false, {}, 0.5, 1.0);
  ExactGP inc(k.Clone(), 1e-3), full(k.Clone(), 1e-3);
  inc.SetData(x.topRows(10), y.head(10));
  const long f0 = inc.num_factorizations();
  for (int i = 10; i < 40; ++i) inc.AddObservation(x.row(i).transpose(), y(i));
  EXPECT_EQ(inc.num_factorizations(), f0) << "appends must not refactorise";
  full.SetData(x, y);
  EXPECT_LT((inc.cholesky() - full.cholesky()).cwiseAbs().maxCoeff(), 1e-8);
  EXPECT_LT((inc.alpha() - full.alpha()).cwiseAbs().maxCoeff(), 1e-7);
  Eigen::MatrixXd xs = Uniform(6, 3, rng);
  Eigen::VectorXd m1, v1, m2, v2;
  inc.Predict(xs, &m1, &v1);
  full.Predict(xs, &m2, &v2);
  EXPECT_LT((m1 - m2).cwiseAbs().maxCoeff(), 1e-8);
  EXPECT_LT((v1 - v2).cwiseAbs().maxCoeff(), 1e-8);
}

TEST(ExactGP, DuplicatePointsNeedJitterNotACrash) {
  Eigen::MatrixXd x = Eigen::MatrixXd::Zero(30, 2);  // 30 copies of one point
  Eigen::VectorXd y = Eigen::VectorXd::LinSpaced(30, 0, 1);
  ExactGP gp(std::make_unique<StationaryKernel>(KernelFamily::kSquaredExponential, 2, false),
             1e-12);
  EXPECT_NO_THROW(gp.SetData(x, y));
  Eigen::VectorXd m, v;
  gp.Predict(x.topRows(1), &m, &v);
  EXPECT_TRUE(m.allFinite());
  EXPECT_NEAR(m(0), 0.5, 1e-3);
  gp.AddObservation(x.row(0).transpose(), 0.5);  // degenerate append falls back
  EXPECT_TRUE(gp.alpha().allFinite());
  EXPECT_THROW(gp.AddObservation(x.row(0).transpose(), NAN), NumericalError);
}

TEST(CholeskyWithJitter, EscalatesOnIndefiniteAndReportsHopelessMatrices) {
  Eigen::Matrix2d a;
  a << 1.0, 1.0, 1.0, 1.0 - 1e-9;  // slightly indefinite
  double jitter = 0;
  Eigen::MatrixXd l = CholeskyWithJitter(a, &jitter);
  EXPECT_GT(jitter, 0.0);
  EXPECT_LT((l * l.transpose() - a - jitter * Eigen::Matrix2d::Identity()).cwiseAbs().maxCoeff(),
            1e-12);
  Eigen::Matrix2d bad;
  bad << 1.0, 0.0, 0.0, -1.0;
  EXPECT_THROW(CholeskyWithJitter(bad, &jitter), NumericalError);
}

TEST(ExactGP, LogMarginalLikelihoodGradientMatchesFiniteDifferences) {
  Rng rng(2);
  Eigen::MatrixXd x = Uniform(25, 4, rng);
  Eigen::VectorXd y = (x.col(0) + x.col(1)).array().sin().matrix() + x.col(2).cwiseAbs();
  std::vector<std::unique_ptr<Kernel>> kernels;
  kernels.push_back(std::make_unique<StationaryKernel>(KernelFamily::kMatern52, 4, true));
  kernels.push_back(std::make_unique<AdditiveKernel>(KernelFamily::kSquaredExponential, 4,
                                                     std::vector<std::vector<int>>{{0, 1}, {2, 3}}));
  for (auto& k : kernels) {
    ExactGP gp(k->Clone(), 0.1);
    gp.SetData(x, y);
    Eigen::VectorXd theta = gp.LogHyperparameters();
    for (int i = 0; i < theta.size(); ++i) theta(i) += 0.1 * (i % 3) - 0.1;
    const PairwiseCache cache = gp.kernel().Precompute(x);
    Eigen::VectorXd g;
    gp.LogMarginalLikelihoodAt(theta, cache, &g);
    for (int i = 0; i < theta.size(); ++i) {
      const double h = 1e-5;
      Eigen::VectorXd tp = theta, tm = theta;
      tp(i) += h;
      tm(i) -= h;
      const double fd = (gp.LogMarginalLikelihoodAt(tp, cache, nullptr) -
                         gp.LogMarginalLikelihoodAt(tm, cache, nullptr)) /
                        (2 * h);
      EXPECT_NEAR(g(i), fd, 1e-4 * std::max(1.0, std::abs(fd))) << k->Describe() << " " << i;
    }
  }
}

TEST(FitHyperparameters, RecoversKnownLengthscaleFromGpSamples) {
  // Draw y ~ GP(0, SE(l = 0.3, s2 = 1)) + noise at 150 points, then fit from l = 2.
  Rng rng(7);
  const double true_ls = 0.3;
  Eigen::MatrixXd x = Uniform(150, 1, rng, 0, 3);
  StationaryKernel truth(KernelFamily::kSquaredExponential, 1, false, {}, true_ls, 1.0);
  Eigen::MatrixXd kk = truth.Eval(x, x) + 1e-4 * Eigen::MatrixXd::Identity(150, 150);
  Eigen::MatrixXd l = kk.llt().matrixL();
  std::normal_distribution<double> n(0, 1);
  Eigen::VectorXd z = Eigen::VectorXd::NullaryExpr(150, [&]() { return n(rng); });
  Eigen::VectorXd y = l * z;
  ExactGP gp(std::make_unique<StationaryKernel>(KernelFamily::kSquaredExponential, 1, false,
                                                std::vector<int>{}, 2.0, 1.0),
             0.1);
  gp.SetData(x, y);
  const double before = gp.LogMarginalLikelihood();
  FitOptions opt;
  opt.restarts = 3;
  FitResult r = FitHyperparameters(&gp, opt, rng);
  const auto& k = static_cast<const StationaryKernel&>(gp.kernel());
  EXPECT_NEAR(k.lengthscales()(0), true_ls, 0.3 * true_ls);
  EXPECT_GE(r.log_marginal_likelihood, before);
  EXPECT_NEAR(gp.LogMarginalLikelihood(), r.log_marginal_likelihood, 1e-6);
}

}  // namespace
}  // namespace advbo::bo
