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
#include "algorithms/macro_bo/macro_study.h"
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

int RunMacroCommand(const MacroArgs& a) {
  algorithms::MacroStudyOptions o;
  o.algo = a.algo;
  o.field = a.field;
  o.planner.algo = algorithms::ParseMacroAlgo(a.algo);
  o.planner.horizon = a.horizon;
  o.planner.samples = a.samples;
  o.planner.beta = a.beta;
  o.planner.epsilon = a.epsilon;
  o.planner.anytime_iterations = a.iterations;
  o.per_location = a.per_location;
  o.realisations = a.realisations;
  o.seed = static_cast<uint64_t>(a.seed);
  // Validates and builds the first realisation before any output file exists.
  const algorithms::PreparedMacroStudy prep = algorithms::PrepareMacroStudy(o);
  if (!prep.warning.empty())
    std::fprintf(stderr, "advbo macro: warning: %s\n", prep.warning.c_str());
  std::unique_ptr<bo::JsonlTrace> trace;
  if (!a.out.empty()) {
    trace = std::make_unique<bo::JsonlTrace>(a.out);
    trace->Write(prep.config);
  }
  ProgressBar bar(a.realisations, !a.quiet);
  const algorithms::MacroStudyResult res =
      algorithms::RunMacroStudy(prep, trace.get(), [&bar](int done, double output, double regret) {
        bar.Update(done, "output " + Fmt(output, 3) + " regret " + Fmt(regret, 3), true);
      });
  bar.Finish();
  if (trace) trace->Commit();
  std::printf("%-26s %s on %s, H = %d, N = %d, beta = %s, %d realisation(s), seed %lld\n", "macro",
              a.algo.c_str(), a.field.c_str(), a.horizon, a.samples, Fmt(a.beta, 3).c_str(),
              a.realisations, a.seed);
  std::printf("%-26s %s +- %s\n", "avg normalized output", Fmt(res.output.mean, 4).c_str(),
              Fmt(res.output.se, 4).c_str());
  std::printf("%-26s %s +- %s\n", "simple regret", Fmt(res.regret.mean, 4).c_str(),
              Fmt(res.regret.se, 4).c_str());
  std::printf("%-26s %.4g per episode\n", "explored nodes", res.nodes);
  std::printf("%-26s %s s per episode\n", "planning time", Fmt(res.seconds, 3).c_str());
  const algorithms::MacroAlgo algo = o.planner.algo;
  if (algo == algorithms::MacroAlgo::kEMacro || algo == algorithms::MacroAlgo::kAnytime)
    std::printf("%-26s %d (most-likely-observation values used, eq. %s)\n", "fallbacks",
                res.fallbacks, algo == algorithms::MacroAlgo::kEMacro ? "4.9" : "4.12");
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
