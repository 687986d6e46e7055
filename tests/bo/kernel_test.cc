// Kernels: closed-form values and analytic gradients against finite differences.
#include "bo/kernel.h"

#include <gtest/gtest.h>

#include <cmath>

#include "bo/optimal_stopping.h"

namespace advbo::bo {
namespace {

Eigen::MatrixXd RandomPoints(int n, int d, Rng& rng) {
  std::uniform_real_distribution<double> u(-1, 1);
  return Eigen::MatrixXd::NullaryExpr(n, d, [&]() { return u(rng); });
}

TEST(StationaryKernel, ClosedFormValues) {
  Eigen::MatrixXd a(1, 2), b(1, 2);
  a << 0.0, 0.0;
  b << 3.0, 4.0;  // distance 5
  StationaryKernel se(KernelFamily::kSquaredExponential, 2, false, {}, 2.0, 1.5);
  EXPECT_NEAR(se.Eval(a, b)(0, 0), 1.5 * std::exp(-0.5 * 25.0 / 4.0), 1e-12);
  StationaryKernel m52(KernelFamily::kMatern52, 2, false, {}, 2.0, 1.5);
  const double r = 2.5;
  EXPECT_NEAR(m52.Eval(a, b)(0, 0),
              1.5 * (1 + std::sqrt(5.0) * r + 5.0 * r * r / 3.0) * std::exp(-std::sqrt(5.0) * r),
              1e-12);
  StationaryKernel m32(KernelFamily::kMatern32, 2, false, {}, 2.0, 1.5);
  EXPECT_NEAR(m32.Eval(a, b)(0, 0), 1.5 * (1 + std::sqrt(3.0) * r) * std::exp(-std::sqrt(3.0) * r),
              1e-12);
  StationaryKernel m12(KernelFamily::kMatern12, 2, false, {}, 2.0, 1.5);
  EXPECT_NEAR(m12.Eval(a, b)(0, 0), 1.5 * std::exp(-r), 1e-12);
  EXPECT_NEAR(m12.Eval(a, a)(0, 0), 1.5, 1e-12);
  // Active dims: only coordinate 1 counts.
  StationaryKernel only1(KernelFamily::kSquaredExponential, 2, false, {1}, 1.0, 1.0);
  EXPECT_NEAR(only1.Eval(a, b)(0, 0), std::exp(-0.5 * 16.0), 1e-12);
}

// d/dtheta of sum(W .* K(theta)) by analytic grads vs central differences.
void CheckParamGradients(Kernel& k, const Eigen::MatrixXd& x) {
  Rng rng(3);
  std::normal_distribution<double> n(0, 1);
  Eigen::MatrixXd w = Eigen::MatrixXd::NullaryExpr(x.rows(), x.rows(), [&]() { return n(rng); });
  const PairwiseCache cache = k.Precompute(x);
  std::vector<Eigen::MatrixXd> grads;
  Eigen::MatrixXd kmat = k.GramFromCache(cache, &grads);
  EXPECT_LT((kmat - k.Eval(x, x)).cwiseAbs().maxCoeff(), 1e-10);
  ASSERT_EQ(static_cast<int>(grads.size()), k.NumParams());
  const Eigen::VectorXd p0 = k.LogParams();
  for (int i = 0; i < k.NumParams(); ++i) {
    const double h = 1e-5;
    Eigen::VectorXd p = p0;
    p(i) += h;
    k.SetLogParams(p);
    const double fp = w.cwiseProduct(k.GramFromCache(cache, nullptr)).sum();
    p(i) -= 2 * h;
    k.SetLogParams(p);
    const double fm = w.cwiseProduct(k.GramFromCache(cache, nullptr)).sum();
    k.SetLogParams(p0);
    const double fd = (fp - fm) / (2 * h);
    const double an = w.cwiseProduct(grads[i]).sum();
    EXPECT_NEAR(an, fd, 1e-5 * std::max(1.0, std::abs(fd))) << k.Describe() << " param " << i;
  }
}

void CheckInputGradient(const Kernel& k, int d) {
  Rng rng(5);
  Eigen::MatrixXd xs = RandomPoints(7, d, rng);
  Eigen::VectorXd x = RandomPoints(1, d, rng).row(0).transpose();
  Eigen::MatrixXd g = k.GradX(x, xs);
  for (int a = 0; a < d; ++a) {
    const double h = 1e-6;
    Eigen::VectorXd xp = x, xm = x;
    xp(a) += h;
    xm(a) -= h;
    Eigen::VectorXd fd =
        (k.Eval(xp.transpose(), xs) - k.Eval(xm.transpose(), xs)).row(0).transpose() / (2 * h);
    EXPECT_LT((fd - g.col(a)).cwiseAbs().maxCoeff(), 1e-6) << k.Describe() << " dim " << a;
  }
}

TEST(StationaryKernel, GradientsMatchFiniteDifferences) {
  Rng rng(1);
  Eigen::MatrixXd x = RandomPoints(9, 3, rng);
  for (auto fam : {KernelFamily::kSquaredExponential, KernelFamily::kMatern52,
                   KernelFamily::kMatern32, KernelFamily::kMatern12}) {
    for (bool ard : {false, true}) {
      StationaryKernel k(fam, 3, ard, {}, 0.7, 1.3);
      if (ard) k.SetLogParams(Eigen::Vector4d(std::log(0.5), std::log(1.1), std::log(2.0), 0.2));
      CheckParamGradients(k, x);
      CheckInputGradient(k, 3);
    }
  }
}

TEST(AdditiveKernel, SumOfGroupsAndGradients) {
  Rng rng(2);
  Eigen::MatrixXd x = RandomPoints(8, 5, rng);
  AdditiveKernel k(KernelFamily::kSquaredExponential, 5, {{0, 3}, {1, 2}, {4}}, 0.8, 0.5);
  Eigen::VectorXd p(6);
  p << -0.3, 0.1, 0.4, -0.5, 0.0, 0.3;
  k.SetLogParams(p);
  Eigen::MatrixXd sum = Eigen::MatrixXd::Zero(8, 8);
  for (int j = 0; j < k.num_groups(); ++j) sum += k.group(j).Eval(x, x);
  EXPECT_LT((sum - k.Eval(x, x)).cwiseAbs().maxCoeff(), 1e-12);
  CheckParamGradients(k, x);
  CheckInputGradient(k, 5);
  EXPECT_THROW(AdditiveKernel(KernelFamily::kMatern52, 3, {{0, 1}, {1, 2}}), std::invalid_argument);
  EXPECT_THROW(AdditiveKernel(KernelFamily::kMatern52, 3, {{0, 3}}), std::invalid_argument);
}

TEST(KernelFamily, ParseRoundTripAndErrors) {
  for (auto fam : {KernelFamily::kSquaredExponential, KernelFamily::kMatern52,
                   KernelFamily::kMatern32, KernelFamily::kMatern12})
    EXPECT_EQ(ParseKernelFamily(KernelFamilyName(fam)), fam);
  EXPECT_THROW(ParseKernelFamily("rbf"), std::invalid_argument);
}

TEST(CompositeKernel, SumAndProductValuesAndGradients) {
  Rng rng(6);
  Eigen::MatrixXd x = RandomPoints(8, 3, rng);
  StationaryKernel a(KernelFamily::kSquaredExponential, 3, true, {0, 2}, 0.6, 1.4);
  StationaryKernel b(KernelFamily::kMatern32, 3, false, {1}, 0.9, 0.7);
  auto sum = SumOf(a, b);
  auto prod = ProductOf(a, b);
  EXPECT_EQ(sum->NumParams(), a.NumParams() + b.NumParams());
  EXPECT_LT((sum->Eval(x, x) - a.Eval(x, x) - b.Eval(x, x)).cwiseAbs().maxCoeff(), 1e-12);
  EXPECT_LT((prod->Eval(x, x) - a.Eval(x, x).cwiseProduct(b.Eval(x, x))).cwiseAbs().maxCoeff(),
            1e-12);
  EXPECT_NEAR(prod->Diag(x)(0), 1.4 * 0.7, 1e-12);
  CheckParamGradients(*sum, x);
  CheckParamGradients(*prod, x);
  CheckInputGradient(*sum, 3);
  CheckInputGradient(*prod, 3);
  // Nested: (a + b) * a.
  auto nested = ProductOf(*sum, a);
  CheckParamGradients(*nested, x);
  CheckInputGradient(*nested, 3);
}

TEST(LearningCurveKernel, ClosedFormAndGradients) {
  LearningCurveKernel k(2.0, 3.0);
  Eigen::MatrixXd a(1, 1), b(1, 1);
  a << 1;
  b << 4;
  EXPECT_NEAR(k.Eval(a, b)(0, 0), std::pow(3.0, 2.0) / std::pow(1 + 4 + 3.0, 2.0), 1e-12);
  Eigen::MatrixXd steps(6, 1);
  steps << 1, 2, 3, 4, 5, 6;
  CheckParamGradients(k, steps);
  // With an asymptote the constant variance s is added everywhere and is a third parameter.
  LearningCurveKernel ka(2.0, 3.0, true, 0.25);
  EXPECT_EQ(ka.NumParams(), 3);
  EXPECT_NEAR(ka.Eval(a, b)(0, 0), std::pow(3.0, 2.0) / std::pow(1 + 4 + 3.0, 2.0) + 0.25, 1e-12);
  EXPECT_NEAR(ka.Diag(a)(0), std::pow(3.0 / 5.0, 2.0) + 0.25, 1e-12);
  CheckParamGradients(ka, steps);
  CheckInputGradient(ka, 1);
  EXPECT_THROW(LearningCurveKernel(1, 1, true, 0.0), std::invalid_argument);
}

TEST(RandomPartition, DisjointCoverOfNearEqualSize) {
  Rng rng(4);
  auto groups = RandomPartition(50, 12, rng);
  ASSERT_EQ(groups.size(), 12u);
  std::vector<int> seen(50, 0);
  for (const auto& g : groups) {
    EXPECT_GE(g.size(), 4u);
    EXPECT_LE(g.size(), 5u);
    for (int a : g) seen[a]++;
  }
  for (int s : seen) EXPECT_EQ(s, 1);
  EXPECT_THROW(RandomPartition(3, 4, rng), std::invalid_argument);
}

}  // namespace
}  // namespace advbo::bo
