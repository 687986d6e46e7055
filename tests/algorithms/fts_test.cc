// Federated Thompson Sampling (Dai 2021 thesis, Ch. 5): the p_t schedules' printed values, the
// normalised features, the weight posterior of eqs. 5.1-5.2 against an exact GP with kernel
// phi(x)^T phi(x') (App. B.2), the message distribution, and Alg. 5.1's use of each message once.
#include "algorithms/fts/fts.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>
#include <set>
#include <stdexcept>
#include <vector>

#include "bo/kernel.h"

namespace advbo::algorithms {
namespace {

bo::RandomFeatures SeFeatures(int m, double lengthscale, uint64_t seed) {
  bo::StationaryKernel k(bo::KernelFamily::kSquaredExponential, 1, false, {}, lengthscale, 1.0);
  bo::Rng rng(seed);
  return bo::RandomFeatures(k, m, rng);
}

TEST(Fts, ScheduleValues) {
  EXPECT_NEAR(FtsProbability(1, FtsSchedule::kInverseSqrt), 0.2929, 5e-5);
  EXPECT_NEAR(FtsProbability(2, FtsSchedule::kInverseSqrt), 0.2929, 5e-5);
  EXPECT_NEAR(FtsProbability(1, FtsSchedule::kInverseSquare), 0.75, 1e-12);
  EXPECT_NEAR(FtsProbability(3, FtsSchedule::kInverseSquare), 1 - 1.0 / 9, 1e-12);
  for (int t = 2; t < 100; ++t) {
    EXPECT_GT(FtsProbability(t + 1, FtsSchedule::kInverseSqrt),
              FtsProbability(t, FtsSchedule::kInverseSqrt));
    EXPECT_LT(FtsProbability(t, FtsSchedule::kInverseSquare), 1.0);
  }
  EXPECT_EQ(FtsProbability(1, FtsSchedule::kInverseSqrtAll), 0.0);
  EXPECT_NEAR(FtsProbability(4, FtsSchedule::kInverseSqrtAll), 0.5, 1e-12);
  EXPECT_EQ(FtsProbability(5, FtsSchedule::kConstant, 0.3), 0.3);
  EXPECT_THROW(FtsProbability(5, FtsSchedule::kConstant, 1.5), std::invalid_argument);
}

TEST(Fts, FeaturesAreNormalised) {
  const bo::RandomFeatures rf = SeFeatures(50, 0.1, 1);
  const Eigen::MatrixXd x = Eigen::VectorXd::LinSpaced(30, 0, 1);
  const Eigen::MatrixXd phi = NormalizedFeatures(rf, x, 0.7);
  for (Eigen::Index i = 0; i < phi.rows(); ++i) EXPECT_NEAR(phi.row(i).squaredNorm(), 0.7, 1e-12);
  EXPECT_THROW(NormalizedFeatures(rf, x, 0.0), std::invalid_argument);
}

// App. B.2: the BLR posterior on phi equals the exact GP with kernel phi(x)^T phi(x').
TEST(Fts, WeightPosteriorEqualsExactGpWithFeatureKernel) {
  const bo::RandomFeatures rf = SeFeatures(40, 0.1, 2);
  bo::Rng rng(3);
  std::uniform_real_distribution<double> u(0, 1);
  Eigen::MatrixXd xt(12, 1), xs(25, 1);
  Eigen::VectorXd y(12);
  for (int i = 0; i < 12; ++i) {
    xt(i, 0) = u(rng);
    y(i) = std::sin(8 * xt(i, 0)) + 0.1 * u(rng);
  }
  for (int i = 0; i < 25; ++i) xs(i, 0) = u(rng);
  const Eigen::MatrixXd pt = NormalizedFeatures(rf, xt), ps = NormalizedFeatures(rf, xs);
  const double noise = 0.01;
  const FeaturePosterior post(pt, y, noise);
  Eigen::VectorXd mean, var;
  post.Predict(ps, &mean, &var);
  Eigen::MatrixXd k = pt * pt.transpose();
  k.diagonal().array() += noise;
  const Eigen::LLT<Eigen::MatrixXd> llt(k);
  const Eigen::MatrixXd ks = pt * ps.transpose();  // [12, 25]
  const Eigen::VectorXd gp_mean = ks.transpose() * llt.solve(y);
  const Eigen::VectorXd gp_var =
      (ps * ps.transpose()).diagonal() -
      (ks.array() * llt.solve(ks).array()).colwise().sum().matrix().transpose();
  EXPECT_LT((mean - gp_mean).cwiseAbs().maxCoeff(), 1e-9);
  EXPECT_LT((var - gp_var).cwiseAbs().maxCoeff(), 1e-9);
  EXPECT_THROW(FeaturePosterior(pt, Eigen::VectorXd(3), noise), std::invalid_argument);
  EXPECT_THROW(FeaturePosterior(pt, y, 0.0), std::invalid_argument);
}

// Messages omega ~ N(nu, sigma^2 Sigma^{-1}): sample mean and covariance over 40,000 draws.
TEST(Fts, MessagesFollowTheWeightPosterior) {
  const bo::RandomFeatures rf = SeFeatures(4, 0.3, 4);
  const Eigen::MatrixXd xt = Eigen::VectorXd::LinSpaced(6, 0, 1);
  const Eigen::VectorXd y = Eigen::VectorXd::LinSpaced(6, -1, 1);
  const Eigen::MatrixXd pt = NormalizedFeatures(rf, xt);
  const double noise = 0.2;
  const FeaturePosterior post(pt, y, noise);
  bo::Rng rng(5);
  const int n = 40000;
  Eigen::MatrixXd w(4, n);
  for (int i = 0; i < n; ++i) w.col(i) = post.Sample(rng);
  const Eigen::VectorXd m = w.rowwise().mean();
  const Eigen::MatrixXd c = (w.colwise() - m) * (w.colwise() - m).transpose() / (n - 1);
  Eigen::MatrixXd sigma = pt.transpose() * pt;
  sigma.diagonal().array() += noise;
  const Eigen::MatrixXd cov = noise * sigma.inverse();
  EXPECT_LT((m - post.nu()).norm(), 0.02 * (1 + post.nu().norm()));
  EXPECT_LT((c - cov).norm(), 0.03 * cov.norm());
}

// With p_t = 0 the first N iterations use N distinct agents, then plain TS; with no messages
// FTS is TS exactly (same picks for the same seed), and the agent's pick is its argmax.
TEST(Fts, EachMessageIsUsedOnceThenThompsonSampling) {
  const int k = 200, m = 30, n_agents = 5;
  const Eigen::MatrixXd x = Eigen::VectorXd::LinSpaced(k, 0, 1);
  const bo::RandomFeatures rf = SeFeatures(m, 0.05, 6);
  const Eigen::MatrixXd phi = NormalizedFeatures(rf, x);
  bo::Rng mrng(7);
  std::normal_distribution<double> g(0, 1);
  std::vector<Eigen::VectorXd> msgs;
  for (int a = 0; a < n_agents; ++a)
    msgs.push_back(Eigen::VectorXd::NullaryExpr(m, [&]() { return g(mrng); }));
  auto f = [&](int i) { return std::sin(10 * x(i, 0)); };
  FtsOptions o;
  o.iterations = 12;
  o.schedule = FtsSchedule::kConstant;
  o.constant_p = 0.0;
  bo::Rng rng(8);
  const auto steps = RunFts(x, phi, msgs, f, o, rng);
  ASSERT_EQ(steps.size(), 13u);  // 1 initial + 12
  std::set<int> agents;
  for (int t = 1; t <= n_agents; ++t) {
    ASSERT_GE(steps[t].agent, 0);
    agents.insert(steps[t].agent);
    Eigen::Index best = 0;
    (phi * msgs[steps[t].agent]).maxCoeff(&best);
    EXPECT_EQ(steps[t].index, best);
  }
  EXPECT_EQ(agents.size(), static_cast<size_t>(n_agents));
  for (size_t t = n_agents + 1; t < steps.size(); ++t) EXPECT_EQ(steps[t].agent, -1);

  FtsOptions ts = o;
  ts.constant_p = 1.0;
  bo::Rng a(9), b(9);
  const auto with = RunFts(x, phi, msgs, f, ts, a);  // p = 1: never an agent
  const auto without = RunFts(x, phi, {}, f, o, b);  // no messages: TS whatever p
  ASSERT_EQ(with.size(), without.size());
  for (size_t t = 0; t < with.size(); ++t) {
    EXPECT_EQ(with[t].index, without[t].index);
    EXPECT_EQ(with[t].agent, -1);
  }
  FtsOptions bad = o;
  bad.iterations = 0;
  EXPECT_THROW(RunFts(x, phi, msgs, f, bad, rng), std::invalid_argument);
  EXPECT_THROW(RunFts(x, phi.leftCols(3), msgs, f, o, rng), std::invalid_argument);
}

}  // namespace
}  // namespace advbo::algorithms
