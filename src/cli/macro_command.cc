// `advbo macro`: nonmyopic BO with macro-actions on a spatial field (Kharkovskii 2020 thesis,
// Ch. 4): epsilon-Macro-BO, its anytime variant and the nonmyopic GP-UCB / GP-BUCB baselines,
// over one or more realisations of a synthetic field.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "algorithms/macro_bo/field.h"
#include "algorithms/macro_bo/macro_bo.h"
#include "bo/trace.h"
#include "cli/commands.h"
#include "cli/format.h"
#include "cli/progress.h"
#include "cli/validators.h"

namespace advbo::cli {
namespace {

struct MacroArgs {
  std::string algo = "emacro", field = "plankton", out;
  int horizon = 2, samples = 100, iterations = 1500, per_location = 20, realisations = 1;
  double beta = 0.0, epsilon = 1.0;
  long long seed = 0;
  bool quiet = false;
};

// Mean and standard error of v.
std::pair<double, double> MeanSe(const std::vector<double>& v) {
  double m = 0;
  for (double x : v) m += x;
  m /= v.size();
  double s = 0;
  for (double x : v) s += (x - m) * (x - m);
  const double se = v.size() > 1 ? std::sqrt(s / (v.size() - 1) / v.size()) : 0.0;
  return {m, se};
}

int RunMacroCommand(const MacroArgs& a) {
  algorithms::MacroOptions o;
  o.algo = algorithms::ParseMacroAlgo(a.algo);
  o.horizon = a.horizon;
  o.samples = a.samples;
  o.beta = a.beta;
  o.epsilon = a.epsilon;
  o.anytime_iterations = a.iterations;
  algorithms::ValidateMacroOptions(o);
  // Builds (and so validates) the first realisation before any output file exists.
  std::vector<algorithms::MacroField> fields;
  fields.push_back(algorithms::MakeField(a.field, static_cast<uint64_t>(a.seed), a.per_location));
  const algorithms::MacroDomain& dom = fields[0].domain;
  if (o.algo == algorithms::MacroAlgo::kEMacro) {
    size_t most = 0;
    for (const auto& acts : dom.actions) most = std::max(most, acts.size());
    const double nodes = algorithms::MacroTreeNodes(static_cast<int>(most), a.samples, a.horizon);
    if (nodes > 1e10)
      std::fprintf(stderr,
                   "advbo macro: warning: up to %.3g nodes per planning call (A = %zu, N = %d, "
                   "H = %d; about 20 ns each); consider --algo anytime, a smaller --horizon or "
                   "fewer --samples\n",
                   nodes, most, a.samples, a.horizon);
  }
  std::unique_ptr<bo::JsonlTrace> trace;
  const nlohmann::json config = {{"type", "config"},
                                 {"algo", a.algo},
                                 {"field", a.field},
                                 {"horizon", a.horizon},
                                 {"samples", a.samples},
                                 {"beta", a.beta},
                                 {"epsilon", a.epsilon},
                                 {"anytime_iterations", a.iterations},
                                 {"actions_per_location", a.per_location},
                                 {"realisations", a.realisations},
                                 {"seed", a.seed},
                                 {"kappa", dom.kappa},
                                 {"locations", dom.locations.rows()},
                                 {"budget", fields[0].budget},
                                 {"prior",
                                  {{"mean", fields[0].prior.mean},
                                   {"lengthscale1", fields[0].prior.lengthscale1},
                                   {"lengthscale2", fields[0].prior.lengthscale2},
                                   {"signal_variance", fields[0].prior.signal_variance},
                                   {"noise_variance", fields[0].prior.noise_variance}}}};
  if (!a.out.empty()) {
    trace = std::make_unique<bo::JsonlTrace>(a.out);
    trace->Write(config);
  }
  ProgressBar bar(a.realisations, !a.quiet);
  std::vector<double> outputs, regrets, nodes, seconds;
  int fallbacks = 0;
  for (int r = 0; r < a.realisations; ++r) {
    const uint64_t seed = static_cast<uint64_t>(a.seed) + r;
    const algorithms::MacroField field =
        r == 0 ? fields[0] : algorithms::MakeField(a.field, seed, a.per_location);
    auto on_step = [&](const algorithms::MacroStep& s) {
      fallbacks += s.fallbacks;
      if (!trace) return;
      trace->Write({{"type", "step"},
                    {"realisation", r},
                    {"iteration", s.iteration},
                    {"from", s.from},
                    {"action", s.action},
                    {"points", s.points},
                    {"y", s.y},
                    {"horizon", s.horizon},
                    {"nodes", s.nodes},
                    {"fallbacks", s.fallbacks},
                    {"theta", s.theta},
                    {"omega", s.omega},
                    {"seconds", s.seconds}});
    };
    const algorithms::MacroEpisode ep = algorithms::RunMacroEpisode(field, o, seed, on_step);
    outputs.push_back(ep.avg_normalized_output);
    regrets.push_back(ep.simple_regret);
    nodes.push_back(static_cast<double>(ep.nodes));
    seconds.push_back(ep.seconds);
    if (trace)
      trace->Write({{"type", "episode"},
                    {"realisation", r},
                    {"seed", seed},
                    {"start", field.start},
                    {"f_max", field.f.maxCoeff()},
                    {"avg_normalized_output", ep.avg_normalized_output},
                    {"simple_regret", ep.simple_regret},
                    {"nodes", ep.nodes},
                    {"seconds", ep.seconds},
                    {"avg_output_curve", ep.avg_output_curve},
                    {"regret_curve", ep.regret_curve}});
    bar.Update(
        r + 1,
        "output " + Fmt(MeanSe(outputs).first, 3) + " regret " + Fmt(MeanSe(regrets).first, 3),
        true);
  }
  bar.Finish();
  const auto [mo, so] = MeanSe(outputs);
  const auto [mr, sr] = MeanSe(regrets);
  const double mn = MeanSe(nodes).first, ms = MeanSe(seconds).first;
  if (trace) {
    trace->Write({{"type", "summary"},
                  {"realisations", a.realisations},
                  {"avg_normalized_output", {{"mean", mo}, {"se", so}}},
                  {"simple_regret", {{"mean", mr}, {"se", sr}}},
                  {"nodes_per_episode", mn},
                  {"seconds_per_episode", ms},
                  {"fallbacks", fallbacks}});
    trace->Commit();
  }
  std::printf("%-26s %s on %s, H = %d, N = %d, beta = %s, %d realisation(s), seed %lld\n", "macro",
              a.algo.c_str(), a.field.c_str(), a.horizon, a.samples, Fmt(a.beta, 3).c_str(),
              a.realisations, a.seed);
  std::printf("%-26s %s +- %s\n", "avg normalized output", Fmt(mo, 4).c_str(), Fmt(so, 4).c_str());
  std::printf("%-26s %s +- %s\n", "simple regret", Fmt(mr, 4).c_str(), Fmt(sr, 4).c_str());
  std::printf("%-26s %.4g per episode\n", "explored nodes", mn);
  std::printf("%-26s %s s per episode\n", "planning time", Fmt(ms, 3).c_str());
  if (o.algo == algorithms::MacroAlgo::kEMacro || o.algo == algorithms::MacroAlgo::kAnytime)
    std::printf("%-26s %d (most-likely-observation values used, eq. %s)\n", "fallbacks", fallbacks,
                o.algo == algorithms::MacroAlgo::kEMacro ? "4.9" : "4.12");
  if (!a.out.empty()) std::printf("%-26s %s\n", "trace", a.out.c_str());
  return 0;
}

}  // namespace

std::function<int()> RegisterMacroCommand(CLI::App& app) {
  auto a = std::make_shared<MacroArgs>();
  CLI::App* cmd = app.add_subcommand(
      "macro",
      "Nonmyopic BO with macro-actions on a spatial field (Kharkovskii 2020 thesis, Ch. 4).\n"
      "An agent starts at a location, observes it, and then executes budget/kappa macro-\n"
      "actions (kappa locations each), each chosen by a planner over H stages (receding\n"
      "horizon min(H, iterations left)). Fields are synthetic GP draws with the thesis'\n"
      "hyperparameters: plankton (50x50 grid, 5 km, kappa 4, 4 straight dives), road (a\n"
      "synthetic road network on a 100x50 grid, kappa 5) and corridor (corridors of an\n"
      "office floor, kappa 5). Reports the average normalized output (y - prior mean) of the\n"
      "budget observations and the simple regret, mean +- standard error over realisations.");
  cmd->add_option("--algo", a->algo,
                  "planner: emacro (epsilon-Macro-BO, eq. 4.9; H = 1 is DB-GP-UCB) | anytime "
                  "(anytime epsilon-Macro-BO, Alg. 4) | nonmyopic-ucb (most likely "
                  "observations, eq. 4.8) | gp-bucb (one input at a time)")
      ->default_val("emacro");
  cmd->add_option("--field", a->field, "plankton | road | corridor")->default_val("plankton");
  cmd->add_option("--horizon,-H", a->horizon, "planning stages H (lookahead kappa*H observations)")
      ->check(IntAtLeast(1))
      ->default_val(2);
  cmd->add_option("--samples,-N", a->samples, "sampled outputs per macro-action and stage")
      ->check(IntAtLeast(1))
      ->default_val(100);
  cmd->add_option("--beta", a->beta, "exploration weight of eq. 4.4 (>= 0)")
      ->check(CLI::Range(0.0, 1e12))
      ->default_val(0.0);
  cmd->add_option("--epsilon", a->epsilon, "user loss bound epsilon (> 0) of Theorems 4.3/4.4")
      ->check(NumberIn(0, 1e6, true))
      ->default_val(1.0);
  cmd->add_option("--iterations", a->iterations,
                  "anytime: ConstructTree calls per planning step (thesis: 1500)")
      ->check(IntAtLeast(1))
      ->default_val(1500);
  cmd->add_option("--actions-per-location", a->per_location,
                  "road / corridor: macro-actions drawn per location (thesis: 20)")
      ->check(IntAtLeast(1))
      ->default_val(20);
  cmd->add_option("--realisations,-r", a->realisations,
                  "independent realisations (realisation r uses field and episode seed "
                  "SEED + r)")
      ->check(IntAtLeast(1))
      ->default_val(1);
  cmd->add_option("--seed", a->seed, "seed of the first realisation")
      ->check(UnsignedInt())
      ->default_val(0);
  cmd->add_option("--out,-o", a->out,
                  "JSONL trace: config, one line per macro-action and per episode, summary");
  cmd->add_flag("-q,--quiet", a->quiet, "no progress bar");
  return [cmd, a]() { return cmd->parsed() ? RunMacroCommand(*a) : 0; };
}

}  // namespace advbo::cli
