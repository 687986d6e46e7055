// Reproduction driver of Ha et al.'s synthetic study (UHE-BO, Sec. 7 and App. D) for
// tools/bench/bench_uhe_bo.sh: Branin, Hartmann-3, Deceptive (n = 3) and h1 (maximised in the
// paper; advbo minimises -h1, the regret is the same), T = 100 iterations after d + 1 Sobol points,
// the five methods of algorithms::UheVariant sharing each seed's initial design (paired).
// After the run the GP's hyperparameters are fitted once more with the method's own loss
// (pseudo-i.i.d. for uhe / ra, MAP on the data otherwise) and its posterior mean is scored
// against the function on 20,000 uniform points (fit MSE, in the function's units).
// One JSON line per run: function, method, seed, regret, regret_curve, fit_mse, arms
// (random-arm picks among odd iterations), seconds.
//
// Usage: bench_uhe_bo --runs 20 --seed 0 --out runs.jsonl [--functions a,b] [--methods a,b]
#include <CLI/CLI.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "algorithms/uhe_bo/uhe_bo.h"
#include "bench_util.h"
#include "bo/allocator.h"
#include "bo/design.h"
#include "bo/hyperparameters.h"
#include "bo/test_functions.h"

namespace {
namespace bo = advbo::bo;
namespace alg = advbo::algorithms;

nlohmann::json RunOne(const std::string& fn, const std::string& method, int horizon, int run,
                      uint64_t seed) {
  const auto t0 = std::chrono::steady_clock::now();
  const bo::TestFunction f = bo::MakeTestFunction(fn, fn == "deceptive" ? 3 : 0);
  const int d = static_cast<int>(f.lb.size());
  const alg::UheVariant v = alg::ParseUheVariant(method);
  bo::Rng srng(seed), rng(bo::DeriveSeed(seed, alg::kUheSeedSalt));
  bo::BoSession s(f.lb, f.ub, alg::UheLoopOptions(d + 1, horizon), srng);
  alg::RunUheBo(s, f.f, v, rng);
  const bo::BoResult& r = s.result();
  std::vector<double> curve;
  double best = INFINITY;
  int random_arms = 0, odd = 0;
  for (const auto& st : r.steps) {
    if (st.ok) best = std::min(best, st.y);
    curve.push_back(std::round((best - f.minimum) * 1e6) / 1e6);
    if (st.extra.contains("t") && st.extra["t"].get<int>() % 2 == 1) {
      ++odd;
      random_arms += st.phase == "random";
    }
  }
  // Final fit with the method's own loss, then the posterior mean on 20,000 uniform points.
  bo::ExactGP gp = s.gp();
  if (v == alg::UheVariant::kUhe || v == alg::UheVariant::kRa) {
    Eigen::MatrixXd xp;
    Eigen::VectorXd yp;
    alg::PseudoIidDataset(gp.X(), gp.y(), 2 * gp.num_data(), rng, &xp, &yp);
    bo::FitHyperparametersOn(&gp, xp, yp, s.options().fit, rng);
  } else {
    bo::FitHyperparameters(&gp, s.options().fit, rng);
  }
  bo::Rng trng(bo::DeriveSeed(seed, 0x7E57));
  const Eigen::MatrixXd u = bo::MakeDesign(
      bo::DesignKind::kUniform, 20000, Eigen::VectorXd::Zero(d), Eigen::VectorXd::Ones(d), trng);
  Eigen::VectorXd mean, var;
  gp.Predict(u, &mean, &var);
  double mse = 0;
  for (Eigen::Index i = 0; i < u.rows(); ++i) {
    const double truth = s.Score(f.f(s.FromUnit(u.row(i).transpose())));
    mse += (mean(i) - truth) * (mean(i) - truth);
  }
  mse /= u.rows();
  return {
      {"function", fn},
      {"method", method},
      {"run", run},
      {"seed", seed},
      {"horizon", horizon},
      {"initial_points", d + 1},
      {"regret", best - f.minimum},
      {"regret_curve", curve},
      {"fit_mse", mse},
      {"random_arms", random_arms},
      {"odd_iterations", odd},
      {"final_kernel", gp.kernel().Describe()},
      {"seconds", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()}};
}

}  // namespace

int main(int argc, char** argv) {
  bo::ConfigureAllocatorForLargeMatrices();
  CLI::App app("UHE-BO synthetic study (Ha et al., Sec. 7 / App. D)");
  int runs = 20, horizon = 100;
  uint64_t seed = 0;
  std::string out, functions = "branin,hartmann3,deceptive,h1",
                   methods = "uhe,map,ra,random-exp3,random";
  app.add_option("--runs", runs, "paired seeds per function and method")
      ->check(CLI::Range(1, 100000));
  app.add_option("--horizon", horizon, "T, iterations after the initial design")
      ->check(CLI::Range(2, 100000));
  app.add_option("--seed", seed, "base seed (run r uses DeriveSeed(seed, r))");
  app.add_option("--functions", functions, "comma-separated: branin hartmann3 deceptive h1");
  app.add_option("--methods", methods, "comma-separated: uhe map ra random-exp3 random");
  app.add_option("--out", out, "JSONL output (OUT.partial until done)")->required();
  CLI11_PARSE(app, argc, argv);
  try {
    advbo::tools::RunGridToJsonl(advbo::tools::SplitList(functions),
                                 advbo::tools::SplitList(methods), runs, out,
                                 [&](const std::string& fn, const std::string& method, int r) {
                                   return RunOne(fn, method, horizon, r, bo::DeriveSeed(seed, r));
                                 });
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_uhe_bo: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
