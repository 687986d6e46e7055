// Micro-benchmark of BOS²'s per-query BO kernels at the CIFAR-10 shape: an additive SE GP over
// a D-dimensional latent box [-1, 1]^D split into M groups, N observations, candidate pools of
// P uniform and L local candidates per group. Times, averaged over R repetitions:
//   move    -- every group's pools redrawn and recomputed (a trust-region move; draw: the
//              drawing alone),
//   sync    -- one observation appended and the pools brought up to date,
//   acquire -- one Add-GP-UCB pass over the pools with the L-BFGS-B polish,
//   value   -- one evaluation of a group's UCB term with its gradient (ComponentUcb::Value),
// and prints one JSON object. Inputs and targets are random (a smooth additive function);
// the costs depend only on the shapes. With --spread s < 1 the observations and candidates lie
// in a box of half-width s around one point (as in a trust region late in a run: nearby points,
// an ill-conditioned kernel matrix).
//
// --single adds the single-precision study of the pools: per group, V = L^{-1} K(X, Z) solved in
// float and in double (single_solve_ms, double_solve_ms, all groups), one new row's extension
// pass V^T l over it (single_extend_ms, double_extend_ms), and the float posterior's largest
// errors against the double one over every candidate: variance and standard deviation as a
// fraction of the prior's (var_error, sd_error) and the mean in output standard deviations
// (mean_error).
//
// Usage: bench_add_gp_ucb [--dim 972] [--groups 12] [--points 240] [--pool 500] [--local 30]
//                         [--reps 10] [--threads 0] [--seed 0] [--spread 1] [--single]
#include <tbb/global_control.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "bo/additive.h"
#include "bo/kernel.h"

namespace {

using advbo::bo::AdditiveCandidatePool;
using advbo::bo::ExactGP;
using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

Eigen::MatrixXd Uniform(Eigen::Index rows, Eigen::Index cols, advbo::bo::Rng& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  return Eigen::MatrixXd::NullaryExpr(rows, cols, [&]() { return u(rng); });
}

double Objective(const Eigen::VectorXd& x) { return (x.array() * 1.7).sin().sum() / x.size(); }

// The single-precision study (--single): for every group of gp, the pool's candidates' columns
// V = L^{-1} K_j(X, Z_j) and the posterior from them, in float and in double, from the same
// kernel values; timings summed over the groups, errors the largest over all candidates.
nlohmann::json SinglePrecisionStudy(const ExactGP& gp, const std::vector<Eigen::MatrixXd>& zg,
                                    int reps) {
  const auto& k = dynamic_cast<const advbo::bo::AdditiveKernel&>(gp.kernel());
  const Eigen::MatrixXd& l = gp.cholesky();
  const Eigen::MatrixXf lf = l.cast<float>();
  const Eigen::Index n = gp.num_data();
  const Eigen::VectorXd w = l.triangularView<Eigen::Lower>().solve(
      ((gp.y().array() - gp.y_shift()) / gp.y_scale()).matrix());  // L^{-1} y~
  const Eigen::VectorXf wf = w.cast<float>();
  double solve_d = 0, solve_f = 0, extend_d = 0, extend_f = 0;
  double var_err = 0, sd_err = 0, mean_err = 0, sink = 0;
  for (size_t j = 0; j < zg.size(); ++j) {
    const auto& kj = k.group(static_cast<int>(j));
    const Eigen::MatrixXd kxz = kj.EvalOnActive(kj.ActiveColumns(gp.X()), zg[j]);  // [N, M]
    Eigen::MatrixXd v;
    Eigen::MatrixXf vf;
    auto t0 = Clock::now();
    for (int r = 0; r < reps; ++r) {
      v = kxz;
      l.triangularView<Eigen::Lower>().solveInPlace(v);
    }
    solve_d += Seconds(t0) / reps;
    t0 = Clock::now();
    for (int r = 0; r < reps; ++r) {
      vf = kxz.cast<float>();
      lf.triangularView<Eigen::Lower>().solveInPlace(vf);
    }
    solve_f += Seconds(t0) / reps;
    // One appended row's pass over V's rows (Sync's extension): l_r^T V [M].
    const Eigen::VectorXd lr = l.row(n - 1).transpose();
    const Eigen::VectorXf lrf = lr.cast<float>();
    t0 = Clock::now();
    for (int r = 0; r < 20 * reps; ++r) sink += (v.transpose() * lr)(0);
    extend_d += Seconds(t0) / (20 * reps);
    t0 = Clock::now();
    for (int r = 0; r < 20 * reps; ++r) sink += (vf.transpose() * lrf)(0);
    extend_f += Seconds(t0) / (20 * reps);
    const double prior = kj.variance();
    const Eigen::ArrayXd var = (prior - v.colwise().squaredNorm().array()).max(0.0);
    const Eigen::ArrayXd var_f =
        (prior - vf.colwise().squaredNorm().cast<double>().array()).max(0.0);
    var_err = std::max(var_err, (var - var_f).abs().maxCoeff() / prior);
    sd_err = std::max(sd_err, (var.sqrt() - var_f.sqrt()).abs().maxCoeff() / std::sqrt(prior));
    const Eigen::VectorXd mean = v.transpose() * w;
    const Eigen::VectorXd mean_f = (vf.transpose() * wf).cast<double>();
    mean_err = std::max(mean_err, (mean - mean_f).cwiseAbs().maxCoeff());
  }
  if (!std::isfinite(sink)) return {};
  return {{"double_solve_ms", 1e3 * solve_d},
          {"single_solve_ms", 1e3 * solve_f},
          {"double_extend_ms", 1e3 * extend_d},
          {"single_extend_ms", 1e3 * extend_f},
          {"var_error", var_err},
          {"sd_error", sd_err},
          {"mean_error", mean_err}};
}

}  // namespace

int main(int argc, char** argv) {
  int dim = 972, groups = 12, points = 240, pool = 500, local = 30, reps = 10, threads = 0;
  unsigned seed = 0;
  double spread = 1.0;
  bool single = false;
  CLI::App app{"Times BOS²'s pool recomputation, pool sync and Add-GP-UCB polish"};
  app.add_option("--dim", dim, "latent dimension D")->check(CLI::Range(2, 100000));
  app.add_option("--groups", groups, "additive groups M")->check(CLI::Range(1, 1000));
  app.add_option("--points", points, "GP observations N")->check(CLI::Range(2, 5000));
  app.add_option("--pool", pool, "uniform candidates per group")->check(CLI::Range(1, 100000));
  app.add_option("--local", local, "local candidates per group")->check(CLI::Range(0, 100000));
  app.add_option("--reps", reps, "repetitions")->check(CLI::Range(1, 100000));
  app.add_option("--threads", threads, "TBB threads (0 = all cores)")->check(CLI::Range(0, 256));
  app.add_option("--seed", seed, "random seed");
  app.add_option("--spread", spread,
                 "half-width of the box of observations and candidates, around one point")
      ->check(CLI::Range(1e-6, 1.0));
  app.add_flag("--single", single, "add the single-precision study of the pools");
  CLI11_PARSE(app, argc, argv);
  if (!(spread >= 1e-6 && spread <= 1.0)) {  // CLI::Range lets NaN through
    std::fprintf(stderr, "bench_add_gp_ucb: error: --spread must be in [1e-6, 1], got %g\n",
                 spread);
    return 1;
  }
  std::optional<tbb::global_control> limit;
  if (threads > 0) limit.emplace(tbb::global_control::max_allowed_parallelism, threads);

  advbo::bo::Rng rng(seed);
  const auto parts = advbo::bo::RandomPartition(dim, groups, rng);
  ExactGP gp(std::make_unique<advbo::bo::AdditiveKernel>(
                 advbo::bo::KernelFamily::kSquaredExponential, dim, parts, 2.0, 1.0 / groups),
             1e-6);
  // Inputs in the box centre +- spread (clipped to [-1, 1]); spread 1 = the whole box.
  const Eigen::VectorXd centre = (1.0 - spread) * Uniform(dim, 1, rng).col(0);
  auto in_box = [&](Eigen::Index rows, Eigen::Index cols, const std::vector<int>* dims) {
    Eigen::MatrixXd u = spread * Uniform(rows, cols, rng);
    for (Eigen::Index c = 0; c < cols; ++c) u.col(c).array() += centre(dims ? (*dims)[c] : c);
    return u;
  };
  const Eigen::MatrixXd x = in_box(points + reps, dim, nullptr);
  Eigen::VectorXd y(x.rows());
  for (Eigen::Index i = 0; i < x.rows(); ++i) y(i) = Objective(x.row(i).transpose());
  gp.SetData(x.topRows(points), y.head(points));
  AdditiveCandidatePool global(gp), near(gp);
  advbo::bo::AddGpUcbOptions opt;
  const Eigen::VectorXd lb = -Eigen::VectorXd::Ones(dim), ub = Eigen::VectorXd::Ones(dim);
  double move = 0, draw = 0, sync = 0, acquire = 0;
  for (int r = 0; r < reps; ++r) {
    auto t0 = Clock::now();
    std::vector<Eigen::MatrixXd> zg, zl;
    for (int j = 0; j < groups; ++j) {
      const auto dj = static_cast<Eigen::Index>(parts[j].size());
      zg.push_back(in_box(pool, dj, &parts[j]));
      Eigen::MatrixXd zn = 0.1 * spread * Uniform(local, dj, rng);
      for (Eigen::Index c = 0; c < dj; ++c) zn.col(c).array() += centre(parts[j][c]);
      zl.push_back(std::move(zn));
    }
    draw += Seconds(t0);
    global.SetAllGroupCandidates(gp, std::move(zg));
    near.SetAllGroupCandidates(gp, std::move(zl));
    move += Seconds(t0);
    gp.AddObservation(x.row(points + r).transpose(), y(points + r));
    t0 = Clock::now();
    global.Sync(gp);
    near.Sync(gp);
    sync += Seconds(t0);
    t0 = Clock::now();
    const Eigen::VectorXd next = advbo::bo::MaximizeAddGpUcbOnPools(
        gp, lb, ub, 10 + r, opt, x.row(0).transpose(), {&global, &near});
    acquire += Seconds(t0);
    if (!next.allFinite()) return 1;
  }
  advbo::bo::ComponentUcb ucb(gp, 0, 2.0);
  Eigen::VectorXd z = Uniform(static_cast<Eigen::Index>(parts[0].size()), 1, rng).col(0), g;
  double value = 0, sum = 0;
  const int calls = 2000;
  auto t0 = Clock::now();
  for (int c = 0; c < calls; ++c) {
    sum += ucb.Value(z, &g);
    z(c % z.size()) = 0.5 * std::sin(sum);
  }
  value = Seconds(t0);
  if (!std::isfinite(sum)) return 1;
  nlohmann::json out = {{"dim", dim},
                        {"spread", spread},
                        {"groups", groups},
                        {"points", points},
                        {"pool", pool},
                        {"local", local},
                        {"reps", reps},
                        {"threads", threads},
                        {"move_ms", 1e3 * move / reps},
                        {"draw_ms", 1e3 * draw / reps},
                        {"sync_ms", 1e3 * sync / reps},
                        {"acquire_ms", 1e3 * acquire / reps},
                        {"value_us", 1e6 * value / calls}};
  if (single) {
    std::vector<Eigen::MatrixXd> zg;
    for (int j = 0; j < groups; ++j)
      zg.push_back(in_box(pool, static_cast<Eigen::Index>(parts[j].size()), &parts[j]));
    out["single"] = SinglePrecisionStudy(gp, zg, reps);
  }
  std::printf("%s\n", out.dump().c_str());
  return 0;
}
