// Micro-benchmark of BOS²'s per-query BO kernels at the CIFAR-10 shape: an additive SE GP over
// a D-dimensional latent box [-1, 1]^D split into M groups, N observations, candidate pools of
// P uniform and L local candidates per group. Times, averaged over R repetitions:
//   move    -- every group's pools redrawn and recomputed (a trust-region move; draw: the
//              drawing alone),
//   sync    -- one observation appended and the pools brought up to date,
//   acquire -- one Add-GP-UCB pass over the pools with the L-BFGS-B polish,
//   value   -- one evaluation of a group's UCB term with its gradient (ComponentUcb::Value),
// and prints one JSON object. Inputs and targets are random (a smooth additive function);
// the costs depend only on the shapes.
//
// Usage: bench_add_gp_ucb [--dim 972] [--groups 12] [--points 240] [--pool 500] [--local 30]
//                         [--reps 10] [--threads 0] [--seed 0]
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

}  // namespace

int main(int argc, char** argv) {
  int dim = 972, groups = 12, points = 240, pool = 500, local = 30, reps = 10, threads = 0;
  unsigned seed = 0;
  CLI::App app{"Times BOS²'s pool recomputation, pool sync and Add-GP-UCB polish"};
  app.add_option("--dim", dim, "latent dimension D")->check(CLI::Range(2, 100000));
  app.add_option("--groups", groups, "additive groups M")->check(CLI::Range(1, 1000));
  app.add_option("--points", points, "GP observations N")->check(CLI::Range(2, 5000));
  app.add_option("--pool", pool, "uniform candidates per group")->check(CLI::Range(1, 100000));
  app.add_option("--local", local, "local candidates per group")->check(CLI::Range(0, 100000));
  app.add_option("--reps", reps, "repetitions")->check(CLI::Range(1, 100000));
  app.add_option("--threads", threads, "TBB threads (0 = all cores)")->check(CLI::Range(0, 256));
  app.add_option("--seed", seed, "random seed");
  CLI11_PARSE(app, argc, argv);
  std::optional<tbb::global_control> limit;
  if (threads > 0) limit.emplace(tbb::global_control::max_allowed_parallelism, threads);

  advbo::bo::Rng rng(seed);
  const auto parts = advbo::bo::RandomPartition(dim, groups, rng);
  ExactGP gp(std::make_unique<advbo::bo::AdditiveKernel>(
                 advbo::bo::KernelFamily::kSquaredExponential, dim, parts, 2.0, 1.0 / groups),
             1e-6);
  const Eigen::MatrixXd x = Uniform(points + reps, dim, rng);
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
      zg.push_back(Uniform(pool, dj, rng));
      zl.push_back(0.1 * Uniform(local, dj, rng));
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
  std::printf("%s\n", out.dump().c_str());
  return 0;
}
