// Reproduction driver of RM-GP-UCB's synthetic study (Dai 2021 thesis, Sec. 7.6.1, Fig. 7.1,
// App. D.2.1) for tools/bench/bench_rmgpucb.sh. Targets are GP draws (SE, lengthscale 0.05,
// variance 1) on a 1000-point grid of [0, 1] (the finite domain |X| = 1000 of Theorem 7.1); the GP
// knows the true hyperparameters (noise variance 0.01). M = 4 meta-tasks of N = 20 points each:
// f(x) + U[-d_i, d_i] + N(0, 0.01) at uniform random inputs. Every method shares a function's
// meta-tasks and an init's initial points (paired).
//
// Methods: gp-ucb (nu = 0), rm-uniform (fixed uniform weights), rm (online weights).
// Settings: "similar" (gaps 0.05, 0.05, 4, 4; eta N^1.5 = 1, epsilon = r = 0.7) and
// "dissimilar" (all gaps 8; r = 0.99 as the thesis' footnote 5, epsilon = 0.7).
// One JSON line per (setting, method, function, init): regret_curve (after each BO
// iteration), nu and the weights per iteration.
//
// Usage: bench_rmgpucb --functions 20 --inits 5 --iterations 50 --out runs.jsonl
#include <CLI/CLI.hpp>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "algorithms/rm_gp_ucb/rm_gp_ucb.h"
#include "bench_util.h"
#include "bo/grid_sample.h"
#include "bo/session.h"

namespace {
namespace bo = advbo::bo;
namespace alg = advbo::algorithms;

constexpr int kGrid = 1000;

struct Problem {
  Eigen::VectorXd grid, f;
  std::vector<alg::MetaTask> metas;
};

Problem MakeProblem(const std::vector<double>& gaps, uint64_t function_seed) {
  Problem p;
  p.grid = Eigen::VectorXd::LinSpaced(kGrid, 0, 1);
  bo::Rng rng(function_seed);
  p.f = bo::SampleGpOnGrid(p.grid, Eigen::VectorXd::Zero(1), 0.05, 1.0, rng).col(0);
  std::uniform_int_distribution<int> pick(0, kGrid - 1);
  std::normal_distribution<double> noise(0, 0.1);
  for (double gap : gaps) {
    alg::MetaTask t;
    t.x.resize(20, 1);
    t.y.resize(20);
    std::uniform_real_distribution<double> shift(-gap, gap);
    for (int j = 0; j < 20; ++j) {
      const int k = pick(rng);
      t.x(j, 0) = p.grid(k);
      t.y(j) = p.f(k) + shift(rng) + noise(rng);
    }
    p.metas.push_back(t);
  }
  return p;
}

nlohmann::json RunOne(const std::string& setting, const std::string& method, int function, int init,
                      int iterations, uint64_t seed) {
  const bool similar = setting == "similar";
  const std::vector<double> gaps =
      similar ? std::vector<double>{0.05, 0.05, 4, 4} : std::vector<double>{8, 8, 8, 8};
  const Problem p = MakeProblem(gaps, bo::DeriveSeed(seed, 1000 + function));
  bo::BoLoopOptions o;
  o.goal = bo::Goal::kMaximize;
  o.acquisition = bo::AcquisitionKind::kUcb;
  o.kernel = bo::KernelFamily::kSquaredExponential;
  o.ard = false;
  o.standardize = false;
  o.fit_hyperparameters = false;
  o.initial_lengthscales = Eigen::VectorXd::Constant(1, 0.05);
  o.initial_signal_variance = 1.0;
  o.noise_variance = 0.01;
  o.initial_points = 2;
  o.budget = 2 + iterations;
  o.candidates = p.grid;
  auto index_of = [&](const Eigen::VectorXd& x) {
    return static_cast<int>(std::lround(x(0) * (kGrid - 1)));
  };
  bo::Rng noise_rng(bo::DeriveSeed(seed, 77 + 1000 * function + init));
  std::normal_distribution<double> noise(0, 0.1);
  const bo::Objective objective = [&](const Eigen::VectorXd& x) {
    return p.f(index_of(x)) + noise(noise_rng);
  };
  alg::RmGpUcbOptions ro;
  ro.use_meta = method != "gp-ucb";
  ro.learn_weights = method == "rm";
  if (!similar) ro.r = 0.99;
  bo::Rng srng(bo::DeriveSeed(seed, 5000 + 100 * function + init)), mrng(seed + 17);
  bo::BoSession s(Eigen::VectorXd::Zero(1), Eigen::VectorXd::Ones(1), o, srng);
  const double f_max = p.f.maxCoeff();
  double best = -1e300;
  std::vector<double> regret, nu;
  std::vector<std::vector<double>> weights;
  alg::RunRmGpUcb(s, objective, p.metas, ro, mrng, [&](const bo::BoStep& st) {
    best = std::max(best, p.f(index_of(st.x)));
    if (st.phase == "bo") {
      regret.push_back(f_max - best);
      nu.push_back(st.extra["nu"].get<double>());
      weights.push_back(st.extra["weights"].get<std::vector<double>>());
    }
    return true;
  });
  return {{"setting", setting},     {"method", method}, {"function", function}, {"init", init},
          {"regret_curve", regret}, {"nu", nu},         {"weights", weights}};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("RM-GP-UCB synthetic study (Dai 2021 thesis, Sec. 7.6.1)");
  int functions = 20, inits = 5, iterations = 50;
  uint64_t seed = 0;
  std::string out, settings = "similar,dissimilar", methods = "gp-ucb,rm-uniform,rm";
  app.add_option("--functions", functions, "GP-drawn target functions")
      ->check(CLI::Range(1, 10000));
  app.add_option("--inits", inits, "initialisations per function")->check(CLI::Range(1, 10000));
  app.add_option("--iterations", iterations, "BO iterations after 2 initial points")
      ->check(CLI::Range(1, 10000));
  app.add_option("--seed", seed, "base seed");
  app.add_option("--settings", settings, "comma-separated: similar dissimilar");
  app.add_option("--methods", methods, "comma-separated: gp-ucb rm-uniform rm");
  app.add_option("--out", out, "JSONL output (OUT.partial until done)")->required();
  CLI11_PARSE(app, argc, argv);
  try {
    const int runs = functions * inits;
    advbo::tools::RunGridToJsonl(
        advbo::tools::SplitList(settings), advbo::tools::SplitList(methods), runs, out,
        [&](const std::string& setting, const std::string& method, int r) {
          return RunOne(setting, method, r / inits, r % inits, iterations, seed);
        });
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_rmgpucb: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
