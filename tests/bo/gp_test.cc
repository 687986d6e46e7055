// Exact GP: posterior against a direct dense solve, incremental vs full factorisation,
// likelihood and predictive gradients vs finite differences, posterior samples, fantasies,
// the noise-free mode, ML-II recovering a known lengthscale, MAP priors, fitting on
// another dataset.
#include "bo/gp.h"

#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <cmath>
#include <tuple>

#include "bo/hyperparameters.h"

namespace advbo::bo {
namespace {

Eigen::MatrixXd Uniform(int n, int d, Rng& rng, double lo = -1, double hi = 1) {
  std::uniform_real_distribution<double> u(lo, hi);
  return Eigen::MatrixXd::NullaryExpr(n, d, [&]() { return u(rng); });
}

// The likelihood of gp's targets under kernel k plus noise by a dense Eigen LLT (reference
// for the LAPACK path): the value (RW06 eq. 2.30) and W = a a^T - K^{-1} (eq. 5.9).
struct DenseLikelihood {
  double lml = 0;
  Eigen::MatrixXd w;
};
DenseLikelihood DenseReference(const Kernel& k, double noise, const ExactGP& gp) {
  const Eigen::Index n = gp.num_data();
  Eigen::MatrixXd kk = k.Eval(gp.X(), gp.X());
  kk.diagonal().array() += noise;
  const Eigen::LLT<Eigen::MatrixXd> llt(kk);
  const Eigen::VectorXd yt = (gp.y().array() - gp.y_shift()) / gp.y_scale();
  const Eigen::VectorXd a = llt.solve(yt);
  DenseLikelihood out;
  out.lml = -0.5 * yt.dot(a) - Eigen::MatrixXd(llt.matrixL()).diagonal().array().log().sum() -
            0.5 * static_cast<double>(n) * std::log(2 * M_PI);
  out.w = a * a.transpose() - llt.solve(Eigen::MatrixXd::Identity(n, n));
  return out;
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

TEST(ExactGP, BlockedPredictionEqualsOnePointAtATime) {
  // 3,000 query points at N = 300 are predicted in blocks; results must not depend on it.
  Rng rng(21);
  Eigen::MatrixXd x = Uniform(300, 4, rng), xs = Uniform(3000, 4, rng);
  Eigen::VectorXd y = x.rowwise().squaredNorm();
  ExactGP gp(std::make_unique<StationaryKernel>(KernelFamily::kMatern52, 4, true), 1e-3);
  gp.SetData(x, y);
  Eigen::VectorXd m, v;
  gp.Predict(xs, &m, &v);
  double dm = 0, dv = 0;
  for (int i = 0; i < 3000; i += 7) {
    Eigen::VectorXd mi, vi;
    gp.Predict(xs.row(i), &mi, &vi);
    dm = std::max(dm, std::abs(mi(0) - m(i)));
    dv = std::max(dv, std::abs(vi(0) - v(i)));
  }
  EXPECT_LT(dm, 1e-12);
  EXPECT_LT(dv, 1e-12);
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

TEST(ExactGP, ReplacedTargetsEqualAFreshFitOnTheRealOutputs) {
  // Kriging-believer bookkeeping: fantasies at the posterior mean, then the real outputs at
  // the same inputs, give the GP fitted on the real data directly (factor untouched).
  Rng rng(8);
  Eigen::MatrixXd x = Uniform(15, 3, rng), xs = Uniform(6, 3, rng);
  Eigen::VectorXd y = x.col(0).array().sin().matrix() + x.col(2);
  ExactGP gp(std::make_unique<StationaryKernel>(KernelFamily::kSquaredExponential, 3, true), 1e-4);
  gp.SetData(x.topRows(12), y.head(12));
  for (int i = 12; i < 15; ++i) {
    Eigen::VectorXd mu;
    gp.Predict(x.row(i), &mu, nullptr);
    gp.AddObservation(x.row(i).transpose(), mu(0));
  }
  const Eigen::MatrixXd l = gp.cholesky();
  const long factorizations = gp.num_factorizations();
  gp.ReplaceTargets(12, y.tail(3));
  EXPECT_EQ(gp.cholesky(), l);
  EXPECT_EQ(gp.num_factorizations(), factorizations);
  ExactGP direct(std::make_unique<StationaryKernel>(KernelFamily::kSquaredExponential, 3, true),
                 1e-4);
  direct.SetData(x, y);
  Eigen::VectorXd m1, v1, m2, v2;
  gp.Predict(xs, &m1, &v1);
  direct.Predict(xs, &m2, &v2);
  EXPECT_LT((m1 - m2).cwiseAbs().maxCoeff(), 1e-9);
  EXPECT_LT((v1 - v2).cwiseAbs().maxCoeff(), 1e-9);
  EXPECT_THROW(gp.ReplaceTargets(14, y.tail(2)), std::invalid_argument);
  EXPECT_THROW(gp.ReplaceTargets(0, Eigen::VectorXd::Constant(1, NAN)), NumericalError);
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
  kernels.push_back(std::make_unique<AdditiveKernel>(
      KernelFamily::kSquaredExponential, 4, std::vector<std::vector<int>>{{0, 1}, {2, 3}}));
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

TEST(ExactGP, LargeGpsLikelihoodThroughLapackEqualsTheDirectFormula) {
  // n >= kLapackMinPoints: dpotrf / dpotri. The value against a dense Eigen LLT of the same
  // matrix, the gradient against RW06 eq. 5.9 evaluated with that LLT's inverse, and one
  // finite difference.
  Rng rng(12);
  const int n = static_cast<int>(kLapackMinPoints) + 50;
  Eigen::MatrixXd x = Uniform(n, 2, rng);
  Eigen::VectorXd y = (x.col(0) * 2).array().sin().matrix() + x.col(1).cwiseAbs2();
  StationaryKernel k(KernelFamily::kMatern52, 2, true, {}, 0.4, 1.3);
  const double noise = 0.05;
  ExactGP gp(k.Clone(), noise);
  gp.SetData(x, y);
  const PairwiseCache cache = gp.kernel().Precompute(x);
  const Eigen::VectorXd theta = gp.LogHyperparameters();
  Eigen::VectorXd g;
  const double lml = gp.LogMarginalLikelihoodAt(theta, cache, &g);
  const DenseLikelihood ref = DenseReference(k, noise, gp);
  const double direct = ref.lml;
  EXPECT_NEAR(lml, direct, 1e-8 * std::abs(direct));
  const Eigen::MatrixXd& w = ref.w;
  EXPECT_NEAR(g(theta.size() - 1), 0.5 * noise * w.trace(), 1e-7 * std::max(1.0, std::abs(g(2))));
  const Eigen::VectorXd gk = 0.5 * gp.kernel().WeightedGradients(cache, w);
  for (int i = 0; i + 1 < theta.size(); ++i)
    EXPECT_NEAR(g(i), gk(i), 1e-7 * std::max(1.0, std::abs(gk(i)))) << i;
  const double h = 1e-5;
  Eigen::VectorXd tp = theta, tm = theta;
  tp(0) += h;
  tm(0) -= h;
  const double fd = (gp.LogMarginalLikelihoodAt(tp, cache, nullptr) -
                     gp.LogMarginalLikelihoodAt(tm, cache, nullptr)) /
                    (2 * h);
  EXPECT_NEAR(g(0), fd, 1e-4 * std::max(1.0, std::abs(fd)));
}

// N >= kLapackMinPoints, kernels without a lower-triangle path (additive, sum): they sum the
// lower-form W against their full dK/dtheta, which must still give RW06 eq. 5.9 with the full
// W = a a^T - K^{-1} (here from a dense Eigen LLT).
TEST(ExactGP, LargeGpsGradientIsRightForKernelsSummingTheWholeMatrix) {
  Rng rng(14);
  const int n = static_cast<int>(kLapackMinPoints) + 10;
  const Eigen::MatrixXd x = Uniform(n, 3, rng);
  const Eigen::VectorXd y = (x.col(0) * 3).array().sin().matrix() + x.col(2).cwiseAbs2();
  std::vector<std::unique_ptr<Kernel>> kernels;
  kernels.push_back(std::make_unique<AdditiveKernel>(
      KernelFamily::kSquaredExponential, 3, std::vector<std::vector<int>>{{0, 1}, {2}}, 0.6, 0.5));
  std::vector<std::unique_ptr<Kernel>> parts;
  parts.push_back(std::make_unique<StationaryKernel>(KernelFamily::kMatern32, 3, false,
                                                     std::vector<int>{}, 0.8, 0.7));
  parts.push_back(std::make_unique<StationaryKernel>(KernelFamily::kMatern52, 3, true,
                                                     std::vector<int>{}, 0.5, 0.3));
  kernels.push_back(std::make_unique<CompositeKernel>(CompositeKernel::Op::kSum, std::move(parts)));
  for (const auto& k : kernels) {
    const double noise = 0.05;
    ExactGP gp(k->Clone(), noise);
    gp.SetData(x, y);
    const PairwiseCache cache = gp.kernel().Precompute(x);
    Eigen::VectorXd g;
    gp.LogMarginalLikelihoodAt(gp.LogHyperparameters(), cache, &g);
    const Eigen::MatrixXd w = DenseReference(*k, noise, gp).w;
    const Eigen::VectorXd expected = 0.5 * k->WeightedGradients(cache, w);
    ASSERT_EQ(g.size(), expected.size() + 1);
    for (Eigen::Index i = 0; i < expected.size(); ++i)
      EXPECT_NEAR(g(i), expected(i), 1e-7 * std::max(1.0, std::abs(expected(i))))
          << k->Describe() << " parameter " << i;
    EXPECT_NEAR(g(expected.size()), 0.5 * noise * w.trace(), 1e-7 * std::max(1.0, std::abs(g(0))));
  }
}

// N >= kLapackMinPoints: the stationary kernel computes K, its profile and the gradient's
// sums on the lower triangle in parallel column blocks, with W in lower form (strictly lower
// part doubled, zeros above). K's lower triangle must equal GramFromCache's, the gradient the
// full-matrix WeightedGradients(W) of the symmetric W, for every family, isotropic and ARD,
// and nothing may depend on the thread count.
TEST(Kernel, LargeGramOnTheLowerTriangleEqualsTheFullComputation) {
  Rng rng(33);
  const int n = static_cast<int>(kLapackMinPoints) + 37;  // not a multiple of the block size
  const Eigen::MatrixXd x = Uniform(n, 3, rng);
  Eigen::MatrixXd w = Eigen::MatrixXd::Random(n, n);
  w = (w + w.transpose()).eval();
  Eigen::MatrixXd w_lower = w.triangularView<Eigen::Lower>();
  w_lower.triangularView<Eigen::StrictlyLower>() *= 2.0;
  std::vector<StationaryKernel> kernels = {
      StationaryKernel(KernelFamily::kSquaredExponential, 3, false, {}, 0.7, 1.3),
      StationaryKernel(KernelFamily::kMatern52, 3, true, {}, 0.5, 0.8),
      StationaryKernel(KernelFamily::kMatern32, 3, false, {0, 2}, 0.9, 1.1),
      StationaryKernel(KernelFamily::kMatern12, 3, true, {1, 2}, 0.6, 0.4)};
  for (const StationaryKernel& k : kernels) {
    const PairwiseCache cache = k.Precompute(x);
    const Eigen::MatrixXd full = k.GramFromCache(cache, nullptr);
    const Eigen::VectorXd expected = k.WeightedGradients(cache, w);
    Eigen::VectorXd grad[2];
    for (int threads : {1, 2}) {
      tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
      Eigen::MatrixXd seen;
      k.GramThenWeightedGradients(
          cache,
          [&](Eigen::MatrixXd&& gram) -> Eigen::MatrixXd {
            seen = gram;
            return w_lower;
          },
          &grad[threads - 1]);
      const Eigen::MatrixXd diff = (seen - full).triangularView<Eigen::Lower>();
      EXPECT_LE(diff.cwiseAbs().maxCoeff(), 1e-13) << k.Describe();
    }
    EXPECT_EQ(grad[0], grad[1]) << k.Describe() << ": depends on the thread count";
    ASSERT_EQ(grad[0].size(), expected.size());
    for (Eigen::Index i = 0; i < expected.size(); ++i)
      EXPECT_NEAR(grad[0](i), expected(i), 1e-9 * std::max(1.0, std::abs(expected(i))))
          << k.Describe() << " parameter " << i;
  }
}

// Kernel::GramThenWeightedGradients (one pass of the element-wise work) must give exactly
// GramFromCache's K and WeightedGradients(W) for the W it returns, for every kernel kind, and
// leave the gradient alone when W is empty.
TEST(Kernel, FusedGramAndGradientsEqualTheTwoCallsBitForBit) {
  Rng rng(21);
  const Eigen::MatrixXd x = Uniform(30, 4, rng);
  std::vector<std::unique_ptr<Kernel>> kernels;
  kernels.push_back(std::make_unique<StationaryKernel>(KernelFamily::kSquaredExponential, 4, false,
                                                       std::vector<int>{}, 0.7, 1.3));
  kernels.push_back(std::make_unique<StationaryKernel>(KernelFamily::kMatern52, 4, true,
                                                       std::vector<int>{}, 0.5, 0.8));
  kernels.push_back(std::make_unique<StationaryKernel>(KernelFamily::kMatern12, 4, false,
                                                       std::vector<int>{1, 3}, 0.9, 1.1));
  kernels.push_back(std::make_unique<AdditiveKernel>(
      KernelFamily::kMatern32, 4, std::vector<std::vector<int>>{{0, 2}, {1}, {3}}, 0.6, 0.4));
  std::vector<std::unique_ptr<Kernel>> parts;
  parts.push_back(kernels[0]->Clone());
  parts.push_back(kernels[1]->Clone());
  kernels.push_back(std::make_unique<CompositeKernel>(CompositeKernel::Op::kSum, std::move(parts)));
  for (const auto& k : kernels) {
    Eigen::VectorXd theta = k->LogParams();
    for (int i = 0; i < theta.size(); ++i) theta(i) += 0.1 * (i % 3) - 0.05;
    k->SetLogParams(theta);
    const PairwiseCache cache = k->Precompute(x);
    const Eigen::MatrixXd gram = k->GramFromCache(cache, nullptr);
    // A weight matrix that depends on K, as the likelihood's does.
    const Eigen::MatrixXd w = gram * gram.transpose() - 0.3 * gram;
    const Eigen::VectorXd expected = k->WeightedGradients(cache, w);
    Eigen::MatrixXd seen;
    Eigen::VectorXd grad;
    k->GramThenWeightedGradients(
        cache,
        [&](Eigen::MatrixXd&& g) -> Eigen::MatrixXd {
          seen = g;
          return g * g.transpose() - 0.3 * g;
        },
        &grad);
    EXPECT_TRUE(seen == gram) << k->Describe();
    ASSERT_EQ(grad.size(), expected.size()) << k->Describe();
    EXPECT_TRUE(grad == expected) << k->Describe() << "\n"
                                  << grad.transpose() << "\n"
                                  << expected.transpose();
    Eigen::VectorXd untouched = Eigen::VectorXd::Constant(2, 7.0);
    k->GramThenWeightedGradients(
        cache, [](Eigen::MatrixXd&&) { return Eigen::MatrixXd(); }, &untouched);
    EXPECT_TRUE(untouched == Eigen::VectorXd::Constant(2, 7.0)) << k->Describe();
  }
}

// maximum likelihood recovers the lengthscale of a GP sample (n = 300) within 20%.
TEST(FitHyperparameters, RecoversKnownLengthscaleFromGpSamples) {
  for (auto fam : {KernelFamily::kSquaredExponential, KernelFamily::kMatern52}) {
    Rng rng(7);
    const double true_ls = 0.3;
    const int n = 300;
    Eigen::MatrixXd x = Uniform(n, 2, rng, 0, 2);
    StationaryKernel truth(fam, 2, false, {}, true_ls, 1.0);
    Eigen::MatrixXd kk = truth.Eval(x, x) + 1e-4 * Eigen::MatrixXd::Identity(n, n);
    Eigen::MatrixXd l = kk.llt().matrixL();
    std::normal_distribution<double> nd(0, 1);
    Eigen::VectorXd z = Eigen::VectorXd::NullaryExpr(n, [&]() { return nd(rng); });
    Eigen::VectorXd y = l * z;
    ExactGP gp(std::make_unique<StationaryKernel>(fam, 2, false, std::vector<int>{}, 2.0, 1.0),
               0.1);
    gp.SetData(x, y);
    const double before = gp.LogMarginalLikelihood();
    FitOptions opt;
    opt.restarts = 3;
    FitResult r = FitHyperparameters(&gp, opt, rng);
    const auto& k = static_cast<const StationaryKernel&>(gp.kernel());
    EXPECT_NEAR(k.lengthscales()(0), true_ls, 0.2 * true_ls) << KernelFamilyName(fam);
    EXPECT_GE(r.log_marginal_likelihood, before);
    EXPECT_NEAR(gp.LogMarginalLikelihood(), r.log_marginal_likelihood, 1e-6);
  }
}

TEST(ExactGP, PredictiveGradientsMatchFiniteDifferences) {
  Rng rng(11);
  Eigen::MatrixXd x = Uniform(25, 3, rng);
  Eigen::VectorXd y = (2 * x.col(0)).array().sin().matrix() + x.col(1).cwiseAbs2() - x.col(2);
  std::vector<std::unique_ptr<Kernel>> kernels;
  kernels.push_back(std::make_unique<StationaryKernel>(KernelFamily::kSquaredExponential, 3, true));
  kernels.push_back(std::make_unique<StationaryKernel>(KernelFamily::kMatern32, 3, false,
                                                       std::vector<int>{}, 0.7));
  kernels.push_back(SumOf(StationaryKernel(KernelFamily::kMatern52, 3, false, {0, 1}, 0.5),
                          StationaryKernel(KernelFamily::kSquaredExponential, 3, false, {2})));
  for (auto& k : kernels) {
    ExactGP gp(k->Clone(), 1e-3);
    gp.SetData(x, y);
    Eigen::MatrixXd xs = Uniform(4, 3, rng);
    Eigen::VectorXd m, v;
    Eigen::MatrixXd dm, dv;
    gp.PredictWithGradient(xs, &m, &v, &dm, &dv);
    Eigen::VectorXd m0, v0;
    gp.Predict(xs, &m0, &v0);
    EXPECT_LT((m - m0).cwiseAbs().maxCoeff(), 1e-12);
    EXPECT_LT((v - v0).cwiseAbs().maxCoeff(), 1e-12);
    for (int i = 0; i < 4; ++i) {
      for (int a = 0; a < 3; ++a) {
        const double h = 1e-6;
        Eigen::MatrixXd p = xs.row(i), q = xs.row(i);
        p(0, a) += h;
        q(0, a) -= h;
        Eigen::VectorXd mp, vp, mq, vq;
        gp.Predict(p, &mp, &vp);
        gp.Predict(q, &mq, &vq);
        EXPECT_NEAR(dm(i, a), (mp(0) - mq(0)) / (2 * h), 1e-5) << k->Describe();
        EXPECT_NEAR(dv(i, a), (vp(0) - vq(0)) / (2 * h), 1e-5) << k->Describe();
      }
    }
  }
}

TEST(ExactGP, PosteriorSamplesHaveThePosteriorMeanAndCovariance) {
  Rng rng(12);
  Eigen::MatrixXd x = Uniform(8, 1, rng);
  Eigen::VectorXd y = (3 * x.col(0)).array().sin();
  ExactGP gp(std::make_unique<StationaryKernel>(KernelFamily::kSquaredExponential, 1, false,
                                                std::vector<int>{}, 0.4),
             1e-2);
  gp.SetData(x, y);
  Eigen::MatrixXd xs = Uniform(3, 1, rng);
  Eigen::VectorXd mu;
  Eigen::MatrixXd cov;
  gp.PredictJoint(xs, &mu, &cov);
  const int s = 40000;
  Eigen::MatrixXd f = gp.SamplePosterior(xs, s, rng);  // [3, S]
  Eigen::VectorXd emp_mean = f.rowwise().mean();
  Eigen::MatrixXd c = f.colwise() - emp_mean;
  Eigen::MatrixXd emp_cov = c * c.transpose() / (s - 1);
  const double scale = std::sqrt(cov.diagonal().maxCoeff());
  EXPECT_LT((emp_mean - mu).cwiseAbs().maxCoeff(), 5 * scale / std::sqrt(s) + 1e-12);
  EXPECT_LT((emp_cov - cov).cwiseAbs().maxCoeff(), 0.03 * scale * scale + 1e-12);
}

TEST(ExactGP, FantasiesEqualConditioningOnTheUnion) {
  Rng rng(13);
  Eigen::MatrixXd x = Uniform(15, 2, rng), xf = Uniform(3, 2, rng);
  Eigen::VectorXd y = x.rowwise().sum(), yf(3);
  yf << 0.1, -0.4, 0.7;
  StationaryKernel k(KernelFamily::kMatern52, 2, false, {}, 0.5, 1.0);
  ExactGP gp(k.Clone(), 1e-3, /*standardize=*/false);
  gp.SetData(x, y);
  const long f0 = gp.num_factorizations();
  ExactGP fant = gp.Fantasize(xf, yf);
  EXPECT_EQ(fant.num_factorizations(), f0) << "fantasies must be rank-1 updates";
  EXPECT_EQ(gp.num_data(), 15) << "the original GP is unchanged";
  Eigen::MatrixXd xu(18, 2);
  xu << x, xf;
  Eigen::VectorXd yu(18);
  yu << y, yf;
  ExactGP full(k.Clone(), 1e-3, false);
  full.SetData(xu, yu);
  Eigen::MatrixXd xs = Uniform(5, 2, rng);
  Eigen::VectorXd m1, v1, m2, v2;
  fant.Predict(xs, &m1, &v1);
  full.Predict(xs, &m2, &v2);
  EXPECT_LT((m1 - m2).cwiseAbs().maxCoeff(), 1e-8);
  EXPECT_LT((v1 - v2).cwiseAbs().maxCoeff(), 1e-8);
}

// With standardised outputs a fantasy keeps the real data's shift and scale: fantasies at
// the posterior mean leave the mean unchanged everywhere and shrink only the variance.
TEST(ExactGP, FantasiesAtThePosteriorMeanKeepTheMean) {
  Rng rng(15);
  Eigen::MatrixXd x = Uniform(10, 2, rng), xf = Uniform(3, 2, rng), xs = Uniform(6, 2, rng);
  Eigen::VectorXd y = 5 + 3 * x.col(0).array().sin();
  ExactGP gp(std::make_unique<StationaryKernel>(KernelFamily::kSquaredExponential, 2, false,
                                                std::vector<int>{}, 0.3),
             0.0);
  gp.SetData(x, y);
  Eigen::VectorXd mf, vf, m0, v0, m1, v1;
  gp.Predict(xf, &mf, &vf);
  const ExactGP fant = gp.Fantasize(xf, mf);
  gp.Predict(xs, &m0, &v0);
  fant.Predict(xs, &m1, &v1);
  EXPECT_LT((m1 - m0).cwiseAbs().maxCoeff(), 1e-9);
  EXPECT_TRUE((v1.array() <= v0.array() + 1e-12).all());
  EXPECT_GT((v0 - v1).maxCoeff(), 1e-6);
  EXPECT_EQ(fant.y_shift(), gp.y_shift());
  EXPECT_EQ(fant.y_scale(), gp.y_scale());
}

TEST(FitHyperparameters, RestartsInParallelGiveTheSerialFit) {
  Rng data_rng(11);
  const Eigen::MatrixXd x = Uniform(60, 3, data_rng, -1, 1);
  Eigen::VectorXd y(60);
  for (int i = 0; i < 60; ++i) y(i) = std::sin(3.0 * x(i, 0)) + x(i, 1) * x(i, 2);
  auto fit = [&](int threads) {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
    ExactGP gp(std::make_unique<StationaryKernel>(KernelFamily::kMatern52, 3, true,
                                                  std::vector<int>{}, 1.0, 1.0),
               0.05);
    gp.SetData(x, y);
    Rng rng(4);
    FitOptions opt;
    opt.restarts = 3;
    const FitResult r = FitHyperparameters(&gp, opt, rng);
    return std::make_tuple(gp.LogHyperparameters(), r.evaluations, r.log_marginal_likelihood,
                           rng());  // the stream after the fit: the same draws were made
  };
  const auto serial = fit(1), parallel = fit(2);
  EXPECT_EQ(std::get<0>(serial), std::get<0>(parallel));
  EXPECT_EQ(std::get<1>(serial), std::get<1>(parallel));
  EXPECT_EQ(std::get<2>(serial), std::get<2>(parallel));
  EXPECT_EQ(std::get<3>(serial), std::get<3>(parallel));
}

TEST(ExactGP, NoiseFreeModeInterpolatesAndFitsWithoutNoise) {
  Rng rng(14);
  Eigen::MatrixXd x = Uniform(12, 1, rng);
  Eigen::VectorXd y = (4 * x.col(0)).array().cos();
  ExactGP gp(std::make_unique<StationaryKernel>(KernelFamily::kSquaredExponential, 1, false,
                                                std::vector<int>{}, 0.5),
             0.0);
  gp.SetData(x, y);
  Eigen::VectorXd m, v;
  gp.Predict(x, &m, &v);
  EXPECT_LT((m - y).cwiseAbs().maxCoeff(), 1e-5);
  EXPECT_LT(v.maxCoeff(), 1e-6);
  FitOptions opt;
  opt.fit_noise = false;
  FitResult r = FitHyperparameters(&gp, opt, rng);
  EXPECT_TRUE(std::isfinite(r.log_marginal_likelihood));
  EXPECT_EQ(gp.noise_variance(), 0.0);
  EXPECT_THROW(
      ExactGP(std::make_unique<StationaryKernel>(KernelFamily::kSquaredExponential, 1, false),
              -1.0),
      std::invalid_argument);
}

TEST(FitHyperparameters, PriorsPullTheEstimateAndOtherDatasetsAreUsed) {
  Rng rng(15);
  Eigen::MatrixXd x = Uniform(40, 1, rng);
  Eigen::VectorXd y = (6 * x.col(0)).array().sin();
  auto make = [] {
    return ExactGP(std::make_unique<StationaryKernel>(KernelFamily::kSquaredExponential, 1, false,
                                                      std::vector<int>{}, 1.0),
                   1e-2);
  };
  ExactGP ml = make(), map = make();
  ml.SetData(x, y);
  map.SetData(x, y);
  FitOptions opt;
  FitHyperparameters(&ml, opt, rng);
  opt.lengthscale_prior = {std::log(3.0), 0.05};  // a tight prior far from the ML value
  FitResult r = FitHyperparameters(&map, opt, rng);
  const double l_ml = static_cast<const StationaryKernel&>(ml.kernel()).lengthscales()(0);
  const double l_map = static_cast<const StationaryKernel&>(map.kernel()).lengthscales()(0);
  EXPECT_LT(l_ml, 1.0);
  EXPECT_GT(l_map, 2.0);
  EXPECT_LT(r.log_posterior, r.log_marginal_likelihood);  // the prior term is negative

  // A tight Gamma(a, b) prior on the lengthscale: in log space (with the Jacobian) its mode
  // is a / b = 3, and the MAP estimate lands near it.
  ExactGP gam = make();
  gam.SetData(x, y);
  FitOptions og;
  og.lengthscale_gamma = {3000.0, 1000.0};
  FitHyperparameters(&gam, og, rng);
  EXPECT_NEAR(static_cast<const StationaryKernel&>(gam.kernel()).lengthscales()(0), 3.0, 0.2);

  // Fit on another dataset: a slowly varying function gives a long lengthscale, installed
  // into a GP that keeps its own (wiggly) data.
  ExactGP gp = make();
  gp.SetData(x, y);
  Eigen::MatrixXd x2 = Uniform(40, 1, rng);
  Eigen::VectorXd y2 = (0.5 * x2.col(0)).array().sin();
  FitHyperparametersOn(&gp, x2, y2, FitOptions{}, rng);
  EXPECT_EQ(gp.num_data(), 40);
  EXPECT_EQ(gp.X(), x);
  EXPECT_GT(static_cast<const StationaryKernel&>(gp.kernel()).lengthscales()(0), 2 * l_ml);
}

}  // namespace
}  // namespace advbo::bo
