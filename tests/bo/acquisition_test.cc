// Acquisition functions: EI and PI against Monte Carlo, every analytic gradient against
// finite differences, Thompson sampling (finite set and RFF), expected UCB (R2-B2 eq. 8.3).
#include "bo/acquisition.h"

#include <gtest/gtest.h>

#include <cmath>

#include "bo/acquisition_optimizer.h"

namespace advbo::bo {
namespace {

Eigen::MatrixXd Uniform(int n, int d, Rng& rng) {
  std::uniform_real_distribution<double> u(0, 1);
  return Eigen::MatrixXd::NullaryExpr(n, d, [&]() { return u(rng); });
}

ExactGP FittedGp(int n, int d, Rng& rng, KernelFamily fam = KernelFamily::kMatern52) {
  Eigen::MatrixXd x = Uniform(n, d, rng);
  Eigen::VectorXd y = (5 * x.col(0)).array().sin().matrix() + x.rowwise().squaredNorm();
  ExactGP gp(std::make_unique<StationaryKernel>(fam, d, true, std::vector<int>{}, 0.3, 1.0), 1e-3);
  gp.SetData(x, y);
  return gp;
}

void CheckGradient(const Acquisition& acq, const Eigen::VectorXd& x, double tol,
                   const std::string& what) {
  Eigen::VectorXd g;
  const double v = acq.ValueAndGradient(x, &g);
  EXPECT_NEAR(v, acq.Evaluate(x.transpose())(0), 1e-10) << what;
  for (int a = 0; a < x.size(); ++a) {
    const double h = 1e-6;
    Eigen::VectorXd p = x, q = x;
    p(a) += h;
    q(a) -= h;
    const double fd =
        (acq.ValueAndGradient(p, nullptr) - acq.ValueAndGradient(q, nullptr)) / (2 * h);
    EXPECT_NEAR(g(a), fd, tol * std::max(1.0, std::abs(fd))) << what << " dim " << a;
  }
}

// EI matches Monte Carlo to 3 decimals.
TEST(ExpectedImprovement, MatchesMonteCarloToThreeDecimals) {
  Rng rng(1);
  ExactGP gp = FittedGp(12, 2, rng);
  const Eigen::MatrixXd xs = Uniform(5, 2, rng);
  Eigen::VectorXd mu, var;
  gp.Predict(xs, &mu, &var);
  for (Goal goal : {Goal::kMaximize, Goal::kMinimize}) {
    const double best = goal == Goal::kMaximize ? gp.y().maxCoeff() : gp.y().minCoeff();
    ExpectedImprovement ei(gp, best, 0.0, goal);
    ProbabilityOfImprovement pi(gp, best, 0.0, goal);
    const Eigen::VectorXd a = ei.Evaluate(xs), p = pi.Evaluate(xs);
    std::normal_distribution<double> n01(0, 1);
    const int s = 4000000;
    for (int i = 0; i < 5; ++i) {
      double sum = 0, hits = 0;
      const double sd = std::sqrt(var(i));
      for (int k = 0; k < s; ++k) {
        const double f = mu(i) + sd * n01(rng);
        const double imp = goal == Goal::kMaximize ? f - best : best - f;
        sum += std::max(imp, 0.0);
        hits += imp > 0;
      }
      EXPECT_NEAR(a(i), sum / s, 1e-3) << "EI point " << i;
      EXPECT_NEAR(p(i), hits / s, 1e-3) << "PI point " << i;
    }
  }
}

TEST(Acquisitions, GradientsMatchFiniteDifferences) {
  Rng rng(2);
  for (auto fam :
       {KernelFamily::kSquaredExponential, KernelFamily::kMatern52, KernelFamily::kMatern32}) {
    ExactGP gp = FittedGp(15, 3, rng, fam);
    const double best = gp.y().maxCoeff();
    UcbAcquisition ucb(gp, 2.5), lcb(gp, 2.5, Goal::kMinimize);
    ExpectedImprovement ei(gp, best, 0.01), eimin(gp, gp.y().minCoeff(), 0.0, Goal::kMinimize);
    ProbabilityOfImprovement pi(gp, best, 0.01);
    ThompsonSample ts(gp, 200, rng);
    for (int rep = 0; rep < 3; ++rep) {
      Eigen::VectorXd x = Uniform(1, 3, rng).row(0).transpose();
      const std::string f = KernelFamilyName(fam);
      CheckGradient(ucb, x, 1e-5, "UCB " + f);
      CheckGradient(lcb, x, 1e-5, "LCB " + f);
      CheckGradient(ei, x, 1e-5, "EI " + f);
      CheckGradient(eimin, x, 1e-5, "EI-min " + f);
      CheckGradient(pi, x, 1e-5, "PI " + f);
      CheckGradient(ts, x, 1e-5, "TS " + f);
    }
  }
}

TEST(Acquisitions, UcbAndLcbValues) {
  Rng rng(3);
  ExactGP gp = FittedGp(10, 2, rng);
  const Eigen::MatrixXd xs = Uniform(4, 2, rng);
  Eigen::VectorXd mu, var;
  gp.Predict(xs, &mu, &var);
  const Eigen::VectorXd sd = var.cwiseSqrt();
  EXPECT_LT((UcbAcquisition(gp, 4.0).Evaluate(xs) - (mu + 2 * sd)).cwiseAbs().maxCoeff(), 1e-12);
  EXPECT_LT((UcbAcquisition(gp, 4.0, Goal::kMinimize).Evaluate(xs) - (-mu + 2 * sd))
                .cwiseAbs()
                .maxCoeff(),
            1e-12);
  EXPECT_THROW(UcbAcquisition(gp, -1.0), std::invalid_argument);
}

TEST(ThompsonSampling, FiniteSetPicksByPosteriorProbability) {
  // Two candidates: one whose posterior is far better; one nearly tied pair.
  Eigen::MatrixXd x(2, 1);
  x << 0.0, 1.0;
  Eigen::VectorXd y(2);
  y << 0.0, 3.0;
  ExactGP gp(std::make_unique<StationaryKernel>(KernelFamily::kSquaredExponential, 1, false,
                                                std::vector<int>{}, 0.1),
             1e-4, false);
  gp.SetData(x, y);
  Rng rng(4);
  int picks_best = 0;
  for (int i = 0; i < 200; ++i) picks_best += ThompsonSampleIndex(gp, x, rng) == 1;
  EXPECT_EQ(picks_best, 200);
  int picks_min = 0;
  for (int i = 0; i < 200; ++i) picks_min += ThompsonSampleIndex(gp, x, rng, Goal::kMinimize) == 0;
  EXPECT_EQ(picks_min, 200);
  // Far from data both points are prior draws: each wins about half the time.
  Eigen::MatrixXd far(2, 1);
  far << 10.0, 20.0;
  int first = 0;
  for (int i = 0; i < 2000; ++i) first += ThompsonSampleIndex(gp, far, rng) == 0;
  EXPECT_NEAR(first / 2000.0, 0.5, 0.05);
}

TEST(ExpectedUcb, AveragesUcbOverTheOtherAgentsSamples) {
  Rng rng(5);
  ExactGP gp = FittedGp(20, 3, rng);  // joint input: own = {0, 2}, other = {1}
  Eigen::MatrixXd others(4, 1);
  others << 0.1, 0.4, 0.6, 0.9;
  Eigen::VectorXd w(4);
  w << 1, 2, 3, 4;
  ExpectedUcb eucb(gp, {0, 2}, {1}, others, 2.0, w);
  Eigen::Vector2d own(0.3, 0.7);
  Eigen::MatrixXd joint(4, 3);
  for (int s = 0; s < 4; ++s) joint.row(s) << own(0), others(s, 0), own(1);
  const Eigen::VectorXd u = UcbAcquisition(gp, 2.0).Evaluate(joint);
  EXPECT_NEAR(eucb.ValueAndGradient(own, nullptr), u.dot(w) / w.sum(), 1e-12);
  CheckGradient(eucb, own, 1e-5, "expected UCB");
  EXPECT_THROW(ExpectedUcb(gp, {0, 1}, {1}, others, 2.0), std::invalid_argument);
  EXPECT_THROW(ExpectedUcb(gp, {0, 2}, {1}, Eigen::MatrixXd(4, 2), 2.0), std::invalid_argument);
}

}  // namespace
}  // namespace advbo::bo
