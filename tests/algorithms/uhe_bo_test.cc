// UHE-BO (Ha et al., Alg. 1): the EXP3 pieces against their formulas, the pseudo-i.i.d.
// dataset against brute-force nearest neighbours, the pseudo loss = the ordinary loss when
// X' is a subset of D, and the arm schedule of every variant.
#include "algorithms/uhe_bo/uhe_bo.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "bo/gp.h"
#include "bo/kernel.h"
#include "bo/test_functions.h"

namespace advbo::algorithms {
namespace {

TEST(PairedExp3, GammaProbabilitiesAndTheWeightUpdate) {
  PairedExp3 e(100);
  EXPECT_NEAR(e.gamma(), 0.12703, 5e-6);  // sqrt(4 ln 2 / ((e - 1) 100))
  EXPECT_NEAR(e.Probabilities()(0), 0.5, 1e-15);
  bo::Rng rng(1);
  for (int k = 0; k < 200; ++k) {
    const Eigen::Vector2d p = e.Probabilities();
    const Eigen::Vector2d before = e.log_weights();
    const int arm = e.Draw(rng);
    e.Update(1.0);  // the drawn arm always wins: its probability rises, the other's >= gamma/2
    EXPECT_NEAR(e.log_weights()(arm) - before(arm), e.gamma() * 1.0 / (2 * p(arm)), 1e-12);
    EXPECT_EQ(e.log_weights()(1 - arm), before(1 - arm));
    const Eigen::Vector2d q = e.Probabilities();
    EXPECT_NEAR(q.sum(), 1.0, 1e-12);
    EXPECT_GE(q.minCoeff(), e.gamma() / 2 - 1e-15);
  }
  EXPECT_THROW(PairedExp3(0), std::invalid_argument);
}

TEST(PseudoIid, TwiceTheDataLabelledByTheNearestEvaluatedPoint) {
  bo::Rng rng(3);
  std::uniform_real_distribution<double> u(0, 1);
  Eigen::MatrixXd x(15, 2);
  for (int i = 0; i < 15; ++i) x.row(i) << u(rng), u(rng);
  const Eigen::VectorXd y = x.col(0) - 2 * x.col(1);
  Eigen::MatrixXd xp;
  Eigen::VectorXd yp;
  PseudoIidDataset(x, y, 2 * 15, rng, &xp, &yp);
  ASSERT_EQ(xp.rows(), 30);
  for (int j = 0; j < 30; ++j) {
    int best = 0;
    for (int i = 1; i < 15; ++i)
      if ((x.row(i) - xp.row(j)).norm() < (x.row(best) - xp.row(j)).norm()) best = i;
    EXPECT_EQ(yp(j), y(best)) << j;
    EXPECT_TRUE((xp.row(j).array() >= 0).all() && (xp.row(j).array() <= 1).all());
  }
  // X' a subset of D: the labels are D's values, so the pseudo loss is the ordinary loss.
  const Eigen::VectorXd own = NearestLabels(x, y, x.topRows(7));
  EXPECT_EQ(own, y.head(7));
  bo::ExactGP a(std::make_unique<bo::StationaryKernel>(bo::KernelFamily::kMatern52, 2, true), 1e-3);
  bo::ExactGP b = a;
  a.SetData(x.topRows(7), y.head(7));
  b.SetData(x.topRows(7), own);
  EXPECT_DOUBLE_EQ(a.LogMarginalLikelihood(), b.LogMarginalLikelihood());
}

// Runs a variant on Branin (T = 12 after 3 initial points) and returns the steps' extras.
std::vector<nlohmann::json> RunVariant(UheVariant v, uint64_t seed, bo::BoResult* result) {
  const bo::TestFunction f = bo::MakeTestFunction("branin");
  bo::Rng srng(seed), rng(seed + 7);
  bo::BoSession s(f.lb, f.ub, UheLoopOptions(3, 12), srng);
  RunUheBo(s, f.f, v, rng);
  *result = s.result();
  std::vector<nlohmann::json> extras;
  for (const auto& st : result->steps) extras.push_back(st.extra);
  return extras;
}

TEST(UheBo, ArmSchedulesOfTheVariants) {
  bo::BoResult r;
  for (UheVariant v : {UheVariant::kUhe, UheVariant::kMap, UheVariant::kRa, UheVariant::kRandomExp3,
                       UheVariant::kRandom}) {
    const auto ex = RunVariant(v, 4, &r);
    ASSERT_EQ(ex.size(), 15u) << UheVariantName(v);
    for (size_t i = 3; i < ex.size(); ++i) {
      const int t = ex[i]["t"];
      EXPECT_EQ(t, static_cast<int>(i) - 2);
      const bool random = r.steps[i].phase == "random";
      const bool odd = t % 2 == 1;
      switch (v) {
        case UheVariant::kMap:
          EXPECT_FALSE(random);
          EXPECT_EQ(ex[i]["fit"], "map");
          break;
        case UheVariant::kRa:
          EXPECT_EQ(random, odd) << t;
          if (!random) EXPECT_EQ(ex[i]["fit"], "pseudo");
          break;
        case UheVariant::kRandom:
          EXPECT_TRUE(random);
          break;
        default:  // EXP3: even iterations are always GP-UCB; an odd one holds its arm
          if (!odd) {
            EXPECT_FALSE(random);
            EXPECT_EQ(ex[i]["arm"], ex[i - 1]["arm"]);
          } else {
            EXPECT_EQ(random, ex[i]["arm"] == "random");
          }
          EXPECT_GE(ex[i]["p_random"].get<double>(), PairedExp3(12).gamma() / 2 - 1e-12);
          if (!random) EXPECT_EQ(ex[i]["fit"], v == UheVariant::kUhe ? "pseudo" : "map");
      }
    }
  }
  // Same seeds, same run.
  bo::BoResult r2;
  RunVariant(UheVariant::kUhe, 9, &r);
  RunVariant(UheVariant::kUhe, 9, &r2);
  for (size_t i = 0; i < r.steps.size(); ++i) EXPECT_EQ(r.steps[i].x, r2.steps[i].x);
  // On a finite domain the random arm draws candidates too.
  {
    const bo::TestFunction f = bo::MakeTestFunction("branin");
    bo::BoLoopOptions o = UheLoopOptions(3, 10);
    o.candidates.resize(30, 2);
    for (int i = 0; i < 30; ++i) o.candidates.row(i) << -5 + 0.5 * i, 0.5 * i;
    bo::Rng srng(2), arng(3);
    bo::BoSession s(f.lb, f.ub, o, srng);
    RunUheBo(s, f.f, UheVariant::kRandom, arng);
    for (const auto& st : s.result().steps) {
      const double k = (st.x(0) + 5) / 0.5;
      EXPECT_NEAR(k, std::round(k), 1e-9);
      EXPECT_NEAR(st.x(1), 0.5 * std::round(k), 1e-9);
    }
  }
  EXPECT_EQ(ParseUheVariant("random-exp3"), UheVariant::kRandomExp3);
  EXPECT_THROW(ParseUheVariant("mcmc"), std::invalid_argument);
}

}  // namespace
}  // namespace advbo::algorithms
