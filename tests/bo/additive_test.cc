// Add-GP-UCB: component posteriors, group-wise maximisation, decomposition choice.
#include "bo/additive.h"

#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <cmath>

#include "bo/hyperparameters.h"

namespace advbo::bo {
namespace {

Eigen::MatrixXd Uniform(int n, int d, Rng& rng) {
  std::uniform_real_distribution<double> u(-1, 1);
  return Eigen::MatrixXd::NullaryExpr(n, d, [&]() { return u(rng); });
}

// f(x) = -(x0 - 0.5)^2 - (x1 - 0.5)^2 + cos(3 (x2 + x3)) : additive over {0,1} and {2,3}.
double F(const Eigen::VectorXd& x) {
  return -std::pow(x(0) - 0.5, 2) - std::pow(x(1) + 0.3, 2) + std::cos(3 * (x(2) + x(3)));
}

Eigen::VectorXd Eval(const Eigen::MatrixXd& x) {
  Eigen::VectorXd y(x.rows());
  for (int i = 0; i < x.rows(); ++i) y(i) = F(x.row(i).transpose());
  return y;
}

TEST(AddGpUcb, ComponentMeansSumToThePosteriorMean) {
  Rng rng(0);
  Eigen::MatrixXd x = Uniform(30, 4, rng), xs = Uniform(7, 4, rng);
  ExactGP gp(
      std::make_unique<AdditiveKernel>(KernelFamily::kSquaredExponential, 4,
                                       std::vector<std::vector<int>>{{0, 1}, {2, 3}}, 0.7, 0.5),
      1e-3);
  gp.SetData(x, Eval(x));
  Eigen::VectorXd mean, var, m0, v0, m1, v1;
  gp.Predict(xs, &mean, &var);
  ComponentPosterior(gp, 0, xs, &m0, &v0);
  ComponentPosterior(gp, 1, xs, &m1, &v1);
  Eigen::VectorXd sum = (m0 + m1) * gp.y_scale();
  sum.array() += gp.y_shift();
  EXPECT_LT((sum - mean).cwiseAbs().maxCoeff(), 1e-9);
  EXPECT_TRUE((v0.array() >= 0).all() && (v0.array() <= 0.5 + 1e-12).all());
  EXPECT_THROW(ComponentPosterior(gp, 2, xs, &m0, &v0), std::invalid_argument);
}

TEST(AddGpUcb, ComponentUcbMatchesPosteriorAndFiniteDifferences) {
  Rng rng(5);
  Eigen::MatrixXd x = Uniform(25, 4, rng);
  for (auto fam : {KernelFamily::kSquaredExponential, KernelFamily::kMatern52}) {
    ExactGP gp(std::make_unique<AdditiveKernel>(
                   fam, 4, std::vector<std::vector<int>>{{0, 3}, {1, 2}}, 0.6, 0.7),
               1e-3);
    gp.SetData(x, Eval(x));
    ComponentUcb ucb(gp, 1, 1.5);
    Eigen::Vector2d z(0.2, -0.4);
    Eigen::MatrixXd xs = Eigen::MatrixXd::Zero(1, 4);
    xs(0, 1) = z(0);
    xs(0, 2) = z(1);
    Eigen::VectorXd m, v, g;
    ComponentPosterior(gp, 1, xs, &m, &v);
    EXPECT_NEAR(ucb.Value(z, &g), m(0) + 1.5 * std::sqrt(v(0)), 1e-9);
    for (int i = 0; i < 2; ++i) {
      Eigen::Vector2d zp = z, zm = z;
      zp(i) += 1e-6;
      zm(i) -= 1e-6;
      EXPECT_NEAR(g(i), (ucb.Value(zp, nullptr) - ucb.Value(zm, nullptr)) / 2e-6, 1e-5);
    }
  }
}

TEST(AddGpUcb, DecompositionSelectionFindsTheTrueGroups) {
  Rng rng(1);
  Eigen::MatrixXd x = Uniform(80, 4, rng);
  ExactGP gp(std::make_unique<AdditiveKernel>(KernelFamily::kSquaredExponential, 4,
                                              std::vector<std::vector<int>>{{0, 2}, {1, 3}}),
             1e-3);
  gp.SetData(x, Eval(x));
  auto groups = SelectDecomposition(&gp, KernelFamily::kSquaredExponential, 2, 20, rng);
  ASSERT_EQ(groups.size(), 2u);
  auto sorted = groups;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted[0], (std::vector<int>{0, 1}));
  EXPECT_EQ(sorted[1], (std::vector<int>{2, 3}));
  EXPECT_NE(dynamic_cast<const AdditiveKernel*>(&gp.kernel()), nullptr);
}

TEST(AddGpUcb, MaximiserStaysInTheBoxAndOptimisesTheAdditiveFunction) {
  Rng rng(2);
  Eigen::MatrixXd x = Uniform(10, 4, rng);
  Eigen::VectorXd y = Eval(x);
  ExactGP gp(
      std::make_unique<AdditiveKernel>(KernelFamily::kSquaredExponential, 4,
                                       std::vector<std::vector<int>>{{0, 1}, {2, 3}}, 0.5, 0.5),
      1e-4);
  gp.SetData(x, y);
  Eigen::VectorXd lb = Eigen::VectorXd::Constant(4, -1), ub = Eigen::VectorXd::Constant(4, 1);
  AddGpUcbOptions opt;
  FitOptions fit;
  fit.restarts = 1;
  double best = y.maxCoeff();
  for (int t = 1; t <= 40; ++t) {
    Eigen::Index arg;
    gp.y().maxCoeff(&arg);
    Eigen::VectorXd inc = gp.X().row(arg).transpose();
    Eigen::VectorXd xn = MaximizeAddGpUcb(gp, lb, ub, t, opt, inc, rng);
    ASSERT_TRUE((xn.array() >= -1).all() && (xn.array() <= 1).all());
    const double yn = F(xn);
    best = std::max(best, yn);
    gp.AddObservation(xn, yn);
    if (t % 5 == 0) FitHyperparameters(&gp, fit, rng);
  }
  // max f = 1 (x0 = 0.5, x1 = -0.3, x2 + x3 = 0); random search with 50 points rarely
  // exceeds 0.8.
  EXPECT_GT(best, 0.95);
}

TEST(AddGpUcb, VertexCandidatesLandOnTheBoxCorners) {
  Rng rng(3);
  Eigen::MatrixXd x = Uniform(12, 4, rng).array().sign().matrix();  // data at vertices
  ExactGP gp(std::make_unique<AdditiveKernel>(KernelFamily::kSquaredExponential, 4,
                                              std::vector<std::vector<int>>{{0, 1}, {2, 3}}),
             1e-3);
  gp.SetData(x, Eval(x));
  AddGpUcbOptions opt;
  opt.vertex_fraction = 1.0;
  opt.local_candidates = 0;
  opt.polish_iterations = 0;
  Eigen::VectorXd lb = Eigen::VectorXd::Constant(4, -1), ub = Eigen::VectorXd::Constant(4, 1);
  Eigen::VectorXd xn = MaximizeAddGpUcb(gp, lb, ub, 1, opt, x.row(0).transpose(), rng);
  EXPECT_TRUE((xn.array().abs() == 1.0).all()) << xn.transpose();
}

TEST(AdditiveCandidatePool, IncrementalPosteriorEqualsTheDirectOne) {
  Rng rng(3);
  Eigen::MatrixXd x = Uniform(20, 4, rng);
  ExactGP gp(
      std::make_unique<AdditiveKernel>(KernelFamily::kMatern52, 4,
                                       std::vector<std::vector<int>>{{0, 1}, {2, 3}}, 0.6, 0.5),
      1e-3);
  gp.SetData(x, Eval(x));
  AdditiveCandidatePool pool(gp);
  const Eigen::MatrixXd z0 = Uniform(40, 4, rng), z1 = Uniform(25, 4, rng);
  pool.SetCandidates(gp, 0, z0);
  pool.SetCandidates(gp, 1, z1);
  const long recomputes0 = pool.num_recomputes();
  auto check = [&](const char* when) {
    for (int j = 0; j < 2; ++j) {
      Eigen::VectorXd m, v, md, vd;
      pool.Posterior(gp, j, &m, &v);
      ComponentPosterior(gp, j, j == 0 ? z0 : z1, &md, &vd);
      EXPECT_LT((m - md).cwiseAbs().maxCoeff(), 1e-9) << when << " group " << j;
      EXPECT_LT((v - vd).cwiseAbs().maxCoeff(), 1e-9) << when << " group " << j;
    }
  };
  check("after SetCandidates");
  // Appends one and two points at a time: extensions only, no recomputation.
  for (int step = 0; step < 6; ++step) {
    const Eigen::MatrixXd xn = Uniform(step % 2 + 1, 4, rng);
    for (int r = 0; r < xn.rows(); ++r) gp.AddObservation(xn.row(r).transpose(), F(xn.row(r)));
    pool.Sync(gp);
    check("after appends");
  }
  EXPECT_EQ(pool.num_recomputes(), recomputes0);
  // Old targets replaced (a Kriging-believer batch answered): same factor, new means.
  const Eigen::Index n_now = gp.num_data();
  gp.ReplaceTargets(n_now - 3, Eigen::Vector3d(2.0, -1.5, 0.25));
  pool.Sync(gp);
  check("after ReplaceTargets");
  gp.AddObservation(Uniform(1, 4, rng).row(0).transpose(), 0.7);
  gp.ReplaceTargets(n_now - 1, Eigen::Vector2d(-0.3, 1.1));
  pool.Sync(gp);
  check("after an append and ReplaceTargets");
  EXPECT_EQ(pool.num_recomputes(), recomputes0);
  // New hyperparameters: a full recomputation, still equal.
  Eigen::VectorXd theta = gp.LogHyperparameters();
  theta(0) += 0.3;
  gp.SetLogHyperparameters(theta);
  EXPECT_THROW(pool.Posterior(gp, 0, nullptr, nullptr), std::logic_error);
  pool.Sync(gp);
  EXPECT_EQ(pool.num_recomputes(), recomputes0 + 1);
  check("after new hyperparameters");
  // SetData with other points (same count + 1): recomputed, not mistaken for an append.
  Eigen::MatrixXd x2 = Uniform(gp.num_data() + 1, 4, rng);
  gp.SetData(x2, Eval(x2));
  pool.Sync(gp);
  check("after SetData");
  // Targets far from 0 whose shift then moves a lot: the incremental mean (kept relative to
  // the shift at the last recomputation) shows no cancellation.
  Eigen::VectorXd y_far = Eval(x2).array() + 1e10;
  gp.SetData(x2, y_far);
  pool.Sync(gp);
  for (int step = 0; step < 5; ++step) {
    gp.AddObservation(Uniform(1, 4, rng).row(0).transpose(), 1e10 + 50.0 * (step + 1));
    pool.Sync(gp);
    check("after appends far from 0");
  }
}

// A two-group additive GP ({0, 1}, {2, 3}) on 25 uniform points of [-1, 1]^4 and a pool of
// 200 uniform candidates per group.
// Every group's pool posterior of a equals b's exactly (mean and variance, as of gp).
void ExpectSamePosteriors(const ExactGP& gp, const AdditiveCandidatePool& a,
                          const AdditiveCandidatePool& b) {
  for (int j = 0; j < a.num_groups(); ++j) {
    Eigen::VectorXd m1, v1, m2, v2;
    a.Posterior(gp, j, &m1, &v1);
    b.Posterior(gp, j, &m2, &v2);
    EXPECT_EQ(m1, m2) << "group " << j;
    EXPECT_EQ(v1, v2) << "group " << j;
  }
}

struct TwoGroupPool {
  explicit TwoGroupPool(Rng& rng)
      : x(Uniform(25, 4, rng)),
        gp(std::make_unique<AdditiveKernel>(KernelFamily::kSquaredExponential, 4,
                                            std::vector<std::vector<int>>{{0, 1}, {2, 3}}, 0.5,
                                            0.5),
           1e-3),
        pool(gp) {
    gp.SetData(x, Eval(x));
    for (int j = 0; j < 2; ++j) {
      z.push_back(Uniform(200, 4, rng));
      pool.SetCandidates(gp, j, z.back());
    }
  }
  Eigen::MatrixXd x;
  std::vector<Eigen::MatrixXd> z;  // each group's candidates [200, 4]
  ExactGP gp;
  AdditiveCandidatePool pool;
};

TEST(AdditiveCandidatePool, PooledMaximiserMatchesTheBestPoolCandidateWithoutPolish) {
  Rng rng(4);
  TwoGroupPool setup(rng);
  const Eigen::MatrixXd& x = setup.x;
  const ExactGP& gp = setup.gp;
  const AdditiveCandidatePool& pool = setup.pool;
  AddGpUcbOptions opt;
  opt.polish_iterations = 0;
  opt.beta = ExplorationWeight{BetaPolicy::kConstant, 4.0, 0.1};
  const Eigen::VectorXd lb = -Eigen::VectorXd::Ones(4), ub = Eigen::VectorXd::Ones(4);
  const Eigen::VectorXd inc = x.row(0).transpose();
  const Eigen::VectorXd best = MaximizeAddGpUcbOnPools(gp, lb, ub, 1, opt, inc, {&pool});
  for (int j = 0; j < 2; ++j) {
    // Group j's coordinates of the answer: the best of the pool and the incumbent by UCB.
    Eigen::MatrixXd all(201, 4);
    all.topRows(200) = setup.z[j];
    all.row(200) = inc.transpose();
    Eigen::VectorXd m, v;
    ComponentPosterior(gp, j, all, &m, &v);
    Eigen::Index arg;
    Ucb(m, v, 4.0).maxCoeff(&arg);
    for (int i = 0; i < 2; ++i) EXPECT_DOUBLE_EQ(best(2 * j + i), all(arg, 2 * j + i));
  }
  // With polish the answer is at least as good for every group and stays in the box.
  opt.polish_iterations = 20;
  const Eigen::VectorXd polished = MaximizeAddGpUcbOnPools(gp, lb, ub, 1, opt, inc, {&pool});
  EXPECT_TRUE((polished.array() >= -1).all() && (polished.array() <= 1).all());
  for (int j = 0; j < 2; ++j) {
    Eigen::MatrixXd two(2, 4);
    two.row(0) = best.transpose();
    two.row(1) = polished.transpose();
    Eigen::VectorXd m, v;
    ComponentPosterior(gp, j, two, &m, &v);
    const Eigen::VectorXd u = Ucb(m, v, 4.0);
    EXPECT_GE(u(1), u(0) - 1e-9);
  }
}

TEST(AdditiveCandidatePool, OnePassBatchTakesEachGroupsNextBestCandidates) {
  Rng rng(6);
  TwoGroupPool setup(rng);
  const Eigen::MatrixXd& x = setup.x;
  const ExactGP& gp = setup.gp;
  const AdditiveCandidatePool& pool = setup.pool;
  AddGpUcbOptions opt;
  opt.beta = ExplorationWeight{BetaPolicy::kConstant, 4.0, 0.1};
  const Eigen::VectorXd lb = -Eigen::VectorXd::Ones(4), ub = Eigen::VectorXd::Ones(4);
  const Eigen::VectorXd inc = x.row(3).transpose();
  const Eigen::VectorXd single = MaximizeAddGpUcbOnPools(gp, lb, ub, 1, opt, inc, {&pool});
  EXPECT_EQ(MaximizeAddGpUcbOnPoolsBatch(gp, lb, ub, 1, opt, inc, {&pool}, 1)[0], single);
  const auto batch = MaximizeAddGpUcbOnPoolsBatch(gp, lb, ub, 1, opt, inc, {&pool}, 3);
  ASSERT_EQ(batch.size(), 3u);
  EXPECT_EQ(batch[0], single);  // the polished point first
  for (int j = 0; j < 2; ++j) {
    // Group j of point b: the b-th best of the pool candidates and the incumbent by UCB.
    Eigen::MatrixXd all(201, 4);
    all.topRows(200) = setup.z[j];
    all.row(200) = inc.transpose();
    Eigen::VectorXd m, v;
    ComponentPosterior(gp, j, all, &m, &v);
    const Eigen::VectorXd u = Ucb(m, v, 4.0);
    std::vector<int> order(201);
    for (int c = 0; c < 201; ++c) order[c] = c;
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return u(a) > u(b); });
    for (int b = 1; b < 3; ++b)
      for (int i = 0; i < 2; ++i) EXPECT_DOUBLE_EQ(batch[b](2 * j + i), all(order[b], 2 * j + i));
  }
  EXPECT_THROW(MaximizeAddGpUcbOnPoolsBatch(gp, lb, ub, 1, opt, inc, {&pool}, 0),
               std::invalid_argument);
}

TEST(AdditiveCandidatePool, GroupCoordinatesAndAllGroupsAtOnceGiveTheSameCaches) {
  Rng rng(7);
  TwoGroupPool setup(rng);
  ExactGP& gp = setup.gp;
  const AdditiveKernel& k = dynamic_cast<const AdditiveKernel&>(gp.kernel());
  // The same candidates given by their group columns, one group at a time and all at once.
  AdditiveCandidatePool by_group(gp), all(gp);
  std::vector<Eigen::MatrixXd> zj;
  for (int j = 0; j < 2; ++j) {
    zj.push_back(k.group(j).ActiveColumns(setup.z[j]));
    by_group.SetGroupCandidates(gp, j, zj.back());
    EXPECT_EQ(by_group.group_candidates(j), zj.back());
  }
  all.SetAllGroupCandidates(gp, zj);
  auto expect_same = [&](const char* when) {
    for (int j = 0; j < 2; ++j) {
      Eigen::VectorXd m0, v0, m1, v1, m2, v2;
      setup.pool.Posterior(gp, j, &m0, &v0);
      by_group.Posterior(gp, j, &m1, &v1);
      all.Posterior(gp, j, &m2, &v2);
      EXPECT_EQ(m0, m1) << when;
      EXPECT_EQ(v0, v1) << when;
      EXPECT_EQ(m1, m2) << when;
      EXPECT_EQ(v1, v2) << when;
    }
  };
  expect_same("set");
  // After appends the three stay equal (the parallel extension of every group).
  for (int step = 0; step < 3; ++step) {
    const Eigen::MatrixXd xn = Uniform(2, 4, rng);
    for (int r = 0; r < 2; ++r) gp.AddObservation(xn.row(r).transpose(), F(xn.row(r)));
    setup.pool.Sync(gp);
    by_group.Sync(gp);
    all.Sync(gp);
    expect_same("after appends");
  }
  // Replacing every group's candidates after the GP grew: as group by group.
  gp.AddObservation(Uniform(1, 4, rng).row(0).transpose(), 0.3);
  zj = {Uniform(30, 2, rng), Uniform(0, 2, rng)};
  by_group.SetGroupCandidates(gp, 0, zj[0]);
  by_group.SetGroupCandidates(gp, 1, zj[1]);
  all.SetAllGroupCandidates(gp, zj);
  ExpectSamePosteriors(gp, by_group, all);
  EXPECT_EQ(all.group_candidates(1).rows(), 0);
  // Wrong shapes: named, nothing changed.
  EXPECT_THROW(all.SetGroupCandidates(gp, 0, Uniform(5, 3, rng)), std::invalid_argument);
  EXPECT_THROW(all.SetAllGroupCandidates(gp, {Uniform(5, 2, rng)}), std::invalid_argument);
  EXPECT_THROW(all.SetAllGroupCandidates(gp, {Uniform(5, 2, rng), Uniform(5, 4, rng)}),
               std::invalid_argument);
  EXPECT_EQ(all.group_candidates(0), zj[0]);
}

TEST(AdditiveCandidatePool, UpdatingSomeRowsComputesOnlyThoseAndMatchesTheDirectPosterior) {
  Rng rng(11);
  TwoGroupPool setup(rng);
  ExactGP& gp = setup.gp;
  AdditiveCandidatePool& pool = setup.pool;
  const AdditiveKernel& k = dynamic_cast<const AdditiveKernel&>(gp.kernel());
  // Grow the GP first, so the staying rows' caches are extensions and the new rows fresh.
  for (int r = 0; r < 3; ++r) {
    const Eigen::MatrixXd xn = Uniform(1, 4, rng);
    gp.AddObservation(xn.row(0).transpose(), F(xn.row(0)));
  }
  std::vector<Eigen::MatrixXd> zj = {pool.group_candidates(0), pool.group_candidates(1)};
  for (int c = 0; c < 200; c += 7) zj[0].row(c) = Uniform(1, 2, rng);  // 29 rows of group 0
  zj[1].row(5) = Uniform(1, 2, rng);                                   // 1 row of group 1
  const long before = pool.num_columns_computed();
  const long recomputes = pool.num_recomputes();
  pool.UpdateAllGroupCandidates(gp, zj);
  EXPECT_EQ(pool.num_columns_computed() - before, 29 + 1);
  EXPECT_EQ(pool.num_recomputes(), recomputes);  // the GP only grew: no full recomputation
  for (int j = 0; j < 2; ++j) {
    EXPECT_EQ(pool.group_candidates(j), zj[j]);
    Eigen::MatrixXd xs = Eigen::MatrixXd::Zero(200, 4);
    const auto& dims = k.group(j).active_dims();
    for (size_t i = 0; i < dims.size(); ++i) xs.col(dims[i]) = zj[j].col(i);
    Eigen::VectorXd m0, v0, m1, v1;
    ComponentPosterior(gp, j, xs, &m0, &v0);
    pool.Posterior(gp, j, &m1, &v1);
    EXPECT_LT((m0 - m1).cwiseAbs().maxCoeff(), 1e-9);
    EXPECT_LT((v0 - v1).cwiseAbs().maxCoeff(), 1e-9);
  }
  // The same rows again: nothing to compute. Another row count: the group recomputed.
  pool.UpdateAllGroupCandidates(gp, zj);
  EXPECT_EQ(pool.num_columns_computed() - before, 30);
  pool.UpdateAllGroupCandidates(gp, {zj[0], Uniform(40, 2, rng)});
  EXPECT_EQ(pool.num_columns_computed() - before, 70);
  EXPECT_THROW(pool.UpdateAllGroupCandidates(gp, {zj[0], Uniform(5, 3, rng)}),
               std::invalid_argument);
}

TEST(AdditiveCandidatePool, UpdatingAfterTheGpChangedComputesEveryRowOnceAsSetAll) {
  Rng rng(12);
  TwoGroupPool setup(rng);
  ExactGP& gp = setup.gp;
  AdditiveCandidatePool& pool = setup.pool;
  // New hyperparameters: the old caches are stale, so a full recomputation is due.
  Eigen::VectorXd theta = gp.LogHyperparameters();
  theta(0) += 0.3;
  gp.SetLogHyperparameters(theta);
  std::vector<Eigen::MatrixXd> zj = {pool.group_candidates(0), pool.group_candidates(1)};
  zj[0].row(3) = Uniform(1, 2, rng);
  const long before = pool.num_columns_computed();
  pool.UpdateAllGroupCandidates(gp, zj);
  const long rows = zj[0].rows() + zj[1].rows();
  EXPECT_EQ(pool.num_columns_computed() - before, rows);  // each row once, none twice
  AdditiveCandidatePool all(gp);
  all.SetAllGroupCandidates(gp, zj);
  ExpectSamePosteriors(gp, pool, all);
}

TEST(AdditiveCandidatePool, PooledBatchDoesNotDependOnTheThreadCount) {
  Rng rng(8);
  // Six groups of two on [-1, 1]^12, so the parallel pass has groups to share out.
  std::vector<std::vector<int>> groups;
  for (int j = 0; j < 6; ++j) groups.push_back({2 * j, 2 * j + 1});
  ExactGP gp(
      std::make_unique<AdditiveKernel>(KernelFamily::kSquaredExponential, 12, groups, 0.7, 1.0 / 6),
      1e-4);
  const Eigen::MatrixXd x = Uniform(40, 12, rng);
  Eigen::VectorXd y(40);
  for (int i = 0; i < 40; ++i) y(i) = (x.row(i).array() * 2.0).sin().sum();
  gp.SetData(x, y);
  AdditiveCandidatePool pool(gp);
  std::vector<Eigen::MatrixXd> zj;
  for (int j = 0; j < 6; ++j) zj.push_back(Uniform(150, 2, rng));
  pool.SetAllGroupCandidates(gp, zj);
  AddGpUcbOptions opt;
  opt.polish_starts = 2;
  const Eigen::VectorXd lb = -Eigen::VectorXd::Ones(12), ub = Eigen::VectorXd::Ones(12);
  auto run = [&](int threads) {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
    return MaximizeAddGpUcbOnPoolsBatch(gp, lb, ub, 5, opt, x.row(2).transpose(), {&pool}, 3);
  };
  const auto serial = run(1), parallel = run(2);
  ASSERT_EQ(serial.size(), 3u);
  for (int b = 0; b < 3; ++b) EXPECT_EQ(serial[b], parallel[b]) << "batch point " << b;
}

TEST(GpPrecision, IncrementalInverseAndFastComponentUcbMatchTheDirectOnes) {
  Rng rng(5);
  Eigen::MatrixXd x = Uniform(15, 4, rng);
  ExactGP gp(
      std::make_unique<AdditiveKernel>(KernelFamily::kSquaredExponential, 4,
                                       std::vector<std::vector<int>>{{0, 1}, {2, 3}}, 0.8, 0.5),
      1e-4);
  gp.SetData(x, Eval(x));
  GpPrecision prec;
  EXPECT_THROW(ComponentUcb(gp, 0, 2.0, &prec), std::invalid_argument);  // not synced
  prec.Sync(gp);
  auto direct_inverse = [&]() {
    const Eigen::MatrixXd& l = gp.cholesky();
    const Eigen::MatrixXd k = l * l.transpose();
    return Eigen::MatrixXd(k.inverse());
  };
  auto rel_err = [](const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
    return (a - b).norm() / b.norm();
  };
  EXPECT_LT(rel_err(prec.matrix(), direct_inverse()), 1e-8);
  for (int step = 0; step < 5; ++step) {
    const Eigen::MatrixXd xn = Uniform(step % 2 + 1, 4, rng);
    for (int r = 0; r < xn.rows(); ++r) gp.AddObservation(xn.row(r).transpose(), F(xn.row(r)));
    prec.Sync(gp);
    EXPECT_TRUE(prec.Matches(gp));
    EXPECT_LT(rel_err(prec.matrix(), direct_inverse()), 1e-8) << "after append " << step;
  }
  EXPECT_EQ(prec.num_recomputes(), 1);
  // Same UCB value and gradient with and without the precision matrix.
  for (int j = 0; j < 2; ++j) {
    ComponentUcb slow(gp, j, 1.7), fast(gp, j, 1.7, &prec);
    for (int t = 0; t < 5; ++t) {
      const Eigen::VectorXd z = Uniform(1, 2, rng).row(0).transpose();
      Eigen::VectorXd g1, g2;
      const double v1 = slow.Value(z, &g1), v2 = fast.Value(z, &g2);
      EXPECT_NEAR(v1, v2, 1e-7);
      EXPECT_LT((g1 - g2).cwiseAbs().maxCoeff(), 1e-6);
    }
  }
  // A refit changes the hyperparameters: Matches turns false until the next Sync recomputes.
  Eigen::VectorXd theta = gp.LogHyperparameters();
  theta(1) += 0.2;
  gp.SetLogHyperparameters(theta);
  EXPECT_FALSE(prec.Matches(gp));
  prec.Sync(gp);
  EXPECT_EQ(prec.num_recomputes(), 2);
  EXPECT_LT(rel_err(prec.matrix(), direct_inverse()), 1e-8);
}

TEST(ExplorationWeight, PoliciesAndParsing) {
  ExplorationWeight c = ParseExplorationWeight("constant:4");
  EXPECT_DOUBLE_EQ(c.Beta(10, 3), 4.0);
  ExplorationWeight k = ParseExplorationWeight("kandasamy2015");
  EXPECT_NEAR(k.Beta(5, 10), 0.2 * 10 * std::log(10.0), 1e-12);
  ExplorationWeight r = ParseExplorationWeight("r2b2_ref");
  EXPECT_NEAR(r.Beta(1, 4), 0.5 * 4 * std::log(2.0), 1e-12);
  ExplorationWeight s = ParseExplorationWeight("srinivas2010");
  EXPECT_NEAR(s.Beta(2, 1, 7), 2 * std::log(7 * 4 * M_PI * M_PI / (6 * 0.1)), 1e-12);
  EXPECT_GT(s.Beta(3, 2), s.Beta(2, 2));
  EXPECT_THROW(ParseExplorationWeight("ucb"), std::invalid_argument);
  // srinivas2010:DELTA: beta_t = 2 log(|D| t^2 pi^2 / (6 delta)) on a finite domain (Thm 1).
  const ExplorationWeight s05 = ParseExplorationWeight("srinivas2010:0.05");
  EXPECT_DOUBLE_EQ(s05.delta, 0.05);
  EXPECT_NEAR(s05.Beta(3, 2, 100), 2 * std::log(100 * 9 * M_PI * M_PI / (6 * 0.05)), 1e-12);
  for (const char* bad : {"srinivas2010:0", "srinivas2010:1", "srinivas2010:x",
                          "srinivas2010:", "srinivas2010x", "constant:", "constant:abc",
                          "constantx", "constant:-1", "constant:1e4444", "srinivas2010:1e-999999"})
    EXPECT_THROW(ParseExplorationWeight(bad), std::invalid_argument) << bad;
  Eigen::VectorXd u = Ucb(Eigen::Vector2d(1, 2), Eigen::Vector2d(4, 0), 9.0);
  EXPECT_DOUBLE_EQ(u(0), 7.0);
  EXPECT_DOUBLE_EQ(u(1), 2.0);
}

}  // namespace
}  // namespace advbo::bo
