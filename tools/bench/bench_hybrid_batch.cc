// Reproduction driver of Azimi, Jalali and Fern 2012 ("Hybrid Batch Bayesian Optimization",
// Table 2) for tools/bench/bench_hybrid_batch.sh: the six synthetic benchmarks in the paper's
// setting (Sec. 4; algorithms::Azimi2012LoopOptions), 100 runs each, methods sharing each
// run's initial design (paired):
//   sequential     EI one point at a time (bo::RunBo)
//   random         uniform random points
//   hybrid:F       Algorithm 1 with fantasy F in {M, ymax+, ymax, mu, ymin, random}
//   cl:mu          constant liar with y^ = mu (epsilon = inf: always n_b = 5 points)
// Writes one JSON line per run: function, method, run, seed, best_y, regret, batches, n_l,
// speedup, batch_sizes, regret_curve (simple regret after every evaluation), seconds.
//
// Usage: bench_hybrid_batch --runs 100 --seed 0 --out runs.jsonl [--functions a,b] [--methods ..]
#include <CLI/CLI.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "algorithms/hybrid_batch/hybrid_batch.h"
#include "bench_util.h"
#include "bo/allocator.h"
#include "bo/bo_loop.h"
#include "bo/design.h"
#include "bo/test_functions.h"

namespace {
using advbo::algorithms::Fantasy;
namespace bo = advbo::bo;
namespace alg = advbo::algorithms;

// A benchmark of Table 1 in the paper's (maximisation) form on the paper's box.
struct Problem {
  std::string name;
  bo::Objective f;  // maximised
  Eigen::VectorXd lb, ub;
  double maximum;
};

Problem MakeProblem(const std::string& name) {
  auto negated = [](const std::string& fn, int d) {
    const bo::TestFunction t = bo::MakeTestFunction(fn, d);
    return Problem{fn, [f = t.f](const Eigen::VectorXd& x) { return -f(x); }, t.lb, t.ub,
                   -t.minimum};
  };
  if (name == "cosines") return negated("cosines", 2);  // 1 - (u^2 + v^2 - 0.3 cos ...)
  if (name == "rosenbrock") {                           // 10 - 100 (y - x^2)^2 - (1 - x)^2
    Problem p = negated("rosenbrock", 2);
    p.f = [g = p.f](const Eigen::VectorXd& x) { return 10.0 + g(x); };
    p.lb = Eigen::VectorXd::Zero(2);
    p.ub = Eigen::VectorXd::Ones(2);
    p.maximum = 10.0;
    return p;
  }
  if (name == "hartmann3") return negated("hartmann3", 3);
  if (name == "hartmann6") return negated("hartmann6", 6);
  if (name == "michalewicz") return negated("michalewicz", 5);  // over [0, pi]^5
  if (name == "shekel") {                                       // over [3, 6]^4
    Problem p = negated("shekel10", 4);
    p.name = "shekel";
    p.lb = Eigen::VectorXd::Constant(4, 3.0);
    p.ub = Eigen::VectorXd::Constant(4, 6.0);
    return p;
  }
  throw std::invalid_argument("unknown function '" + name + "'");
}

nlohmann::json RunOne(const Problem& p, const std::string& method, int run, uint64_t seed) {
  const auto t0 = std::chrono::steady_clock::now();
  const bo::BoLoopOptions opt = alg::Azimi2012LoopOptions(p.lb, p.ub);
  const int d = static_cast<int>(p.lb.size());
  const int n_init = opt.initial_points, n_l = opt.budget - n_init;
  bo::Rng rng(seed), batch_rng(bo::DeriveSeed(seed, alg::kHybridBatchSeedSalt));
  std::vector<double> ys;
  nlohmann::json rec = {{"function", p.name}, {"method", method}, {"run", run}, {"seed", seed}};
  if (method == "random") {
    // The same initial design as the sessions (one draw of n_init points), then n_l more.
    const Eigen::MatrixXd init = bo::MakeDesign(
        bo::DesignKind::kUniform, n_init, Eigen::VectorXd::Zero(d), Eigen::VectorXd::Ones(d), rng);
    const Eigen::MatrixXd rest = bo::MakeDesign(
        bo::DesignKind::kUniform, n_l, Eigen::VectorXd::Zero(d), Eigen::VectorXd::Ones(d), rng);
    for (int i = 0; i < n_init + n_l; ++i) {
      const Eigen::VectorXd u =
          i < n_init ? init.row(i).transpose() : rest.row(i - n_init).transpose();
      ys.push_back(p.f(p.lb + u.cwiseProduct(p.ub - p.lb)));
    }
    rec["batches"] = 1;
    rec["batch_sizes"] = {n_l};
  } else if (method == "sequential") {
    const bo::BoResult r = bo::RunBo(p.f, p.lb, p.ub, opt, rng);
    for (const auto& s : r.steps) ys.push_back(s.y);
    rec["batches"] = n_l;
    rec["batch_sizes"] = std::vector<int>(n_l, 1);
  } else {
    alg::HybridBatchOptions h = alg::Azimi2012HybridOptions(d);
    const auto colon = method.find(':');
    if (colon == std::string::npos) throw std::invalid_argument("unknown method " + method);
    const std::string kind = method.substr(0, colon);
    h.fantasy = alg::ParseFantasy(method.substr(colon + 1));
    if (kind == "cl")
      h.epsilon = std::numeric_limits<double>::infinity();
    else if (kind != "hybrid")
      throw std::invalid_argument("unknown method " + method);
    h.known_optimum = p.maximum;
    bo::BoSession s(p.lb, p.ub, opt, rng);
    const alg::HybridBatchResult hr = alg::RunHybridBatch(s, p.f, h, batch_rng);
    for (const auto& st : s.result().steps) ys.push_back(st.y);
    rec["batches"] = hr.batches;
    rec["batch_sizes"] = hr.batch_sizes;
  }
  std::vector<double> curve;
  double best = -std::numeric_limits<double>::infinity();
  for (double y : ys) {
    best = std::max(best, y);
    curve.push_back(std::round((p.maximum - best) * 1e6) / 1e6);
  }
  rec["n_l"] = n_l;
  rec["best_y"] = best;
  rec["regret"] = p.maximum - best;
  rec["speedup"] = 1.0 - rec["batches"].get<double>() / n_l;
  rec["regret_curve"] = curve;
  rec["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return rec;
}

}  // namespace

int main(int argc, char** argv) {
  bo::ConfigureAllocatorForLargeMatrices();
  CLI::App app("Azimi et al. 2012 Table 2 reproduction (hybrid batch EI)");
  int runs = 100;
  uint64_t seed = 0;
  std::string out, functions = "cosines,rosenbrock,hartmann3,michalewicz,shekel,hartmann6";
  std::string methods =
      "sequential,random,hybrid:M,hybrid:ymax+,hybrid:ymax,hybrid:mu,"
      "hybrid:ymin,hybrid:random,cl:mu";
  app.add_option("--runs", runs, "runs per function and method")->check(CLI::Range(1, 100000));
  app.add_option("--seed", seed, "base seed (run r uses DeriveSeed(seed, r))");
  app.add_option("--functions", functions, "comma-separated benchmark names");
  app.add_option("--methods", methods, "comma-separated methods");
  app.add_option("--out", out, "JSONL output (written to OUT.partial, renamed when done)")
      ->required();
  CLI11_PARSE(app, argc, argv);
  try {
    std::map<std::string, Problem> problems;
    for (const std::string& fn : advbo::tools::SplitList(functions)) problems[fn] = MakeProblem(fn);
    advbo::tools::RunGridToJsonl(
        advbo::tools::SplitList(functions), advbo::tools::SplitList(methods), runs, out,
        [&](const std::string& fn, const std::string& method, int r) {
          return RunOne(problems.at(fn), method, r, bo::DeriveSeed(seed, r));
        });
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_hybrid_batch: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
