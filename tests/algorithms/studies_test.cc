// The studies the CLI runs on the paper algorithms (src/algorithms/tuning,
// fts/federated_study, macro_bo/macro_study): their bookkeeping checked against an
// independent recomputation from the same runs, and their validation.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "algorithms/fts/federated_study.h"
#include "algorithms/macro_bo/macro_study.h"
#include "algorithms/tuning/tuning.h"
#include "bo/bo_loop.h"

namespace advbo::algorithms {
namespace {

TEST(FederatedStudy, RegretCurveIsTheMeanOverAgentsOfTheirBestTruthSoFar) {
  FamilyOptions fo;
  fo.agents = 6;
  fo.domain = 120;
  fo.seed = 4;
  fo.lengthscale = 0.1;
  const auto fam = SyntheticFamily(fo);
  ASSERT_EQ(fam->x.rows(), 120);
  ASSERT_EQ(fam->maximum.size(), 6u);
  for (int n = 0; n < 6; ++n) {  // each agent's maximum is its truth's maximum over the domain
    double m = -1e300;
    for (int i = 0; i < 120; ++i) m = std::max(m, fam->truth(n, i));
    EXPECT_EQ(fam->maximum[n], m);
  }
  FederatedOptions o;
  o.algo = FederatedAlgo::kFts;
  o.rounds = 8;
  o.initial_points = 3;
  o.features = 30;
  o.lengthscale = 0.1;
  std::vector<double> best(6, -1e300), recomputed;
  int calls = 0;
  const StudyCurves c =
      RunFederatedStudy(*fam, 6, o, 9, [&](const nlohmann::json& rec, double mean) {
        EXPECT_EQ(rec["round"].get<int>(), calls++);
        double m = 0;
        for (int n = 0; n < 6; ++n) {
          best[n] = std::max(best[n], fam->truth(n, rec["index"][n].get<int>()));
          m += (fam->maximum[n] - best[n]) / 6;
        }
        EXPECT_DOUBLE_EQ(rec["mean_simple_regret"].get<double>(), mean);
        recomputed.push_back(m);
      });
  ASSERT_EQ(calls, 9);
  ASSERT_EQ(c.mean.size(), 9u);
  for (size_t t = 0; t < c.mean.size(); ++t) {
    EXPECT_NEAR(c.mean[t], recomputed[t], 1e-12);
    EXPECT_GE(c.mean[t], 0.0);
    EXPECT_GE(c.se[t], 0.0);
    if (t) EXPECT_LE(c.mean[t], c.mean[t - 1] + 1e-15);  // best values only improve
  }
  // Reproducible from the seeds; a family's noise engines advance, so a new run builds a new
  // family (as `advbo fbo` does).
  const StudyCurves again = RunFederatedStudy(*SyntheticFamily(fo), 6, o, 9, {});
  EXPECT_EQ(again.mean, c.mean);
}

TEST(MacroStudy, SummaryIsTheMeanAndStandardErrorOfItsEpisodes) {
  MacroStudyOptions o;
  o.algo = "nonmyopic-ucb";
  o.planner.algo = MacroAlgo::kNonmyopicUcb;
  o.planner.horizon = 2;
  o.planner.samples = 20;
  o.realisations = 3;
  o.seed = 7;
  const PreparedMacroStudy p = PrepareMacroStudy(o);
  EXPECT_EQ(p.config["realisations"], 3);
  int progress = 0;
  const MacroStudyResult r =
      RunMacroStudy(p, nullptr, [&](int done, double, double) { EXPECT_EQ(done, ++progress); });
  EXPECT_EQ(progress, 3);
  std::vector<double> out;
  for (int k = 0; k < 3; ++k)
    out.push_back(
        RunMacroEpisode(MakeField("plankton", 7 + k), o.planner, 7 + k).avg_normalized_output);
  const double mean = (out[0] + out[1] + out[2]) / 3;
  double ss = 0;
  for (double v : out) ss += (v - mean) * (v - mean);
  EXPECT_NEAR(r.output.mean, mean, 1e-12);
  EXPECT_NEAR(r.output.se, std::sqrt(ss / 2 / 3), 1e-12);
  o.planner.horizon = 0;
  EXPECT_THROW(PrepareMacroStudy(o), std::invalid_argument);
  o.planner.horizon = 2;
  o.field = "lake";
  EXPECT_THROW(PrepareMacroStudy(o), std::invalid_argument);
}

// A learning curve with its optimum at x = 0.3: error (x - 0.3)^2 + 1 / (1 + epoch).
TuneProblem Parabola() {
  TuneProblem p;
  p.lb = Eigen::VectorXd::Zero(1);
  p.ub = Eigen::VectorXd::Ones(1);
  p.curve = [](const Eigen::VectorXd& x, int max_epochs, const EpochReport& report) {
    for (int e = 1; e <= max_epochs; ++e)
      if (!report(e, std::pow(x(0) - 0.3, 2) + 1.0 / (1 + e))) return;
  };
  return p;
}

TEST(Tuning, HyperbandStaysInItsEpochBudgetAndAFailingRunIsReported) {
  TuneOptions t;
  t.epochs = 9;
  t.epoch_budget = 120;
  TuneSettings s;
  s.algo = "hyperband";
  s.seed = 3;
  TuneProblem p = Parabola();
  const PreparedTune prep = PrepareTune(p, t, s);
  EXPECT_EQ(prep.config["max_epochs_R"], 9);
  int last = 0;
  const TuneOutcome o = RunTune(p, s, prep, nullptr, [&](int epochs, const std::string&) {
    EXPECT_GE(epochs, last);
    last = epochs;
  });
  EXPECT_TRUE(o.failure.empty());
  EXPECT_LE(o.epochs_used, 120);
  ASSERT_EQ(o.best_x.size(), 1);
  EXPECT_GE(o.best_x(0), 0.0);
  EXPECT_LE(o.best_x(0), 1.0);
  EXPECT_NEAR(o.best_error, std::pow(o.best_x(0) - 0.3, 2) + 0.1, 1e-12);  // 9 epochs
  int calls = 0;
  const CurveObjective parabola = p.curve;
  p.curve = [&calls, parabola](const Eigen::VectorXd& x, int epochs, const EpochReport& report) {
    if (++calls == 3) throw bo::EvaluationError("disk full");
    parabola(x, epochs, report);
  };
  const TuneOutcome f = RunTune(p, s, PrepareTune(p, t, s), nullptr, {});
  EXPECT_EQ(f.failure, "disk full");
  EXPECT_EQ(f.stop_reason, "evaluation failed");
}

TEST(Tuning, PrepareRefusesBadOptionsByName) {
  const TuneProblem p = Parabola();
  TuneOptions t;
  TuneSettings s;
  s.algo = "bo-bos";
  t.epochs = 8;
  t.warmup = 8;
  EXPECT_THROW(PrepareTune(p, t, s), std::invalid_argument);  // N0 >= N
  t.warmup = 4;
  t.gamma = 1.5;
  EXPECT_THROW(PrepareTune(p, t, s), std::invalid_argument);
  t.gamma = 0.95;
  EXPECT_NO_THROW(PrepareTune(p, t, s));
  s.algo = "hyperband";
  t.eta = 1;
  EXPECT_THROW(PrepareTune(p, t, s), std::invalid_argument);
  s.algo = "random";
  EXPECT_THROW(PrepareTune(p, t, s), std::invalid_argument);
}

}  // namespace
}  // namespace advbo::algorithms
