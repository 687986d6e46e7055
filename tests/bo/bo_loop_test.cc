// The generic BO loop: the Branin regret target, budget and error handling,
// stopping criteria, reproducibility.
#include "bo/bo_loop.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "bo/session.h"
#include "bo/test_functions.h"

namespace advbo::bo {
namespace {

// Simple regret after `budget` evaluations on Branin for one seed.
double BraninRegret(AcquisitionKind acq, uint64_t seed, int budget) {
  const TestFunction t = MakeTestFunction("branin");
  BoLoopOptions opt;
  opt.acquisition = acq;
  opt.budget = budget;
  Rng rng(seed);
  const BoResult r = RunBo(t.f, t.lb, t.ub, opt, rng);
  return r.best_y - t.minimum;
}

// EI and UCB reach simple regret < 0.01 on Branin within 40 evaluations on at
// least 18 of 20 seeds.
TEST(RunBo, EiAndUcbSolveBraninWithin40EvaluationsOn18Of20Seeds) {
  for (auto acq : {AcquisitionKind::kEi, AcquisitionKind::kUcb}) {
    int solved = 0;
    std::string regrets;
    for (uint64_t seed = 1; seed <= 20; ++seed) {
      const double r = BraninRegret(acq, seed, 40);
      EXPECT_GE(r, -1e-9);  // never below the true minimum
      solved += r < 0.01;
      regrets += std::to_string(r) + " ";
    }
    EXPECT_GE(solved, 18) << AcquisitionName(acq) << " regrets: " << regrets;
  }
}

TEST(RunBo, ThompsonSamplingMakesProgressOnBranin) {
  // Not part of the target; TS must still beat the initial design clearly.
  int good = 0;
  for (uint64_t seed = 1; seed <= 5; ++seed)
    good += BraninRegret(AcquisitionKind::kThompson, seed, 40) < 0.5;
  EXPECT_GE(good, 4);
}

TEST(RunBo, NeverExceedsTheBudgetAndStaysInTheBox) {
  const TestFunction t = MakeTestFunction("hartmann3");
  int calls = 0;
  auto f = [&](const Eigen::VectorXd& x) {
    ++calls;
    EXPECT_TRUE((x.array() >= t.lb.array()).all() && (x.array() <= t.ub.array()).all());
    return t.f(x);
  };
  BoLoopOptions opt;
  opt.budget = 17;
  opt.acquisition = AcquisitionKind::kUcb;
  Rng rng(3);
  const BoResult r = RunBo(f, t.lb, t.ub, opt, rng);
  EXPECT_EQ(calls, 17);
  EXPECT_EQ(r.steps.size(), 17u);
  EXPECT_EQ(r.stop_reason, "budget");
  // best_y is the minimum of what was observed.
  double m = INFINITY;
  for (const auto& s : r.steps) m = std::min(m, s.y);
  EXPECT_DOUBLE_EQ(r.best_y, m);
}

TEST(RunBo, SameSeedSameTraceDifferentSeedDifferentTrace) {
  const TestFunction t = MakeTestFunction("branin");
  BoLoopOptions opt;
  opt.budget = 12;
  Rng a(9), b(9), c(10);
  const BoResult ra = RunBo(t.f, t.lb, t.ub, opt, a), rb = RunBo(t.f, t.lb, t.ub, opt, b),
                 rc = RunBo(t.f, t.lb, t.ub, opt, c);
  for (int i = 0; i < 12; ++i) EXPECT_EQ(ra.steps[i].x, rb.steps[i].x);
  EXPECT_NE(ra.steps[0].x, rc.steps[0].x);
}

TEST(RunBo, FailedEvaluationsStopOrContinueAsAsked) {
  const TestFunction t = MakeTestFunction("branin");
  int calls = 0;
  auto flaky = [&](const Eigen::VectorXd& x) {
    ++calls;
    if (calls == 5) throw EvaluationError("simulator crashed");
    if (calls == 7) return std::nan("");
    return t.f(x);
  };
  BoLoopOptions opt;
  opt.budget = 10;
  Rng r1(1);
  BoResult stop = RunBo(flaky, t.lb, t.ub, opt, r1);
  EXPECT_EQ(stop.stop_reason, "evaluation failed");
  EXPECT_EQ(stop.steps.size(), 5u);
  EXPECT_FALSE(stop.steps.back().ok);
  EXPECT_EQ(stop.steps.back().error, "simulator crashed");
  EXPECT_TRUE(std::isfinite(stop.best_y));

  calls = 0;
  opt.on_error = OnError::kContinue;
  Rng r2(1);
  BoResult cont = RunBo(flaky, t.lb, t.ub, opt, r2);
  EXPECT_EQ(cont.stop_reason, "budget");
  EXPECT_EQ(cont.steps.size(), 10u);
  EXPECT_EQ(cont.failures, 2);
  EXPECT_EQ(calls, 10);
}

TEST(RunBo, TargetPatienceAndCallbackStopEarly) {
  const TestFunction t = MakeTestFunction("branin");
  BoLoopOptions opt;
  opt.budget = 40;
  opt.target = 5.0;
  Rng r1(2);
  BoResult a = RunBo(t.f, t.lb, t.ub, opt, r1);
  EXPECT_EQ(a.stop_reason, "target");
  EXPECT_LE(a.best_y, 5.0);
  EXPECT_LT(a.steps.size(), 40u);

  opt.target = std::nan("");
  int seen = 0;
  Rng r2(2);
  BoResult b = RunBo(t.f, t.lb, t.ub, opt, r2, [&](const BoStep&) { return ++seen < 6; });
  EXPECT_EQ(b.stop_reason, "callback");
  EXPECT_EQ(b.steps.size(), 6u);

  opt.patience = 3;
  Rng r3(2);
  auto constant = [](const Eigen::VectorXd&) { return 1.0; };
  BoResult c = RunBo(constant, t.lb, t.ub, opt, r3);
  EXPECT_EQ(c.stop_reason, "patience");
  EXPECT_EQ(c.steps.size(), 4u);  // first value, then 3 without improvement
}

TEST(RunBo, MaximisationGoal) {
  const TestFunction t = MakeTestFunction("cosines");
  BoLoopOptions opt;
  opt.goal = Goal::kMaximize;
  opt.budget = 30;
  Rng rng(4);
  // Maximising -cosines = Azimi et al.'s original Cosines, maximum 1.6.
  BoResult r = RunBo([&](const Eigen::VectorXd& x) { return -t.f(x); }, t.lb, t.ub, opt, rng);
  EXPECT_GT(r.best_y, 1.5);
}

TEST(RunBo, RejectsBadBoxes) {
  Rng rng(1);
  auto f = [](const Eigen::VectorXd& x) { return x.sum(); };
  EXPECT_THROW(RunBo(f, Eigen::Vector2d(0, 0), Eigen::Vector2d(1, 0), {}, rng),
               std::invalid_argument);
  EXPECT_THROW(RunBo(f, Eigen::Vector2d(0, 0), Eigen::Vector3d(1, 1, 1), {}, rng),
               std::invalid_argument);
}

// A session driven from outside (Propose, Evaluate, Record) is RunBo: same points, values,
// incumbent and stop reason; the GP holds exactly the proposed unit-cube points.
TEST(BoSession, SteppedByHandEqualsRunBo) {
  const TestFunction t = MakeTestFunction("branin");
  BoLoopOptions opt;
  opt.budget = 12;
  opt.acquisition = AcquisitionKind::kUcb;
  Rng rng_a(7), rng_b(7);
  const BoResult a = RunBo(t.f, t.lb, t.ub, opt, rng_a);
  BoSession s(t.lb, t.ub, opt, rng_b);
  while (!s.done()) {
    BoStep step = s.Propose();
    BoSession::Evaluate(t.f, &step);
    s.Record(step);
  }
  const BoResult& b = s.result();
  ASSERT_EQ(a.steps.size(), b.steps.size());
  for (size_t i = 0; i < a.steps.size(); ++i) {
    EXPECT_EQ(a.steps[i].x, b.steps[i].x) << i;
    EXPECT_EQ(a.steps[i].y, b.steps[i].y) << i;
    if (a.steps[i].phase == "bo") EXPECT_EQ(a.steps[i].beta, b.steps[i].beta) << i;
    EXPECT_EQ(a.steps[i].phase, b.steps[i].phase) << i;
    EXPECT_EQ(s.gp().X().row(i).transpose(), b.steps[i].x_unit) << i;
    EXPECT_EQ(s.gp().y()(i), -b.steps[i].y) << i;  // minimising: the GP sees -y
  }
  EXPECT_EQ(a.best_y, b.best_y);
  EXPECT_EQ(b.stop_reason, "budget");
  EXPECT_EQ(s.initial_points(), 3);
  EXPECT_EQ(s.bo_iterations(), 9);
}

// Points the caller chooses are recorded like proposals; the incumbent, the budget and the
// stop reasons follow; a finished session refuses more records.
TEST(BoSession, RecordsCallerPointsAndEnforcesTheBudget) {
  BoLoopOptions opt;
  opt.budget = 3;
  opt.goal = Goal::kMaximize;
  Rng rng(1);
  BoSession s(Eigen::Vector2d(-1, 0), Eigen::Vector2d(1, 4), opt, rng);
  BoStep p;
  p.x = Eigen::Vector2d(0, 2);
  p.ok = true;
  p.y = 5;
  p.extra = {{"batch", 1}};
  EXPECT_EQ(s.Record(p).evaluation, 1);
  EXPECT_EQ(s.gp().X().row(0), Eigen::RowVector2d(0.5, 0.5));
  p.y = 7;
  p.x = Eigen::Vector2d(1, 4);
  s.Record(p);
  EXPECT_EQ(s.result().best_y, 7);
  EXPECT_EQ(s.result().best_x, Eigen::Vector2d(1, 4));
  EXPECT_EQ(s.remaining(), 1);
  p.ok = false;
  p.error = "crashed";
  const BoStep& failed = s.Record(p);
  EXPECT_TRUE(std::isnan(failed.y));
  EXPECT_EQ(failed.best_y, 7);
  EXPECT_EQ(failed.extra["batch"], 1);
  EXPECT_EQ(s.stop_reason(), "evaluation failed");  // OnError::kStop
  s.Stop("callback");
  EXPECT_EQ(s.stop_reason(), "evaluation failed");
  EXPECT_THROW(s.Record(p), std::logic_error);
  BoSession fresh(Eigen::Vector2d(-1, 0), Eigen::Vector2d(1, 4), opt, rng);
  p.x = Eigen::Vector3d(0, 0, 0);
  EXPECT_THROW(fresh.Record(p), std::invalid_argument);
  p.x = Eigen::Vector2d(0, 0);
  p.ok = true;
  fresh.Record(p);
  fresh.Stop("mine");
  EXPECT_TRUE(fresh.done());
  EXPECT_EQ(fresh.result().stop_reason, "mine");
}

// A finite domain: the design is distinct candidate rows, every proposal is a candidate, and
// on a smooth 1-D function BO finds the best candidate; srinivas2010's beta uses |D|.
TEST(BoSession, CandidatesMakeAFiniteDomain) {
  Eigen::MatrixXd c(41, 1);
  for (int i = 0; i < 41; ++i) c(i, 0) = -2.0 + 0.1 * i;
  BoLoopOptions opt;
  opt.candidates = c;
  opt.budget = 15;
  opt.initial_points = 4;
  opt.acquisition = AcquisitionKind::kUcb;
  opt.beta = ParseExplorationWeight("srinivas2010:0.1");
  Rng rng(3);
  auto f = [](const Eigen::VectorXd& x) { return (x(0) - 0.73) * (x(0) - 0.73); };
  const BoResult r =
      RunBo(f, Eigen::VectorXd::Constant(1, -2), Eigen::VectorXd::Constant(1, 2), opt, rng);
  std::set<double> design;
  for (const auto& s : r.steps) {
    const double x = s.x(0);
    const double k = std::round((x + 2.0) / 0.1);
    EXPECT_NEAR(x, -2.0 + 0.1 * k, 1e-12) << "not a candidate: " << x;
    if (s.phase == "init") EXPECT_TRUE(design.insert(x).second) << "repeated design row";
    if (s.phase == "bo") EXPECT_DOUBLE_EQ(s.beta, opt.beta.Beta(s.evaluation - 4, 1, 41.0));
  }
  EXPECT_EQ(design.size(), 4u);
  EXPECT_NEAR(r.best_x(0), 0.7, 1e-12);  // the candidate nearest 0.73
  opt.candidates(3, 0) = 2.5;            // outside the box
  EXPECT_THROW(
      RunBo(f, Eigen::VectorXd::Constant(1, -2), Eigen::VectorXd::Constant(1, 2), opt, rng),
      std::invalid_argument);
}

TEST(TestFunctions, KnownMinimaAreAttained) {
  struct Case {
    const char* name;
    std::vector<double> argmin;
  };
  const std::vector<Case> cases = {
      {"branin", {M_PI, 2.275}},
      {"hartmann3", {0.114614, 0.555649, 0.852547}},
      {"hartmann6", {0.20169, 0.150011, 0.476874, 0.275332, 0.311652, 0.6573}},
      {"shekel10", {4.0007, 4.0006, 3.9997, 3.9995}},
      {"cosines", {0.3125, 0.3125}},
      {"ackley", {0, 0}},
      {"rosenbrock", {1, 1}},
      {"michalewicz", {2.20, 1.57}},
      {"deceptive", {1.0 / 3, 2.0 / 3}},
      {"h1", {8.6998, 6.7665}}};
  for (const auto& c : cases) {
    const TestFunction t = MakeTestFunction(c.name);
    Eigen::VectorXd x = Eigen::Map<const Eigen::VectorXd>(c.argmin.data(), c.argmin.size());
    EXPECT_NEAR(t.f(x), t.minimum, 2e-3) << c.name;
  }
  // Deceptive in 3-D: minimum -1 at alpha = (1/4, 1/2, 3/4); g is continuous (the kinks at
  // 4 alpha / 5 and (1 + 4 alpha) / 5 are zeros of g) and g(0) = g(1) = 4/5.
  const TestFunction dec = MakeTestFunction("deceptive", 3);
  EXPECT_DOUBLE_EQ(dec.f(Eigen::Vector3d(0.25, 0.5, 0.75)), -1.0);
  EXPECT_NEAR(dec.f(Eigen::Vector3d(0, 0, 0)), -0.64, 1e-12);
  EXPECT_NEAR(dec.f(Eigen::Vector3d(1, 1, 1)), -0.64, 1e-12);
  EXPECT_NEAR(dec.f(Eigen::Vector3d(0.2, 0.4, 0.6)), 0.0, 1e-12);  // x = 4 alpha / 5
  for (double e : {1e-9, -1e-9})  // continuous across every piece boundary
    EXPECT_NEAR(dec.f(Eigen::Vector3d(0.4 + e, 0.6 + e, 0.8 + e)),
                dec.f(Eigen::Vector3d(0.4, 0.6, 0.8)), 1e-6);
  Rng scan(2);
  const Eigen::MatrixXd many = MakeDesign(DesignKind::kUniform, 2000, dec.lb, dec.ub, scan);
  for (int i = 0; i < 2000; ++i) EXPECT_GE(dec.f(many.row(i).transpose()), -1.0 - 1e-12);
  EXPECT_THROW(MakeTestFunction("branin", 3), std::invalid_argument);
  EXPECT_THROW(MakeTestFunction("nope"), std::invalid_argument);
  const TestFunction g = MakeTestFunction("gp-sample", 2, 5);
  EXPECT_TRUE(g.minimum_estimated);
  Rng rng(1);
  const Eigen::MatrixXd pts = MakeDesign(DesignKind::kUniform, 500, g.lb, g.ub, rng);
  for (int i = 0; i < 500; ++i) EXPECT_GE(g.f(pts.row(i).transpose()), g.minimum - 1e-9);
}

}  // namespace
}  // namespace advbo::bo
