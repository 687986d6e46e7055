// Hybrid Batch BO (Azimi et al. 2012): Theorems 1 and 2 against explicit kernel-matrix
// algebra, the two limits of the switching threshold (epsilon = 0 is sequential EI point for
// point; epsilon = inf is fixed batches with speedup exactly 1 - 1/n_b), and batch bookkeeping.
#include "algorithms/hybrid_batch/hybrid_batch.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "bo/bo_loop.h"
#include "bo/kernel.h"
#include "bo/test_functions.h"

namespace advbo::algorithms {
namespace {

Eigen::MatrixXd Uniform(int n, int d, bo::Rng& rng) {
  std::uniform_real_distribution<double> u(0, 1);
  Eigen::MatrixXd x(n, d);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < d; ++j) x(i, j) = u(rng);
  return x;
}

struct Fixture {
  bo::StationaryKernel k{bo::KernelFamily::kSquaredExponential, 2, false, {}, 0.3, 1.7};
  double noise = 1e-4;
  bo::Rng rng{21};
  Eigen::MatrixXd xo = Uniform(8, 2, rng), xa = Uniform(3, 2, rng);
  Eigen::VectorXd z = Uniform(1, 2, rng).row(0).transpose();
  Eigen::VectorXd yo = (3 * xo.col(0)).array().sin() + xo.col(1).array();
  bo::ExactGP gp{k.Clone(), noise, /*standardize=*/false};
  Fixture() { gp.SetData(xo, yo); }
  // The paper's matrices: A = k(xO, xO) (+ noise), B = k(x, xO), C = k(z, xO),
  // D = (k(x, x) - B A^-1 B^T)^-1 (Thm 1).
  Eigen::MatrixXd A() const {
    return k.Eval(xo, xo) + noise * Eigen::MatrixXd::Identity(xo.rows(), xo.rows());
  }
  Eigen::MatrixXd B() const { return k.Eval(xa, xo); }
  Eigen::RowVectorXd C() const { return k.Eval(z.transpose(), xo); }
  Eigen::MatrixXd D() const {
    // Noise on the batch points too: they are observed like O's points.
    const Eigen::MatrixXd kxx =
        k.Eval(xa, xa) + noise * Eigen::MatrixXd::Identity(xa.rows(), xa.rows());
    return (kxx - B() * A().ldlt().solve(B().transpose())).inverse();
  }
  Eigen::RowVectorXd G() const {  // (k(z, x) - C A^-1 B^T) D
    return (k.Eval(z.transpose(), xa) - C() * A().ldlt().solve(B().transpose())) * D();
  }
};

TEST(HybridBatch, Theorem1VarianceDropMatchesTheFormula) {
  Fixture f;
  ASSERT_EQ(f.gp.jitter(), 0.0);
  Eigen::VectorXd m0, v0, m1, v1;
  f.gp.Predict(f.z.transpose(), &m0, &v0);
  const bo::ExactGP after = f.gp.Fantasize(f.xa, Eigen::VectorXd::Zero(3));
  after.Predict(f.z.transpose(), &m1, &v1);
  const Eigen::RowVectorXd h =
      f.C() * f.A().ldlt().solve(f.B().transpose()) - f.k.Eval(f.z.transpose(), f.xa);
  const double delta = (h * f.D() * h.transpose())(0);  // eq. 2
  EXPECT_NEAR(v0(0) - v1(0), delta, 1e-9);
  EXPECT_GT(delta, 1e-3);  // the batch points are informative about z
}

TEST(HybridBatch, Theorem2MeanShiftIsLinearInTheOutcomeError) {
  Fixture f;
  const Eigen::RowVectorXd g = MeanSensitivity(f.gp, f.xa, f.z);
  EXPECT_LT((g - f.G()).cwiseAbs().maxCoeff(), 1e-9);
  const Eigen::Vector3d y(0.4, -1.2, 2.0), yhat(0.1, 0.3, -0.5);
  Eigen::VectorXd m_true, m_hat, m_o, v, mu_a;
  f.gp.Fantasize(f.xa, y).Predict(f.z.transpose(), &m_true, &v);
  f.gp.Fantasize(f.xa, yhat).Predict(f.z.transpose(), &m_hat, &v);
  f.gp.Predict(f.z.transpose(), &m_o, &v);
  f.gp.Predict(f.xa, &mu_a, &v);
  // mu_{z|O,x}(y) - mu_{z|O,x}(y^) = g (y - y^)  (proof of Thm 2, first line)
  EXPECT_NEAR(m_true(0) - m_hat(0), g.dot(y - yhat), 1e-9);
  // mu_{z|O,x} - mu_{z|O} = g (y - mu_{x|O})  (second bound's identity)
  EXPECT_NEAR(m_true(0) - m_o(0), g.dot(y - mu_a), 1e-9);
  // and the bound itself
  EXPECT_LE(std::abs(m_true(0) - m_hat(0)), g.norm() * (y - yhat).norm() + 1e-12);
  // Criterion pieces: gamma = ||g||, theta = sqrt(sum of variances), bias = ||y^ - mu||.
  const SwitchCriterion c = ComputeCriterion(f.gp, f.xa, yhat, f.z);
  Eigen::VectorXd mean_a, var_a;
  f.gp.Predict(f.xa, &mean_a, &var_a);
  EXPECT_NEAR(c.gamma, g.norm(), 1e-9);
  EXPECT_NEAR(c.theta, std::sqrt(var_a.sum() + 3 * f.noise), 1e-9);
  EXPECT_NEAR(c.bias, (yhat - mean_a).norm(), 1e-9);
  EXPECT_NEAR(ComputeCriterion(f.gp, f.xa, mean_a, f.z).bias, 0.0, 1e-12);
}

// A batch point on an observed point of a noise-free GP has a known outcome: nothing to
// bound (gamma = 0), and no factorisation failure (Rosenbrock's corner optimum, seen live).
TEST(HybridBatch, BatchPointOnAnObservedPointIsHarmless) {
  Fixture f;
  bo::ExactGP exact(f.k.Clone(), 0.0, false);
  exact.SetData(f.xo, f.yo);
  const SwitchCriterion c = ComputeCriterion(exact, f.xo.topRows(1), f.yo.head(1), f.z);
  EXPECT_LT(c.theta, 1e-4);  // the GP's own jitter is all the variance left there
  EXPECT_LT(c.value(), 1e-6);
}

// Runs Algorithm 1 in the paper's setting on Cosines (maximised) with one seed.
struct CosinesRun {
  bo::BoResult result;
  HybridBatchResult batches;
};
CosinesRun RunCosines(double epsilon, Fantasy fantasy, int n_l, uint64_t seed) {
  const bo::TestFunction t = bo::MakeTestFunction("cosines");
  bo::BoLoopOptions o = Azimi2012LoopOptions(t.lb, t.ub);
  o.budget = o.initial_points + n_l;
  HybridBatchOptions h = Azimi2012HybridOptions(2);
  h.epsilon = epsilon;
  h.fantasy = fantasy;
  bo::Rng rng(seed), batch_rng(seed + 1000);
  bo::BoSession s(t.lb, t.ub, o, rng);
  CosinesRun r;
  r.batches = RunHybridBatch(
      s, [&](const Eigen::VectorXd& x) { return -t.f(x); }, h, batch_rng);
  r.result = s.result();
  return r;
}

TEST(HybridBatch, EpsilonZeroIsSequentialEiPointForPoint) {
  const bo::TestFunction t = bo::MakeTestFunction("cosines");
  bo::BoLoopOptions o = Azimi2012LoopOptions(t.lb, t.ub);
  bo::Rng rng(5);
  const bo::BoResult seq =
      bo::RunBo([&](const Eigen::VectorXd& x) { return -t.f(x); }, t.lb, t.ub, o, rng);
  const CosinesRun hyb = RunCosines(0.0, Fantasy::kMean, 15, 5);
  ASSERT_EQ(seq.steps.size(), hyb.result.steps.size());
  for (size_t i = 0; i < seq.steps.size(); ++i) {
    EXPECT_EQ(seq.steps[i].x, hyb.result.steps[i].x) << i;
    EXPECT_EQ(seq.steps[i].y, hyb.result.steps[i].y) << i;
  }
  EXPECT_EQ(hyb.batches.batches, 15);
  EXPECT_EQ(hyb.batches.speedup(), 0.0);
}

TEST(HybridBatch, InfiniteEpsilonGivesFixedBatchesAndSpeedupOneMinusOneOverNb) {
  const double inf = std::numeric_limits<double>::infinity();
  for (int n_l : {15, 30}) {
    const CosinesRun r = RunCosines(inf, Fantasy::kMean, n_l, 3);
    EXPECT_EQ(r.batches.batch_evaluations, n_l);
    EXPECT_EQ(r.batches.batches, n_l / 5);
    EXPECT_DOUBLE_EQ(r.batches.speedup(), 0.8) << n_l;
    for (int m : r.batches.batch_sizes) EXPECT_EQ(m, 5);
  }
  const CosinesRun r = RunCosines(inf, Fantasy::kWorst, 13, 3);  // the last batch is what is left
  EXPECT_EQ(r.batches.batch_sizes, (std::vector<int>{5, 5, 3}));
  EXPECT_EQ(r.result.steps.size(), 15u);  // 2 initial points + n_l
}

TEST(HybridBatch, BatchesSumToTheBudgetAndRecordTheirCriterion) {
  for (Fantasy f : {Fantasy::kMean, Fantasy::kBest, Fantasy::kRandom}) {
    const CosinesRun r = RunCosines(0.02, f, 15, 11);
    int sum = 0;
    for (int m : r.batches.batch_sizes) {
      EXPECT_GE(m, 1);
      EXPECT_LE(m, 5);
      sum += m;
    }
    EXPECT_EQ(sum, 15);
    EXPECT_EQ(r.result.steps.size(), 17u);
    for (const auto& s : r.result.steps) {
      const nlohmann::json& e = s.extra;
      ASSERT_TRUE(e.is_object());
      EXPECT_EQ(e["fantasy"], FantasyName(f));
      if (e["position"] == 1)
        EXPECT_TRUE(e["criterion"].is_null());
      else
        EXPECT_LE(e["criterion"].get<double>(), 0.02);  // eq. 3 held for every added point
      EXPECT_TRUE((s.x.array() >= 0).all() && (s.x.array() <= 1).all());
    }
  }
}

TEST(HybridBatch, RefusesBadOptions) {
  const bo::TestFunction t = bo::MakeTestFunction("cosines");
  bo::BoLoopOptions o = Azimi2012LoopOptions(t.lb, t.ub);
  bo::Rng rng(1), brng(2);
  bo::BoSession s(t.lb, t.ub, o, rng);
  HybridBatchOptions h;
  h.fantasy = Fantasy::kKnownMax;  // no known optimum given
  EXPECT_THROW(RunHybridBatch(s, t.f, h, brng), std::invalid_argument);
  h = HybridBatchOptions{};
  h.epsilon = -1;
  EXPECT_THROW(RunHybridBatch(s, t.f, h, brng), std::invalid_argument);
  h.epsilon = std::nan("");
  EXPECT_THROW(RunHybridBatch(s, t.f, h, brng), std::invalid_argument);
  h = HybridBatchOptions{};
  h.batch_max = 0;
  EXPECT_THROW(RunHybridBatch(s, t.f, h, brng), std::invalid_argument);
  o.acquisition = bo::AcquisitionKind::kUcb;
  bo::BoSession ucb(t.lb, t.ub, o, rng);
  EXPECT_THROW(RunHybridBatch(ucb, t.f, HybridBatchOptions{}, brng), std::invalid_argument);
  EXPECT_THROW(ParseFantasy("max"), std::invalid_argument);
  for (const char* n : {"M", "ymax", "ymax+", "mu", "ymin", "random"})
    EXPECT_EQ(FantasyName(ParseFantasy(n)), n);
}

}  // namespace
}  // namespace advbo::algorithms
