// Reproduction driver of FTS's synthetic study (Dai 2021 thesis, Sec. 5.5.1, Fig. 5.1, App. C.2
// first paragraph) for tools/bench/bench_fts.sh. The target's f is a GP draw (SE, lengthscale 0.03)
// on a 1,000-point grid of [0, 1], scaled into [0, 1]; noise variance 0.01. Each of N = 50
// agents has g_n(x) = f(x) +- d_n (an independent sign per point), observes t_n random points
// with noise, and sends one omega_n drawn from its weight posterior on M shared normalised
// random features (SE, lengthscale 0.03). One initial random point, T = 50 iterations, beta = 1.
// Every method of a (function, init) pair sees the same function, the same agents' data and
// the same initial point (paired).
//
// Settings (name d_n t_n M schedule): the Fig. 5.1 panels (a) small t_n with M swept, (b) large
// t_n with M swept, (c) d_n = 1.2 with the slow and the fast p_t; method "ts" is FTS without
// messages (standard TS). One JSON line per (setting, function, init): regret_curve (simple
// regret after each iteration), agent_share (fraction of iterations chosen by an agent).
//
// Usage: bench_fts --functions 5 --inits 5 --out runs.jsonl
#include <CLI/CLI.hpp>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "algorithms/fts/fts.h"
#include "bench_util.h"
#include "bo/grid_sample.h"
#include "bo/kernel.h"

namespace {
namespace bo = advbo::bo;
namespace alg = advbo::algorithms;

constexpr int kGrid = 1000, kAgents = 50;

struct Setting {
  double d;
  int t_n, m;
  alg::FtsSchedule schedule;
  bool use_messages;
};

Setting Parse(const std::string& name) {
  // ts | d=D,t=T,M=M[,fast]
  if (name == "ts") return {0, 0, 100, alg::FtsSchedule::kInverseSqrt, false};
  Setting s{0.02, 40, 100, alg::FtsSchedule::kInverseSqrt, true};
  for (const std::string& kv : advbo::tools::SplitList(std::string(name))) {
    if (kv == "fast") {
      s.schedule = alg::FtsSchedule::kInverseSquare;
      continue;
    }
    const auto eq = kv.find('=');
    if (eq == std::string::npos) throw std::invalid_argument("setting '" + name + "'");
    const std::string k = kv.substr(0, eq), v = kv.substr(eq + 1);
    if (k == "d")
      s.d = std::stod(v);
    else if (k == "t")
      s.t_n = std::stoi(v);
    else if (k == "M")
      s.m = std::stoi(v);
    else
      throw std::invalid_argument("setting '" + name + "': unknown key " + k);
  }
  return s;
}

nlohmann::json RunOne(const std::string& name, int function, int init, uint64_t seed) {
  const Setting s = Parse(name);
  const Eigen::VectorXd grid = Eigen::VectorXd::LinSpaced(kGrid, 0, 1);
  bo::Rng frng(bo::DeriveSeed(seed, 1000 + function));
  Eigen::VectorXd f = bo::SampleGpOnGrid(grid, Eigen::VectorXd::Zero(1), 0.03, 1.0, frng).col(0);
  f = (f.array() - f.minCoeff()) / (f.maxCoeff() - f.minCoeff());  // into [0, 1]
  // The agents: their data depend on (function, d, t_n), never on M or the method.
  bo::Rng arng(bo::DeriveSeed(seed, 2000 + function));
  std::bernoulli_distribution sign(0.5);
  std::uniform_int_distribution<int> pick(0, kGrid - 1);
  std::normal_distribution<double> noise(0, 0.1);
  struct Agent {
    std::vector<int> idx;
    Eigen::VectorXd y;
  };
  std::vector<Agent> agents(kAgents);
  for (auto& a : agents) {
    Eigen::VectorXd g(kGrid);
    for (int i = 0; i < kGrid; ++i) g(i) = f(i) + (sign(arng) ? s.d : -s.d);
    a.idx.resize(s.t_n);
    a.y.resize(s.t_n);
    for (int j = 0; j < s.t_n; ++j) {
      a.idx[j] = pick(arng);
      a.y(j) = g(a.idx[j]) + noise(arng);
    }
  }
  bo::StationaryKernel k(bo::KernelFamily::kSquaredExponential, 1, false, {}, 0.03, 1.0);
  bo::Rng feature_rng(bo::DeriveSeed(seed, 3000 + function));
  const bo::RandomFeatures rf(k, s.m, feature_rng);
  const Eigen::MatrixXd phi = alg::NormalizedFeatures(rf, grid);
  std::vector<Eigen::VectorXd> messages;
  if (s.use_messages) {
    bo::Rng mrng(bo::DeriveSeed(seed, 4000 + function));
    for (const auto& a : agents) {
      Eigen::MatrixXd pa(s.t_n, s.m);
      for (int j = 0; j < s.t_n; ++j) pa.row(j) = phi.row(a.idx[j]);
      messages.push_back(alg::FeaturePosterior(pa, a.y, 0.01).Sample(mrng));
    }
  }
  alg::FtsOptions o;
  o.schedule = s.schedule;
  bo::Rng rng(bo::DeriveSeed(seed, 5000 + 100 * function + init));
  bo::Rng obs(bo::DeriveSeed(seed, 6000 + 100 * function + init));
  const auto steps = alg::RunFts(
      grid, phi, messages, [&](int i) { return f(i) + noise(obs); }, o, rng);
  std::vector<double> regret;
  double best = -1e300;
  int from_agents = 0;
  for (const auto& st : steps) {
    best = std::max(best, f(st.index));
    if (st.iteration > 0) {
      regret.push_back(1.0 - best);
      from_agents += st.agent >= 0;
    }
  }
  return {{"setting", name},
          {"function", function},
          {"init", init},
          {"d", s.d},
          {"t_n", s.t_n},
          {"M", s.m},
          {"schedule", s.schedule == alg::FtsSchedule::kInverseSquare ? "1-1/t^2" : "1-1/sqrt(t)"},
          {"regret_curve", regret},
          {"agent_share", static_cast<double>(from_agents) / o.iterations}};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("FTS synthetic study (Dai 2021 thesis, Sec. 5.5.1, Fig. 5.1)");
  int functions = 5, inits = 5;
  uint64_t seed = 0;
  std::string out;
  std::string settings =
      "ts;d=0.02,t=40,M=50;d=0.02,t=40,M=100;d=0.02,t=40,M=200;d=0.02,t=100,M=50;"
      "d=0.02,t=100,M=100;d=0.02,t=100,M=200;d=1.2,t=100,M=100;d=1.2,t=100,M=100,fast";
  app.add_option("--functions", functions, "GP-drawn target functions")->check(CLI::Range(1, 1000));
  app.add_option("--inits", inits, "initial points per function")->check(CLI::Range(1, 1000));
  app.add_option("--seed", seed, "base seed");
  app.add_option("--settings", settings,
                 "semicolon-separated: ts | d=D,t=T_N,M=M[,fast] (fast: p_t = 1 - 1/t^2)");
  app.add_option("--out", out, "JSONL output (OUT.partial until done)")->required();
  CLI11_PARSE(app, argc, argv);
  try {
    std::vector<std::string> list;
    for (size_t a = 0, b; a <= settings.size(); a = b + 1) {
      b = settings.find(';', a);
      if (b == std::string::npos) b = settings.size();
      if (b > a) list.push_back(settings.substr(a, b - a));
    }
    for (const auto& s : list) Parse(s);  // fail before any run
    advbo::tools::RunGridToJsonl({"fig5.1"}, list, functions * inits, out,
                                 [&](const std::string&, const std::string& setting, int r) {
                                   return RunOne(setting, r / inits, r % inits, seed);
                                 });
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_fts: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
