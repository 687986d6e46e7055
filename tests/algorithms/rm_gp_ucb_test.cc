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
#include "bo/bo_loop.h"
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

// 1-D synthetic task of Sec. 7.6.1 / App. D.2.1 on a 200-point grid: a smooth target and
// meta-tasks whose 20 observations are f(x) + U[-gap, gap] + N(0, 0.01).
struct Synthetic {
  bo::Objective f;
  std::vector<MetaTask> metas;
  bo::BoLoopOptions options;
};

Synthetic MakeSynthetic(const std::vector<double>& gaps, uint64_t seed) {
  Synthetic p;
  p.f = [](const Eigen::VectorXd& x) { return std::sin(9 * x(0)) + 0.5 * std::cos(23 * x(0)); };
  bo::Rng rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  std::normal_distribution<double> noise(0, 0.1);
  for (double gap : gaps) {
    MetaTask t;
    t.x.resize(20, 1);
    t.y.resize(20);
    std::uniform_real_distribution<double> shift(-gap, gap);
    for (int j = 0; j < 20; ++j) {
      t.x(j, 0) = u(rng);
      t.y(j) = p.f(t.x.row(j).transpose()) + shift(rng) + noise(rng);
    }
    p.metas.push_back(t);
  }
  p.options.goal = bo::Goal::kMaximize;
  p.options.acquisition = bo::AcquisitionKind::kUcb;
  p.options.kernel = bo::KernelFamily::kSquaredExponential;
  p.options.ard = false;
  p.options.fit_hyperparameters = false;
  p.options.initial_lengthscales = Eigen::VectorXd::Constant(1, 0.1);
  p.options.noise_variance = 1e-2;
  p.options.initial_points = 2;
  p.options.budget = 22;
  p.options.candidates = Eigen::VectorXd::LinSpaced(200, 0, 1);
  return p;
}

TEST(RmGpUcb, NuZeroReproducesGpUcbPointForPoint) {
  const Synthetic p = MakeSynthetic({0.05, 4.0}, 1);
  bo::Rng r1(5), r2(5), meta_rng(9);
  bo::BoSession rm(Eigen::VectorXd::Zero(1), Eigen::VectorXd::Ones(1), p.options, r1);
  RmGpUcbOptions o;
  o.use_meta = false;
  RunRmGpUcb(rm, p.f, p.metas, o, meta_rng);
  // GP-UCB by hand with the same beta_t over the same candidates.
  bo::BoSession ucb(Eigen::VectorXd::Zero(1), Eigen::VectorXd::Ones(1), p.options, r2);
  int t = 0;
  while (!ucb.done()) {
    if (ucb.evaluations() < ucb.initial_points()) {
      ucb.Step(p.f);
      continue;
    }
    const bo::UcbAcquisition acq(ucb.gp(), RmBeta(++t, 200, 0.1));
    int index = -1;
    const bo::AcquisitionMax m = bo::MaximizeOverSet(acq, ucb.candidates_unit(), &index);
    bo::BoStep step;
    step.phase = "bo";
    step.x_unit = m.x;
    step.x = ucb.FromUnit(m.x);
    bo::BoSession::Evaluate(p.f, &step);
    ucb.Record(step);
  }
  ASSERT_EQ(rm.result().steps.size(), 22u);
  ASSERT_EQ(ucb.result().steps.size(), 22u);
  for (size_t i = 0; i < 22; ++i) EXPECT_EQ(rm.result().steps[i].x, ucb.result().steps[i].x) << i;
  EXPECT_EQ(rm.result().steps.back().extra["nu"], 0.0);
}

TEST(RmGpUcb, DissimilarMetaTasksLoseTheirWeightAndNuDecays) {
  const Synthetic p = MakeSynthetic({0.05, 0.05, 4.0, 4.0}, 2);
  bo::Rng r(3), meta_rng(4);
  bo::BoSession s(Eigen::VectorXd::Zero(1), Eigen::VectorXd::Ones(1), p.options, r);
  std::vector<nlohmann::json> extras;
  RunRmGpUcb(s, p.f, p.metas, RmGpUcbOptions{}, meta_rng, [&](const bo::BoStep& st) {
    if (st.phase == "bo") extras.push_back(st.extra);
    return true;
  });
  ASSERT_EQ(extras.size(), 20u);
  EXPECT_EQ(extras[0]["t"], 1);
  EXPECT_EQ(extras[0]["nu"], 1.0);
  for (double w : extras[0]["weights"].get<std::vector<double>>()) EXPECT_EQ(w, 0.25);
  const auto w10 = extras[9]["weights"].get<std::vector<double>>();
  EXPECT_LT(w10[2] + w10[3], 0.1);  // Fig. 7.1b: the dissimilar tasks are switched off
  for (size_t k = 1; k < extras.size(); ++k)
    EXPECT_LE(extras[k]["nu"].get<double>(), 0.7 * extras[k - 1]["nu"].get<double>() + 1e-15);
  EXPECT_THROW(RunRmGpUcb(s, p.f, {}, RmGpUcbOptions{}, meta_rng), std::invalid_argument);
}

TEST(RmGpUcb, TheoremSevenOneConstants) {
  EXPECT_NEAR(RmBeta(1, 1000, 0.1), 2 * std::log(1000 * M_PI * M_PI / 0.2), 1e-12);
  EXPECT_NEAR(RmBeta(3, 1000, 0.1), 2 * std::log(1000 * 9 * M_PI * M_PI / 0.2), 1e-12);
  EXPECT_NEAR(RmTau(1000, 4, 0.1), 2 * std::log(120000.0), 1e-12);
}

}  // namespace
}  // namespace advbo::algorithms
