// `advbo game --attacker ATTACK`: an attack from attacks/ against a defender in the query
// loop (Dai 2021 Sec. 8.4.2.2), run through the experiment runner.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli/format.h"
#include "cli/game_args.h"
#include "cli/plot.h"
#include "cli/progress.h"
#include "experiment/attack_game.h"
#include "experiment/records.h"
#include "experiment/runner.h"
#include "experiment/seeds.h"

namespace advbo::cli {
namespace fs = std::filesystem;
namespace {

using experiment::AttackGameTally;

void WriteAttackGameSummary(const GameArgs& a, const experiment::Experiment& ex,
                            const AttackGameTally& tally, const fs::path& rounds_path);

// The experiment of an attack game: untargeted, one round per query, no clean accuracy.
experiment::ExperimentSpec AttackGameSpec(const GameArgs& a) {
  experiment::ExperimentSpec spec;
  spec.dataset = a.study.game;
  spec.attacks = {a.study.attacker};
  spec.untargeted = true;
  spec.indices = a.study.indices;
  spec.data = a.study.data;
  spec.num_images = a.study.num_games;
  spec.eps = a.study.eps;
  spec.budget = a.study.rounds;  // one round per query
  spec.seed = a.study.seed;
  spec.threads = a.study.threads;
  spec.defense = a.study.defender;
  spec.defender_vae = a.study.vae;
  spec.defender_eps = a.defender_eps;
  spec.model = a.study.model;
  spec.normalize = a.study.normalize;
  spec.pixels = a.pixels;
  spec.http_timeout = a.study.http_timeout;
  spec.http_retries = a.study.http_retries;
  spec.clean_images = 0;  // the game reports no clean accuracy
  spec.lockstep = 1;      // one game at a time: its rounds follow each other
  spec.workers = 1;
  return spec;
}

// One round's JSONL line (query q of batch r at offset b), with the defender's action.
nlohmann::json RoundLine(const GameArgs& a, const std::string& defense,
                         const experiment::Instance& inst, int init, const oracle::QueryResult& r,
                         Eigen::Index b, long q, const defenses::GameDefense* defender) {
  nlohmann::json line = {{"attacker", a.study.attacker},
                         {"defender", defense},
                         {"game", a.study.game},
                         {"image_index", inst.index},
                         {"true_class", inst.label},
                         {"init", init},
                         {"round", q},
                         {"objective", r.objective(b)},
                         {"success", static_cast<bool>(r.success[b])},
                         {"predicted", r.predicted[b]},
                         {"seed", a.study.seed}};
  if (defender && defender->rounds() >= q) {
    const Eigen::VectorXd act = defender->Action(static_cast<int>(q - 1));
    line["defender_action"] = std::vector<double>(act.data(), act.data() + act.size());
  }
  return line;
}

}  // namespace

// An attack from attacks/ (a level-0 pure or mixed strategy of the attacker, Sec. 8.3.1)
// against a defender in the query loop (defenses/game_defense.h: an R2-B2 level-1 or random
// defender with latent or transformation-parameter actions, or a fixed pipeline): one round
// per query, T = --rounds queries per run, untargeted. Writes one JSONL line per round
// and a summary of ASR and queries to the first successful attack.
int RunAttackGame(const GameArgs& a) {
  if (a.study.game != "mnist" && a.study.game != "cifar10")
    throw std::invalid_argument("--attacker " + a.study.attacker +
                                " plays on --game mnist or cifar10");
  if (a.study.rounds < 1 || a.study.num_games < 1 || a.study.inits < 1)
    throw std::invalid_argument("--rounds, --games and --inits must be positive");
  if (a.out_dir.empty()) throw std::invalid_argument("-o/--out (the output folder) is required");
  const experiment::Experiment ex(AttackGameSpec(a));
  if (!ex.pixels_note().empty())
    std::fprintf(stderr, "advbo game: note: %s\n", ex.pixels_note().c_str());
  const experiment::DefenseSetup& defense = ex.defense();
  const experiment::Selection& sel = ex.selection();
  experiment::CreatedFolders folders;  // removed again if the run fails
  folders.Create(a.out_dir);
  const fs::path rounds_path = fs::path(a.out_dir) / "rounds.jsonl";
  experiment::RemoveUnlessReleased partial(rounds_path.string() + ".partial");
  std::ofstream out(rounds_path.string() + ".partial");
  if (!out) throw std::runtime_error(rounds_path.string() + ": cannot write");
  const long total = static_cast<long>(sel.instances.size()) * a.study.inits;
  ProgressBar bar(total, !a.quiet);
  experiment::AttackGameHooks hooks;
  hooks.on_batch = [&](size_t g, int init, const oracle::QueryResult& r, long first,
                       const defenses::GameDefense* defender) {
    for (Eigen::Index b = 0; b < r.objective.size(); ++b)
      out << RoundLine(a, defense.Spec(), sel.instances[g], init, r, b, first + b, defender).dump()
          << "\n";
  };
  hooks.progress = [&](long done, const std::string& status, bool run_finished) {
    bar.Update(done, status, run_finished);
  };
  const AttackGameTally tally = experiment::PlayAttackGame(ex, a.study.inits, a.study.seed, hooks);
  bar.Finish();
  out.close();
  if (!out) throw std::runtime_error(rounds_path.string() + ".partial: write failed");
  fs::rename(rounds_path.string() + ".partial", rounds_path);
  partial.Release();
  WriteAttackGameSummary(a, ex, tally, rounds_path);
  folders.Keep();
  return 0;
}

namespace {

// curves.csv and curves.png: the share of runs successful by each query.
void WriteAttackGameCurves(const GameArgs& a, const std::string& defense,
                           const std::vector<double>& success_curve, double runs) {
  std::ostringstream csv;
  csv << "round,success_rate\n";
  PlotSeries ser{a.study.attacker + " vs " + defense, {}};
  for (int t = 1; t <= a.study.rounds; ++t) {
    csv << t << "," << Fmt(success_curve[t] / runs, 5) << "\n";
    ser.ys.push_back(success_curve[t] / runs);
  }
  experiment::WriteFileAtomic(fs::path(a.out_dir) / "curves.csv", csv.str());
  WriteLinePlot(fs::path(a.out_dir) / "curves.png", {ser}, 1.0, a.study.rounds, 0.0, 1.0, "query",
                "attack success rate");
}

// summary.json, table.txt, curves.csv, curves.png and the printed table of an attack game.
void WriteAttackGameSummary(const GameArgs& a, const experiment::Experiment& ex,
                            const AttackGameTally& tally, const fs::path& rounds_path) {
  const auto& [first_success, queries_all, successes, success_curve] = tally;
  const double eps = ex.epsilon();
  const experiment::DefenseSetup& defense = ex.defense();
  const experiment::Selection& sel = ex.selection();
  const double runs = static_cast<double>(successes.size());
  double asr = 0, mean_q = 0, mean_first = 0;
  for (double v : successes) asr += v / runs;
  for (double v : queries_all) mean_q += v / runs;
  for (double v : first_success) mean_first += v / first_success.size();
  std::ostringstream table;
  char buf[400];
  std::snprintf(buf, sizeof buf,
                "%s game: attacker %s vs defender %s, eps %.3g, T = %d queries, %d runs (%zu "
                "images x %d inits), untargeted, seed %llu\n",
                a.study.game.c_str(), a.study.attacker.c_str(), defense.Spec().c_str(), eps,
                a.study.rounds, static_cast<int>(runs), sel.instances.size(), a.study.inits,
                static_cast<unsigned long long>(a.study.seed));
  table << buf;
  std::snprintf(buf, sizeof buf, "%-34s %s %%\n%-34s %s\n%-34s %s\n", "ASR within T",
                Fmt(100 * asr, 1).c_str(), "queries to success (successes)",
                first_success.empty() ? "-" : Fmt(mean_first, 1).c_str(),
                "mean queries (failures = T)", Fmt(mean_q, 1).c_str());
  table << buf;
  std::vector<int> idx;
  for (const auto& t : sel.instances) idx.push_back(t.index);
  nlohmann::json meta = {
      {"game", a.study.game},
      {"attacker", a.study.attacker},
      {"defender", defense.Spec()},
      {"defender_vae", experiment::RecordPath(defense.vae_path())},
      {"epsilon", eps},
      {"pixels", oracle::PixelSpaceName(ex.pixels())},
      {"defender_eps", a.defender_eps.value_or(eps)},
      {"rounds", a.study.rounds},
      {"inits", a.study.inits},
      {"images", idx},
      {"model", experiment::RecordPath(ex.model_path())},
      {"seed", a.study.seed},
      {"asr", asr},
      {"mean_queries_to_success",
       first_success.empty() ? nlohmann::json(nullptr) : nlohmann::json(mean_first)},
      {"mean_queries_failures_at_T", mean_q},
      {"per_run_success", successes},
      {"per_run_queries", queries_all}};
  experiment::WriteFileAtomic(fs::path(a.out_dir) / "summary.json", meta.dump(2) + "\n");
  experiment::WriteFileAtomic(fs::path(a.out_dir) / "table.txt", table.str());
  WriteAttackGameCurves(a, defense.Spec(), success_curve, runs);
  std::printf("\n%s\nrounds: %s; summary.json, table.txt, curves.csv, curves.png in %s\n",
              table.str().c_str(), rounds_path.c_str(), a.out_dir.c_str());
}

}  // namespace
}  // namespace advbo::cli
