// `advbo game` between R2-B2 agents (Dai 2021 thesis, Ch. 8): the options of the game study
// (experiment/game_study.h, which plays the games) and its outputs: one JSONL line per round,
// a summary table, mean-regret (or attack-score) curves as CSV and PNG.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "cli/format.h"
#include "cli/game_args.h"
#include "cli/plot.h"
#include "cli/progress.h"
#include "experiment/game_study.h"
#include "experiment/records.h"
#include "experiment/setup.h"
#include "games/synthetic.h"

namespace advbo::cli {
namespace {

namespace fs = std::filesystem;
using games::GameType;

// The study's options from `advbo game`'s arguments.
// Mean and standard error of v.
std::pair<double, double> MeanSe(const std::vector<double>& v) {
  double m = 0, s2 = 0;
  for (double x : v) m += x;
  m /= v.size();
  for (double x : v) s2 += (x - m) * (x - m);
  const double se = v.size() > 1 ? std::sqrt(s2 / (v.size() - 1) / v.size()) : 0.0;
  return {m, se};
}

// Everything of the study that decides its numbers, for summary.json.
nlohmann::json StudySettings(const experiment::GameStudyOptions& a,
                             const experiment::GameStudyResult& t) {
  nlohmann::json meta = {
      {"game", a.game},
      {"rounds", a.rounds},
      {"init_rounds", a.init_rounds},
      {"games", t.num_games},
      {"inits", a.inits},
      {"level0", a.level0},
      {"payoff_noise", a.payoff_noise},
      {"gp_noise", a.gp_noise},
      {"gp_outputs", a.standardize_payoffs ? "standardized" : "raw"},
      {"gp_lengthscale", a.gp_lengthscale},
      {"gp_restarts", a.gp_restarts},
      {"beta", a.beta},
      {"defender_beta", a.defender_beta.empty() ? a.beta : a.defender_beta},
      {"opponent_model", a.opponent_model},
      {"defender_candidates", a.defender_candidates > 0 ? a.defender_candidates : a.candidates},
      {"defender_vertices", a.defender_vertices},
      {"defender_kernel", a.defender_kernel},
      {"defender_observes", a.defender_observes},
      {"omniscient_candidates", a.omniscient_candidates},
      {"samples", a.samples},
      {"candidates", a.candidates},
      {"seed", a.seed}};
  if (a.game == "synthetic") {
    meta["game_type"] = games::GameTypeName(t.type);
    meta["grid"] = a.grid;
    meta["lengthscale"] = a.lengthscale;
  } else {
    meta["epsilon"] = *a.eps;
    meta["model"] = experiment::RecordPath(t.model_path);
    meta["vae"] = experiment::RecordPath(t.vae_path);
    meta["data"] = a.data.empty() ? "shipped" : experiment::RecordPath(a.data);
    meta["refit_every"] = a.refit_every;
    meta["defender_strength"] = a.defender_strength;
    meta["images"] = t.images;
  }
  return meta;
}

// The table (returned; also table.txt) and summary.json: synthetic = mean regret over the T
// rounds; adversarial = successful attacks per T rounds and mean attack score; mean and
// standard error over runs.
std::string WriteSummary(const GameArgs& out, const experiment::GameStudyOptions& a,
                         const experiment::GameStudyResult& t) {
  const GameType type = t.type;
  const int num_games = t.num_games;
  const bool synthetic = a.game == "synthetic";
  const long runs = static_cast<long>(num_games) * a.inits;
  std::ostringstream table;
  char buf[320];
  if (synthetic) {
    std::snprintf(buf, sizeof buf,
                  "%s game, %d rounds, %ld runs (%d games x %d inits), level 0 = %s, seed %llu\n",
                  games::GameTypeName(type).c_str(), a.rounds, runs, num_games, a.inits,
                  a.level0.c_str(), static_cast<unsigned long long>(a.seed));
    table << buf;
    std::snprintf(buf, sizeof buf, "%-10s %22s %22s\n", "levels", "agent-1 mean regret",
                  "agent-2 mean regret");
  } else {
    std::snprintf(buf, sizeof buf,
                  "%s latent game (eps %.3g), %d rounds, %ld runs (%d images x %d inits), level 0 "
                  "= %s, S = %d, seed %llu\n",
                  a.game.c_str(), *a.eps, a.rounds, runs, num_games, a.inits, a.level0.c_str(),
                  a.samples, static_cast<unsigned long long>(a.seed));
    table << buf;
    std::snprintf(buf, sizeof buf, "%-22s %24s %22s %18s\n", "levels", "successful attacks / T",
                  "mean attack score", "defender predicts");
  }
  table << buf;
  nlohmann::json summary = nlohmann::json::array();
  for (size_t k = 0; k < t.labels.size(); ++k) {
    const auto [m1, se1] = MeanSe(t.final1[k]);
    const auto [m2, se2] = MeanSe(t.final2[k]);
    nlohmann::json row = {{"matchup", t.labels[k]}, {"agents", t.names[k]}, {"runs", runs}};
    nlohmann::json predictions = nlohmann::json::object();
    for (int m = 0; m < 2; ++m) {
      const long n = t.predicted[k][m], hit = t.matched[k][m];
      predictions[m == 0 ? "attacker" : "defender"] = {
          {"rounds_predicted", n},
          {"matched", hit},
          {"match_rate", n > 0 ? nlohmann::json(static_cast<double>(hit) / n) : nullptr}};
    }
    row["predictions"] = predictions;
    if (t.candidate_queries[k] > 0) row["omniscient_candidate_queries"] = t.candidate_queries[k];
    // The defender's share of played rounds whose assumed attacker action was the one played.
    const long dn = t.predicted[k][1];
    const std::string match =
        dn > 0 ? Fmt(100.0 * t.matched[k][1] / dn, 1) + " % of " + std::to_string(dn) : "-";
    if (synthetic) {
      std::snprintf(buf, sizeof buf, "%-10s %14s +- %-5s %14s +- %-5s\n", t.labels[k].c_str(),
                    Fmt(m1, 4).c_str(), Fmt(se1, 4).c_str(), Fmt(m2, 4).c_str(),
                    Fmt(se2, 4).c_str());
      row["mean_regret"] = {m1, m2};
      row["stderr"] = {se1, se2};
    } else {
      const auto [ms, ses] = MeanSe(t.successes[k]);
      std::snprintf(buf, sizeof buf, "%-22s %16s +- %-5s %14s +- %-5s %18s\n", t.labels[k].c_str(),
                    Fmt(ms, 1).c_str(), Fmt(ses, 1).c_str(), Fmt(m1, 4).c_str(),
                    Fmt(se1, 4).c_str(), match.c_str());
      row["successful_attacks"] = ms;
      row["successful_attacks_stderr"] = ses;
      row["mean_attack_score"] = m1;
      row["mean_attack_score_stderr"] = se1;
      row["per_run_successes"] = t.successes[k];
    }
    table << buf;
    summary.push_back(row);
  }
  nlohmann::json meta = StudySettings(a, t);
  meta["results"] = summary;
  experiment::WriteFileAtomic(fs::path(out.out_dir) / "summary.json", meta.dump(2) + "\n");
  experiment::WriteFileAtomic(fs::path(out.out_dir) / "table.txt", table.str());
  return table.str();
}

// curves.csv and curves.png: per round, agent-1 running mean regret (synthetic) or attack
// score and success rate (adversarial), averaged over runs.
void WriteCurves(const experiment::GameStudyOptions& a, const std::string& out_dir,
                 const experiment::GameStudyResult& tally) {
  const long runs = tally.runs();
  const bool synthetic = a.game == "synthetic";
  std::ostringstream csv;
  csv << "round";
  for (const auto& l : tally.labels)
    csv << "," << l << (synthetic ? "_agent1," : "_attack_score,") << l
        << (synthetic ? "_agent2" : "_success_rate");
  csv << "\n";
  std::vector<PlotSeries> series;
  double y_max = synthetic ? 0.0 : 1.0;
  for (size_t k = 0; k < tally.labels.size(); ++k) {
    PlotSeries ser{tally.labels[k], {}};
    for (int r = 1; r <= a.rounds; ++r) {
      ser.ys.push_back(tally.curve1[k][r] / runs);
      if (synthetic) y_max = std::max(y_max, tally.curve1[k][r] / runs);
    }
    series.push_back(ser);
  }
  for (int r = 1; r <= a.rounds; ++r) {
    csv << r;
    for (size_t k = 0; k < tally.labels.size(); ++k)
      csv << "," << Fmt(tally.curve1[k][r] / runs, 5) << "," << Fmt(tally.curve2[k][r] / runs, 5);
    csv << "\n";
  }
  experiment::WriteFileAtomic(fs::path(out_dir) / "curves.csv", csv.str());
  WriteLinePlot(fs::path(out_dir) / "curves.png", series, 1.0, a.rounds, 0.0,
                synthetic ? y_max * 1.05 : 1.0, "round",
                synthetic ? "agent-1 mean regret" : "attack score (mean over runs)");
}

}  // namespace

int RunR2b2Game(const GameArgs& a) {
  experiment::GameStudyOptions study = a.study;
  study.ResolveDefaults();
  if (a.out_dir.empty()) throw std::invalid_argument("-o/--out (the output folder) is required");
  experiment::CreatedFolders folders;  // removed again if the run fails
  folders.Create(a.out_dir);
  const fs::path rounds_path = fs::path(a.out_dir) / "rounds.jsonl";
  experiment::RemoveUnlessReleased partial(rounds_path.string() + ".partial");
  std::ofstream rounds_out(rounds_path.string() + ".partial");
  if (!rounds_out) throw std::runtime_error(rounds_path.string() + ": cannot write");
  std::optional<ProgressBar> bar;  // the total is known once the images are chosen
  const experiment::GameStudyResult t = experiment::RunGameStudy(
      study, [&](const nlohmann::json& line) { rounds_out << line.dump() << "\n"; },
      [&](long done, long total, const std::string& text, bool final) {
        if (!bar) bar.emplace(total, !a.quiet);
        bar->Update(done, text, final);
      });
  if (bar) bar->Finish();
  rounds_out.close();
  if (!rounds_out) throw std::runtime_error(rounds_path.string() + ".partial: write failed");
  fs::rename(rounds_path.string() + ".partial", rounds_path);
  partial.Release();
  const std::string table = WriteSummary(a, study, t);
  WriteCurves(study, a.out_dir, t);
  folders.Keep();
  std::printf("\n%s\nrounds: %s; summary.json, table.txt, curves.csv, curves.png in %s\n",
              table.c_str(), rounds_path.c_str(), a.out_dir.c_str());
  return 0;
}

}  // namespace advbo::cli
