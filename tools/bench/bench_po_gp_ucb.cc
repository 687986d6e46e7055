// Reproduction driver of PO-GP-UCB's experiments (Kharkovskii et al. 2020, Sec. 4 and App. A;
// Kharkovskii 2020 thesis, Sec. 3.6) for tools/bench/bench_po_gp_ucb.sh.
//
// Studies:
//  * synthetic: a 100 x 100 uniform grid (n = 10,000, d = 2) on [0, W]^2 (the paper gives no
//    domain; W = --synthetic-width, default 5: 4 lengthscales across), f drawn from a GP (SE, l
//    = 1.25, signal variance 1) per run, noise variance 1e-5, delta = 1e-5; the GP uses the true
//    hyperparameters;
//  * branin: a 31 x 31 grid of Branin-Hoo's domain (n = 961), f = -log(branin) (the paper's
//    log transform of the negated function) standardised over the grid, delta = 1e-3; inputs
//    made isotropic by an ARD SE fit on the whole grid (MakeBranin), whose kernel the GP keeps.
// Inputs centred and normalised to max-norm 25 (Sec. 4) before anything else; 3 random initial
// rows and T = 50 GP-UCB iterations (beta_t of Algorithm 2, delta' = 0.025).
// Methods: "gp-ucb" (non-private, Algorithm 2 on the records themselves) and "po:LOGEPS:R"
// (Algorithm 1 with epsilon = e^LOGEPS and projection dimension R, then Algorithm 2). Every
// method of a run shares its function and initial rows (paired); the projection M is drawn per
// run and method. One JSON line per (study, method, run): regret_curve (simple regret after
// each iteration, in units of the function's standard deviation over the grid), omega,
// sigma_min, lifted.
//
// Usage: bench_po_gp_ucb --runs 50 --studies synthetic,branin --methods gp-ucb,po:1.1:10 --out x
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "algorithms/po_gp_ucb/po_gp_ucb.h"
#include "bench_util.h"
#include "bo/gp.h"
#include "bo/grid_sample.h"
#include "bo/hyperparameters.h"
#include "bo/kernel.h"
#include "bo/test_functions.h"

namespace {
namespace bo = advbo::bo;
namespace alg = advbo::algorithms;

constexpr int kInit = 3;

struct Problem {
  Eigen::MatrixXd x;  // [n, 2] records, normalised to max-norm 25
  Eigen::VectorXd f;  // [n] noise-free objective (maximised)
  double scale = 1;   // normalisation factor (record units per original unit)
  double delta = 1e-5;
  double lengthscale = 1.25;  // before normalisation (isotropic SE)
  double signal_variance = 1.0, noise_variance = 1e-5;
};

// The Branin-Hoo study's fixed problem (App. A): f = -log(branin) on a 31 x 31 grid of its
// domain, standardised over the grid; an ARD SE GP fitted by maximum likelihood on all 961
// points gives the lengthscales that make the inputs isotropic (footnote 4: each coordinate
// divided by its lengthscale), then the inputs are normalised to max-norm 25 and the modeler
// uses the fitted (now isotropic) kernel, fixed.
Problem MakeBranin(uint64_t seed) {
  const bo::TestFunction b = bo::MakeTestFunction("branin");
  const int k = 31;
  Eigen::MatrixXd raw(k * k, 2);
  Eigen::VectorXd y(k * k);
  for (int i = 0; i < k; ++i)
    for (int j = 0; j < k; ++j) {
      Eigen::Vector2d x(b.lb(0) + (b.ub(0) - b.lb(0)) * i / (k - 1),
                        b.lb(1) + (b.ub(1) - b.lb(1)) * j / (k - 1));
      raw.row(i * k + j) = x.transpose();
      y(i * k + j) = -std::log(b.f(x));
    }
  Problem p;
  const double mean = y.mean(), sd = std::sqrt((y.array() - mean).square().mean());
  p.f = (y.array() - mean) / sd;
  bo::ExactGP gp(std::make_unique<bo::StationaryKernel>(bo::KernelFamily::kSquaredExponential, 2,
                                                        true, std::vector<int>{}, 5.0, 1.0),
                 1e-4, /*standardize=*/false);
  gp.SetData(raw, p.f);
  bo::FitOptions fit;
  fit.lengthscale_min = 0.1;
  fit.lengthscale_max = 100;
  fit.restarts = 8;
  bo::Rng rng(bo::DeriveSeed(seed, 31));
  const bo::FitResult fr = bo::FitHyperparameters(&gp, fit, rng);
  const auto& kern = dynamic_cast<const bo::StationaryKernel&>(gp.kernel());
  const Eigen::VectorXd ls = kern.lengthscales();
  p.x = alg::NormalizeMaxNorm(raw * ls.cwiseInverse().asDiagonal(), 25.0, &p.scale);
  p.lengthscale = 1.0;  // isotropic after the division
  p.signal_variance = std::exp(kern.LogParams()(2));
  p.noise_variance = std::max(gp.noise_variance(), 1e-6);
  p.delta = 1e-3;
  std::fprintf(stderr,
               "branin: fitted lengthscales %.3f %.3f, signal variance %.3f, noise %.2e, log "
               "marginal likelihood %.1f\n",
               ls(0), ls(1), p.signal_variance, p.noise_variance, fr.log_marginal_likelihood);
  return p;
}

Problem MakeProblem(const std::string& study, int run, uint64_t seed, double width,
                    const Problem& branin) {
  Problem p;
  if (study == "synthetic") {
    const int k = 100;
    const Eigen::VectorXd axis = Eigen::VectorXd::LinSpaced(k, 0, width);
    bo::Rng rng(bo::DeriveSeed(seed, 1000 + run));
    const Eigen::MatrixXd grid = bo::SampleGpOnGrid(axis, axis, 1.25, 1.0, rng);
    Eigen::MatrixXd raw(k * k, 2);
    p.f.resize(k * k);
    for (int i = 0; i < k; ++i)
      for (int j = 0; j < k; ++j) {
        raw.row(i * k + j) << axis(i), axis(j);
        p.f(i * k + j) = grid(i, j);
      }
    p.x = alg::NormalizeMaxNorm(raw, 25.0, &p.scale);
    return p;
  }
  if (study == "branin") return branin;
  throw std::invalid_argument("unknown study '" + study + "' (use synthetic, branin)");
}

nlohmann::json RunOne(const std::string& study, const std::string& method, int run, int iterations,
                      uint64_t seed, double width, const Problem& branin) {
  const Problem p = MakeProblem(study, run, seed, width, branin);
  nlohmann::json rec = {{"study", study}, {"method", method}, {"run", run}};
  Eigen::MatrixXd z = p.x;
  double lengthscale_z = p.lengthscale * p.scale;  // isotropic SE, record units
  if (method != "gp-ucb") {
    std::string spec = method;
    for (char& ch : spec) ch = ch == ':' ? ',' : ch;
    const std::vector<std::string> parts = advbo::tools::SplitList(spec);
    if (parts.size() != 3 || parts[0] != "po")
      throw std::invalid_argument("method '" + method + "': use gp-ucb or po:LOGEPS:R");
    alg::CuratorOptions c{std::exp(std::stod(parts[1])), p.delta, std::stoi(parts[2])};
    uint64_t h = 1469598103934665603ULL;  // FNV-1a of the method: its own projection stream
    for (unsigned char ch : method) h = (h ^ ch) * 1099511628211ULL;
    bo::Rng curator(bo::DeriveSeed(seed ^ h, 900000 + run));
    const alg::CuratorRelease rel = alg::ReleaseDataset(p.x, c, curator);
    z = rel.z;
    rec["omega"] = rel.omega;
    rec["sigma_min"] = rel.sigma_min;
    rec["lifted"] = rel.lifted;
    rec["r"] = c.r;
    rec["log_epsilon"] = std::stod(parts[1]);
  }
  bo::BoLoopOptions base;
  base.goal = bo::Goal::kMaximize;
  base.budget = kInit + iterations;
  base.initial_points = kInit;
  base.kernel = bo::KernelFamily::kSquaredExponential;
  base.noise_variance = p.noise_variance;
  const auto [lb, ub] = alg::ModelerBox(z);
  base.fit_hyperparameters = false;  // the known (synthetic) or once-fitted (Branin) kernel
  base.standardize = false;
  base.initial_signal_variance = p.signal_variance;
  base.initial_lengthscales = Eigen::VectorXd::Constant(1, lengthscale_z / (ub(0) - lb(0)));
  const bo::BoLoopOptions o = alg::ModelerLoopOptions(z, base, alg::ModelerOptions{});
  bo::Rng loop_rng(bo::DeriveSeed(seed, 5000 + run));  // same initial rows for every method
  bo::Rng noise_rng(bo::DeriveSeed(seed, 7000 + run));
  std::normal_distribution<double> noise(0, std::sqrt(p.noise_variance));
  const double f_max = p.f.maxCoeff();
  const double f_sd = std::sqrt((p.f.array() - p.f.mean()).square().mean());
  double best = -1e300;
  std::vector<double> regret;
  alg::RunPoGpUcb(
      z, [&](int i) { return p.f(i) + noise(noise_rng); }, o, loop_rng,
      [&](const bo::BoStep& s) {
        best = std::max(best, p.f(s.extra["index"].get<int>()));
        if (s.phase == "bo") regret.push_back((f_max - best) / f_sd);
        return true;
      });
  rec["regret_curve"] = regret;
  rec["f_sd"] = f_sd;
  return rec;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("PO-GP-UCB experiments (Kharkovskii et al. 2020, Sec. 4 / App. A)");
  int runs = 50, iterations = 50;
  double width = 5;
  uint64_t seed = 0;
  std::string out, studies = "synthetic,branin", methods = "gp-ucb,po:1.1:10";
  app.add_option("--runs", runs, "paired runs per study")->check(CLI::Range(1, 10000));
  app.add_option("--iterations", iterations, "GP-UCB iterations T after 3 initial rows")
      ->check(CLI::Range(1, 10000));
  app.add_option("--seed", seed, "base seed");
  app.add_option("--synthetic-width", width,
                 "side W of the synthetic grid's domain [0, W]^2 (lengthscale 1.25; default 5)")
      ->check(CLI::PositiveNumber);
  app.add_option("--studies", studies, "comma-separated: synthetic branin");
  app.add_option("--methods", methods, "comma-separated: gp-ucb po:LOGEPS:R ...");
  app.add_option("--out", out, "JSONL output (OUT.partial until done)")->required();
  CLI11_PARSE(app, argc, argv);
  try {
    const std::vector<std::string> study_list = advbo::tools::SplitList(studies);
    Problem branin;
    if (std::find(study_list.begin(), study_list.end(), "branin") != study_list.end())
      branin = MakeBranin(seed);
    advbo::tools::RunGridToJsonl(advbo::tools::SplitList(studies), advbo::tools::SplitList(methods),
                                 runs, out,
                                 [&](const std::string& study, const std::string& method, int r) {
                                   return RunOne(study, method, r, iterations, seed, width, branin);
                                 });
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_po_gp_ucb: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
