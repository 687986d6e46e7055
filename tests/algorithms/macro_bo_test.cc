// epsilon-Macro-BO (Kharkovskii 2020 thesis, Ch. 4): the node counts of the sampling tree
// against (1 + A) sum_{t<H} (A N)^t, the affine (whitened-innovation) form of R against a GP
// that really observed the sampled outputs, the information terms against their closed forms
// and the chain rule, H = 1 against myopic selection, the bounds of the anytime variant, and
// the episode invariants.
#include "algorithms/macro_bo/macro_bo.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <set>

#include "algorithms/macro_bo/field.h"
#include "bo/grid_sample.h"

namespace advbo::algorithms {
namespace {

// A 21 x 21 plankton-like grid (cell 0.1 km, l = 0.5 km) with the agent in the centre: every
// dive up to H = 4 stages of kappa = 2 stays inside, so A = 4 everywhere (an interior toy).
MacroField Toy(uint64_t seed, int kappa = 2) {
  MacroField m;
  const int n = 21;
  m.domain.name = "toy";
  m.domain.kappa = kappa;
  m.domain.locations.resize(n * n, 2);
  for (int r = 0; r < n; ++r)
    for (int c = 0; c < n; ++c) m.domain.locations.row(r * n + c) << 0.1 * c, 0.1 * r;
  m.domain.actions = GridDives(n, n, kappa);
  m.prior = {0.3, 0.5, 0.4, 1.0, 1e-3};
  bo::Rng rng(seed);
  Eigen::VectorXd axis(n);
  for (int i = 0; i < n; ++i) axis(i) = 0.1 * i;
  const Eigen::MatrixXd f = bo::SampleGpOnGrid(axis, axis, 0.5, 0.4, 1.0, rng);
  m.f.resize(n * n);
  for (int r = 0; r < n; ++r)
    for (int c = 0; c < n; ++c) m.f(r * n + c) = m.prior.mean + f(c, r);
  m.start = (n / 2) * n + n / 2;
  m.budget = 4 * kappa;
  return m;
}

long long Formula(int a, int n, int h) {
  long long s = 0, p = 1;
  for (int t = 0; t < h; ++t) s += p, p *= static_cast<long long>(a) * n;
  EXPECT_EQ(MacroTreeNodes(a, n, h), static_cast<double>((1 + a) * s));
  return (1 + a) * s;
}

TEST(MacroBo, NodesPerPlanningCallMatchTheClosedForm) {
  const MacroField f = Toy(1);
  FieldBelief belief(f.domain, f.prior);
  belief.Observe(f.start, 0.2);
  for (int h = 1; h <= 4; ++h) {
    MacroOptions o;
    o.horizon = h;
    o.samples = h == 4 ? 10 : 100;
    bo::Rng rng(5);
    const MacroPlan p = PlanMacroAction(belief, f.start, h, o, rng);
    EXPECT_EQ(p.nodes, Formula(4, o.samples, h)) << "H = " << h;
  }
  EXPECT_EQ(Formula(4, 100, 1), 5);
  EXPECT_EQ(Formula(4, 100, 4), 320802005LL);
}

TEST(MacroBo, PlanktonEpisodeNodeCountsAreTheThesisTableForH1To3) {
  // Table 4.2 counts a whole episode of 5 iterations with the receding horizon min(H, left):
  // H = 1: 25, H = 2: 8,025, H = 3: 2,408,025 (thesis: 2.50e1, 8.01e3, 2.40e6).
  const MacroField f = MakeField("plankton", 3);
  const long long expect[4] = {0, 25, 8025, 2408025};
  for (int h = 1; h <= 3; ++h) {
    MacroOptions o;
    o.horizon = h;
    const MacroEpisode ep = RunMacroEpisode(f, o, 11);
    EXPECT_EQ(ep.nodes, expect[h]) << "H = " << h;
    ASSERT_EQ(ep.steps.size(), 5u);
  }
}

// Reward(c, z) must equal 1^T mu + 0.5 beta I computed by a GP that observed, along the path,
// the outputs y_s = mu_{s-1}(x_s) + Psi_s z_s.
TEST(MacroBo, AffineRewardEqualsAGpThatObservedTheSampledOutputs) {
  const MacroField f = Toy(2);
  FieldBelief belief(f.domain, f.prior);
  belief.Observe(f.start, 0.5);
  belief.Observe(f.start + 3, -0.4);
  const double beta = 0.7;
  const PathTree tree = BuildPathTree(belief, f.start, 3, beta);
  bo::Rng rng(9);
  std::normal_distribution<double> normal(0.0, 1.0);
  int checked = 0;
  for (size_t c = 1; c < tree.nodes.size(); c += 3) {
    const PathNode& node = tree.nodes[c];
    if (node.depth < 2) continue;
    std::vector<int> path;
    for (int p = static_cast<int>(c); p != 0; p = tree.nodes[p].parent)
      path.insert(path.begin(), p);
    FieldBelief g = belief;
    std::vector<double> hist;
    for (size_t s = 0; s + 1 < path.size(); ++s) {
      const PathNode& a = tree.nodes[path[s]];
      Eigen::VectorXd mu(tree.kappa), z(tree.kappa);
      for (int k = 0; k < tree.kappa; ++k) mu(k) = g.Mean(a.points[k]), z(k) = normal(rng);
      // Psi_s is the Cholesky factor of g's predictive covariance (noise included).
      Eigen::MatrixXd cov(tree.kappa, tree.kappa);
      for (int i = 0; i < tree.kappa; ++i)
        for (int j = 0; j < tree.kappa; ++j)
          cov(i, j) =
              g.Covariance(a.points[i], a.points[j]) + (i == j ? f.prior.noise_variance : 0.0);
      EXPECT_LT((a.chol * a.chol.transpose() - cov).norm(), 1e-8);
      const Eigen::VectorXd y = mu + a.chol * z;
      for (int k = 0; k < tree.kappa; ++k) g.Observe(a.points[k], y(k)), hist.push_back(z(k));
    }
    double mean_sum = 0;
    for (int loc : node.points) mean_sum += g.Mean(loc);
    // Closed-form information term: 0.5 log|I + sigma_n^-2 Sigma_f| from g's posterior.
    Eigen::MatrixXd sf(tree.kappa, tree.kappa);
    for (int i = 0; i < tree.kappa; ++i)
      for (int j = 0; j < tree.kappa; ++j) sf(i, j) = g.Covariance(node.points[i], node.points[j]);
    const double info =
        0.5 *
        std::log((Eigen::MatrixXd::Identity(tree.kappa, tree.kappa) + sf / f.prior.noise_variance)
                     .determinant());
    EXPECT_NEAR(node.info, info, 1e-8);
    EXPECT_NEAR(tree.Reward(static_cast<int>(c), hist.data(), static_cast<int>(hist.size())),
                mean_sum + 0.5 * beta * info, 1e-8);
    ++checked;
  }
  EXPECT_GT(checked, 10);
}

TEST(MacroBo, InformationTermsFollowTheChainRule) {
  // I[f; y_1, y_2] = I[f; y_1] + I[f; y_2 | y_1] = 0.5 log|I + sigma_n^-2 K_post(x_1 u x_2)|.
  const MacroField f = Toy(4);
  FieldBelief belief(f.domain, f.prior);
  belief.Observe(f.start, 0.1);
  const PathTree tree = BuildPathTree(belief, f.start, 2, 0.0);
  for (size_t c = 1; c < tree.nodes.size(); ++c) {
    const PathNode& node = tree.nodes[c];
    if (node.depth != 2) continue;
    const PathNode& parent = tree.nodes[node.parent];
    std::vector<int> pts = parent.points;
    pts.insert(pts.end(), node.points.begin(), node.points.end());
    const int m = static_cast<int>(pts.size());
    // Posterior covariance given D = {start}: K - k k^T / (k(s,s) + sigma_n^2).
    Eigen::MatrixXd kp(m, m);
    const double kss = belief.Kernel(f.start, f.start) + f.prior.noise_variance;
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < m; ++j)
        kp(i, j) = belief.Kernel(pts[i], pts[j]) -
                   belief.Kernel(pts[i], f.start) * belief.Kernel(pts[j], f.start) / kss;
    const double joint =
        0.5 *
        std::log((Eigen::MatrixXd::Identity(m, m) + kp / f.prior.noise_variance).determinant());
    EXPECT_NEAR(parent.info + node.info, joint, 1e-7);
  }
  // One point, no data: 0.5 log(1 + sigma_y^2 / sigma_n^2).
  MacroField one = Toy(5, 1);
  FieldBelief empty(one.domain, one.prior);
  const PathTree t1 = BuildPathTree(empty, one.start, 1, 0.0);
  EXPECT_NEAR(t1.nodes[1].info, 0.5 * std::log(1 + 1.0 / one.prior.noise_variance), 1e-9);
  EXPECT_NEAR(t1.nodes[1].mean_sum, one.prior.mean, 1e-12);
}

TEST(MacroBo, HorizonOneIsMyopicSelection) {
  const MacroField f = Toy(6);
  FieldBelief belief(f.domain, f.prior);
  belief.Observe(f.start, 1.2);
  belief.Observe(f.start - 21, -0.3);
  for (double beta : {0.0, 0.5, 4.0}) {
    MacroOptions o;
    o.horizon = 1;
    o.beta = beta;
    bo::Rng rng(1);
    const MacroPlan p = PlanMacroAction(belief, f.start, 1, o, rng);
    const auto& acts = f.domain.actions[f.start];
    ASSERT_EQ(p.q.size(), static_cast<Eigen::Index>(acts.size()));
    for (size_t a = 0; a < acts.size(); ++a) {
      double mu = 0;
      for (int loc : acts[a]) mu += belief.Mean(loc);
      EXPECT_NEAR(p.q(a) - 0.5 * beta * BuildPathTree(belief, f.start, 1, 0).nodes[a + 1].info, mu,
                  1e-9);
    }
    o.algo = MacroAlgo::kNonmyopicUcb;
    bo::Rng rng2(1);
    EXPECT_EQ(PlanMacroAction(belief, f.start, 1, o, rng2).action, p.action);
    EXPECT_EQ(p.fallbacks, 0);
    EXPECT_EQ(p.theta, 0.0);  // theta = 0 at the last stage (App. B.1.5 base case)
  }
}

TEST(MacroBo, LikelyValuesAreTheBestPathOfMeans) {
  const MacroField f = Toy(7);
  FieldBelief belief(f.domain, f.prior);
  belief.Observe(f.start, 0.0);
  const PathTree tree = BuildPathTree(belief, f.start, 3, 0.0);
  // Brute force: the best sum of current posterior means over macro-action sequences.
  for (int k : tree.nodes[0].children) {
    double best = -1e300;
    for (int c : tree.nodes[k].children)
      for (int g : tree.nodes[c].children)
        best = std::max(best, tree.nodes[c].mean_sum + tree.nodes[g].mean_sum);
    EXPECT_NEAR(tree.nodes[k].likely, tree.nodes[k].mean_sum + best, 1e-9);
  }
  for (const PathNode& p : tree.nodes) {
    if (p.depth == 3) {
      EXPECT_EQ(p.lipschitz, 0.0);
      EXPECT_EQ(p.theta, 0.0);
    }
    if (p.depth == 1 || p.depth == 2) EXPECT_GT(p.theta, 0.0);
    if (p.depth >= 1) EXPECT_GE(p.alpha, 0.0);
  }
}

TEST(MacroBo, StochasticValueConvergesToTheLikelyValueWhenOutputsAreNearlyKnown) {
  // With the start observed densely around, later outputs barely vary: Q~ -> Q_likely.
  MacroField f = Toy(8);
  f.prior.lengthscale1 = f.prior.lengthscale2 = 5.0;  // nearly constant field
  FieldBelief belief(f.domain, f.prior);
  for (int k = 0; k < 5; ++k) belief.Observe(f.start + k - 2, 0.4);
  MacroOptions o;
  o.horizon = 2;
  o.samples = 200;
  bo::Rng rng(3);
  const MacroPlan p = PlanMacroAction(belief, f.start, 2, o, rng);
  for (Eigen::Index a = 0; a < p.q.size(); ++a) EXPECT_NEAR(p.q(a), p.q_likely(a), 0.05);
}

TEST(MacroBo, AnytimeBoundsAreOrderedAndItsChoiceIsAnAction) {
  const MacroField f = Toy(9);
  FieldBelief belief(f.domain, f.prior);
  belief.Observe(f.start, 0.3);
  MacroOptions o;
  o.algo = MacroAlgo::kAnytime;
  o.horizon = 3;
  o.samples = 20;
  double last_omega = 1e300;
  for (int iters : {1, 10, 60}) {
    o.anytime_iterations = iters;
    bo::Rng rng(4);
    const MacroPlan p = PlanMacroAction(belief, f.start, 3, o, rng);
    EXPECT_GE(p.omega, 0.0);
    EXPECT_LE(p.omega, last_omega + 1e-9);  // the same samples, more refinement
    last_omega = p.omega;
    EXPECT_GE(p.action, 0);
    EXPECT_LT(p.action, 4);
    EXPECT_GT(p.nodes, 0);
  }
  // H = 1: bounds are R -+ lambda exactly, so the choice is myopic.
  o.horizon = 1;
  o.anytime_iterations = 3;
  bo::Rng r1(1), r2(1);
  MacroOptions m;
  m.horizon = 1;
  EXPECT_EQ(PlanMacroAction(belief, f.start, 1, o, r1).action,
            PlanMacroAction(belief, f.start, 1, m, r2).action);
}

TEST(MacroBo, EpisodesGatherTheBudgetAlongMacroActionsAndAreReproducible) {
  const MacroField f = MakeField("plankton", 21);
  for (MacroAlgo algo :
       {MacroAlgo::kEMacro, MacroAlgo::kNonmyopicUcb, MacroAlgo::kGpBucb, MacroAlgo::kAnytime}) {
    MacroOptions o;
    o.algo = algo;
    o.horizon = 2;
    o.samples = 30;
    o.anytime_iterations = 20;
    const MacroEpisode a = RunMacroEpisode(f, o, 5), b = RunMacroEpisode(f, o, 5);
    ASSERT_EQ(a.steps.size(), 5u) << MacroAlgoName(algo);
    int at = f.start;
    double best = f.f(f.start);
    for (const MacroStep& s : a.steps) {
      EXPECT_EQ(s.from, at);
      EXPECT_EQ(s.points, f.domain.actions[at][s.action]);
      EXPECT_LE(s.horizon, 2);
      at = s.points.back();
      for (int loc : s.points) best = std::max(best, f.f(loc));
    }
    EXPECT_EQ(a.avg_output_curve.size(), 21u);
    EXPECT_NEAR(a.simple_regret, f.f.maxCoeff() - best, 1e-12);
    EXPECT_GE(a.simple_regret, 0.0);
    for (size_t k = 1; k < a.regret_curve.size(); ++k)
      EXPECT_LE(a.regret_curve[k], a.regret_curve[k - 1]);
    ASSERT_EQ(b.steps.size(), a.steps.size());
    for (size_t i = 0; i < a.steps.size(); ++i) {
      EXPECT_EQ(a.steps[i].action, b.steps[i].action);
      EXPECT_EQ(a.steps[i].y, b.steps[i].y);
    }
    EXPECT_EQ(a.avg_normalized_output, b.avg_normalized_output);
  }
  EXPECT_EQ(RunMacroEpisode(f, MacroOptions{}, 5).steps.back().horizon, 1);  // receding horizon
}

TEST(MacroBo, FieldsAndMacroActions) {
  for (const std::string& name : FieldNames()) {
    const MacroField f = MakeField(name, 2);
    const MacroDomain& d = f.domain;
    ASSERT_EQ(f.f.size(), d.locations.rows()) << name;
    ASSERT_FALSE(d.actions[f.start].empty()) << name;
    EXPECT_EQ(f.budget % d.kappa, 0);
    for (size_t s = 0; s < d.actions.size(); ++s)
      for (const auto& a : d.actions[s]) {
        ASSERT_EQ(static_cast<int>(a.size()), d.kappa);
        std::set<int> seen(a.begin(), a.end());
        seen.insert(static_cast<int>(s));
        EXPECT_EQ(seen.size(), a.size() + 1) << name << ": a macro-action revisits a location";
        // consecutive locations are adjacent (grid step at most one cell diagonally)
        Eigen::Vector2d prev = d.locations.row(s);
        for (int loc : a) {
          const Eigen::Vector2d p = d.locations.row(loc);
          EXPECT_LT((p - prev).norm(), 0.5 * (name == "corridor" ? 10 : 1)) << name;
          prev = p;
        }
      }
    // The domain does not depend on the realisation; the field does.
    const MacroField g = MakeField(name, 3);
    EXPECT_EQ(g.domain.actions, d.actions);
    EXPECT_GT((g.f - f.f).norm(), 0.0);
  }
  const MacroField p = MakeField("plankton", 0);
  EXPECT_EQ(p.domain.locations.rows(), 2500);
  EXPECT_EQ(p.domain.actions[p.start].size(), 4u);
  EXPECT_EQ(p.start, 25 * 50 + 25);
  const MacroField r = MakeField("road", 0);
  for (const auto& acts : r.domain.actions) EXPECT_LE(acts.size(), 20u);
  EXPECT_THROW(MakeField("lake", 0), std::invalid_argument);
  EXPECT_THROW(MakeField("road", 0, 0), std::invalid_argument);
  // Equal lengthscales give the isotropic draw.
  Eigen::VectorXd ax = Eigen::VectorXd::LinSpaced(7, 0, 1);
  bo::Rng a(3), b(3);
  EXPECT_EQ(bo::SampleGpOnGrid(ax, ax, 0.3, 0.3, 2.0, a), bo::SampleGpOnGrid(ax, ax, 0.3, 2.0, b));
}

TEST(MacroBo, BadOptionsAreRejected) {
  MacroOptions o;
  o.horizon = 0;
  EXPECT_THROW(o.Validate(), std::invalid_argument);
  o = MacroOptions{};
  o.samples = 0;
  EXPECT_THROW(o.Validate(), std::invalid_argument);
  o = MacroOptions{};
  o.beta = -1;
  EXPECT_THROW(o.Validate(), std::invalid_argument);
  o = MacroOptions{};
  o.epsilon = 0;
  EXPECT_THROW(o.Validate(), std::invalid_argument);
  o.epsilon = NAN;
  EXPECT_THROW(o.Validate(), std::invalid_argument);
  EXPECT_THROW(ParseMacroAlgo("emacr0"), std::invalid_argument);
  EXPECT_EQ(ParseMacroAlgo("gp-bucb"), MacroAlgo::kGpBucb);
}

}  // namespace
}  // namespace advbo::algorithms
