// `advbo game`: repeated games between R2-B2 agents (Dai 2021 thesis, Ch. 8). Synthetic GP
// games (App. E.6.1.1a) with one or several matchups of reasoning levels on the same sampled
// games; one JSONL line per round, a summary table, mean-regret curves as CSV and PNG.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "bo/acquisition.h"
#include "bo/random.h"
#include "cli/commands.h"
#include "cli/format.h"
#include "cli/plot.h"
#include "cli/progress.h"
#include "games/r2b2.h"
#include "games/synthetic.h"

namespace advbo::cli {
namespace {

namespace fs = std::filesystem;
using games::GameType;

struct GameArgs {
  std::string game = "synthetic";
  std::string type = "common";
  std::string attacker = "r2b2:1", defender = "r2b2:0";
  std::vector<std::string> matchups;
  std::string level0 = "gpmw";
  int grid = 100;
  double lengthscale = 0.1;
  int rounds = 150, init_rounds = 1, num_games = 1, inits = 1, samples = 500;
  double payoff_noise = 0.02, gp_noise = 1e-2;
  std::string beta = "r2b2_ref";
  uint64_t seed = 0;
  std::string out_dir;
  bool quiet = false;
};

/// One agent: R2-B2 level, Lite flag, and its level-0 strategy name.
struct AgentSpec {
  int level = 0;
  bool lite = false;
  std::string level0;
  std::string Label() const {
    return std::to_string(level) + (lite ? "L" : "");
  }
};

// "r2b2:K", "r2b2:K-lite", or a level-0 strategy name ("random", "gpmw", "exp3").
AgentSpec ParseAgent(const std::string& s, const std::string& default_level0) {
  AgentSpec a;
  a.level0 = default_level0;
  if (s == "random" || s == "gpmw" || s == "exp3") {
    a.level0 = s;
    return a;
  }
  const std::string prefix = "r2b2:";
  if (s.rfind(prefix, 0) != 0)
    throw std::invalid_argument("agent '" + s +
                                "': use r2b2:K (K = reasoning level), r2b2:1-lite, random, gpmw "
                                "or exp3");
  std::string rest = s.substr(prefix.size());
  const auto dash = rest.find("-lite");
  if (dash != std::string::npos) {
    a.lite = true;
    rest = rest.substr(0, dash);
  }
  try {
    size_t used = 0;
    a.level = std::stoi(rest, &used);
    if (used != rest.size() || a.level < 0) throw std::invalid_argument("level");
  } catch (const std::exception&) {
    throw std::invalid_argument("agent '" + s + "': the level must be an integer >= 0");
  }
  if (a.lite && a.level != 1)
    throw std::invalid_argument("agent '" + s + "': R2-B2-Lite is a level-1 strategy");
  return a;
}

// "1v0", "1Lv0", "2v1": levels of agent 1 (attacker) and agent 2 (defender).
std::pair<AgentSpec, AgentSpec> ParseMatchup(const std::string& s, const std::string& level0) {
  const auto v = s.find('v');
  if (v == std::string::npos || v == 0 || v + 1 >= s.size())
    throw std::invalid_argument("matchup '" + s + "': use e.g. 0v0, 1v0, 1Lv0, 2v1");
  auto side = [&](std::string t) {
    bool lite = false;
    if (!t.empty() && (t.back() == 'L' || t.back() == 'l')) {
      lite = true;
      t.pop_back();
    }
    return ParseAgent("r2b2:" + t + (lite ? "-lite" : ""), level0);
  };
  return {side(s.substr(0, v)), side(s.substr(v + 1))};
}

std::unique_ptr<games::R2b2Agent> MakeR2b2(int self, const AgentSpec& spec,
                                           const games::SyntheticGame& g, const GameArgs& a,
                                           uint64_t run_seed) {
  games::BeliefOptions bopt;
  bopt.refit_every = 0;  // App. E.6.1.1a: the true GP hyperparameters
  std::vector<games::PayoffBelief> beliefs;
  for (int m = 0; m < 2; ++m) beliefs.emplace_back(m, 2, g.TruePrior(a.gp_noise), bopt);
  // Every agent's level-0 strategy as this agent models it (the same kind for both; EXP3's
  // random features drawn from a seed shared by the run so models match the originals).
  std::vector<std::unique_ptr<games::Level0Strategy>> level0;
  for (int m = 0; m < 2; ++m) {
    bo::Rng feat(bo::DeriveSeed(run_seed, 77 + m));
    level0.push_back(games::MakeLevel0(spec.level0, g.space(m), g.lengthscale(), feat));
  }
  games::R2b2Options opt;
  opt.level = spec.level;
  opt.lite = spec.lite;
  opt.samples = a.samples;
  opt.beta = bo::ParseExplorationWeight(a.beta);
  return std::make_unique<games::R2b2Agent>(self, std::vector<games::ActionSpace>{g.space(0), g.space(1)},
                                            std::move(beliefs), std::move(level0), opt);
}

void WriteAtomic(const fs::path& p, const std::string& text) {
  const fs::path tmp = p.string() + ".partial";
  {
    std::ofstream o(tmp);
    if (!o) throw std::runtime_error(p.string() + ": cannot write");
    o << text;
  }
  fs::rename(tmp, p);
}

int RunGame(const GameArgs& a) {
  if (a.game != "synthetic")
    throw std::invalid_argument("--game " + a.game +
                                ": only 'synthetic' is available in this build (the adversarial-ML "
                                "game needs the VAEs of issue #5)");
  const GameType type = games::ParseGameType(a.type);
  if (a.rounds < 1 || a.num_games < 1 || a.inits < 1 || a.init_rounds < 0 || a.grid < 2)
    throw std::invalid_argument("--rounds, --games, --inits and --grid must be positive");
  std::vector<std::pair<AgentSpec, AgentSpec>> matchups;
  std::vector<std::string> labels;
  if (a.matchups.empty()) {
    matchups.push_back({ParseAgent(a.attacker, a.level0), ParseAgent(a.defender, a.level0)});
  } else {
    for (const auto& m : a.matchups) matchups.push_back(ParseMatchup(m, a.level0));
  }
  for (const auto& [p, q] : matchups) labels.push_back(p.Label() + "v" + q.Label());
  bo::ParseExplorationWeight(a.beta);  // validate before any work

  if (a.out_dir.empty()) throw std::invalid_argument("--out-dir is required");
  fs::create_directories(a.out_dir);
  const fs::path rounds_path = fs::path(a.out_dir) / "rounds.jsonl";
  std::ofstream rounds_out(rounds_path.string() + ".partial");
  if (!rounds_out) throw std::runtime_error(rounds_path.string() + ": cannot write");

  const long total = static_cast<long>(matchups.size()) * a.num_games * a.inits;
  ProgressBar bar(total, !a.quiet);
  // curve[k][t] = sum over runs of agent 1's mean regret over rounds 1..t.
  std::vector<std::vector<double>> curve1(matchups.size(), std::vector<double>(a.rounds + 1, 0.0)),
      curve2 = curve1;
  std::vector<std::vector<double>> final1(matchups.size()), final2(matchups.size());
  std::vector<std::vector<std::string>> names(matchups.size());
  long done = 0;
  for (size_t k = 0; k < matchups.size(); ++k) {
    for (int g = 0; g < a.num_games; ++g) {
      bo::Rng game_rng(bo::DeriveSeed(a.seed, static_cast<uint64_t>(g)));
      games::SyntheticGame game(type, game_rng, a.grid, a.lengthscale);
      for (int i = 0; i < a.inits; ++i) {
        const uint64_t run_seed = bo::DeriveSeed(a.seed, 1000003ULL * (g + 1) + i);
        bo::Rng rng(run_seed);
        auto p1 = MakeR2b2(0, matchups[k].first, game, a, run_seed);
        auto p2 = MakeR2b2(1, matchups[k].second, game, a, run_seed);
        names[k] = {p1->name(), p2->name()};
        games::GameOptions go;
        go.rounds = a.rounds;
        go.init_rounds = a.init_rounds;
        go.payoff_noise = a.payoff_noise;
        double cum1 = 0, cum2 = 0;
        games::RunRepeatedGame(game, {p1.get(), p2.get()}, go, rng, [&](const games::RoundRecord& r) {
          nlohmann::json line = {{"matchup", labels[k]},
                                 {"agents", {p1->name(), p2->name()}},
                                 {"game_type", games::GameTypeName(type)},
                                 {"game", g},
                                 {"init", i},
                                 {"round", r.round},
                                 {"init_round", r.init},
                                 {"actions", {r.actions[0](0), r.actions[1](0)}},
                                 {"payoffs", {r.payoffs(0), r.payoffs(1)}},
                                 {"observed", {r.observed(0), r.observed(1)}},
                                 {"seconds", r.seconds},
                                 {"seed", a.seed}};
          for (const auto& [key, v] : r.details.items()) line[key] = v;
          rounds_out << line.dump() << "\n";
          if (r.init) return;
          cum1 += r.details["regret"][0].get<double>();
          cum2 += r.details["regret"][1].get<double>();
          curve1[k][r.round] += cum1 / r.round;
          curve2[k][r.round] += cum2 / r.round;
        });
        final1[k].push_back(cum1 / a.rounds);
        final2[k].push_back(cum2 / a.rounds);
        ++done;
        bar.Update(done, labels[k] + " game " + std::to_string(g) + " init " + std::to_string(i),
                   true);
      }
    }
  }
  bar.Finish();
  rounds_out.close();
  fs::rename(rounds_path.string() + ".partial", rounds_path);

  // Summary: mean regret over the T rounds, mean and standard error over runs.
  auto mean_se = [](const std::vector<double>& v) {
    double m = 0, s = 0;
    for (double x : v) m += x;
    m /= v.size();
    for (double x : v) s += (x - m) * (x - m);
    const double se = v.size() > 1 ? std::sqrt(s / (v.size() - 1) / v.size()) : 0.0;
    return std::make_pair(m, se);
  };
  const long runs = static_cast<long>(a.num_games) * a.inits;
  std::ostringstream table;
  char buf[256];
  std::snprintf(buf, sizeof buf, "%s game, %d rounds, %ld runs (%d games x %d inits), level 0 = %s, seed %llu\n",
                games::GameTypeName(type).c_str(), a.rounds, runs, a.num_games, a.inits,
                a.level0.c_str(), static_cast<unsigned long long>(a.seed));
  table << buf;
  std::snprintf(buf, sizeof buf, "%-10s %22s %22s\n", "levels", "agent-1 mean regret", "agent-2 mean regret");
  table << buf;
  nlohmann::json summary = nlohmann::json::array();
  for (size_t k = 0; k < matchups.size(); ++k) {
    const auto [m1, se1] = mean_se(final1[k]);
    const auto [m2, se2] = mean_se(final2[k]);
    std::snprintf(buf, sizeof buf, "%-10s %14s +- %-5s %14s +- %-5s\n", labels[k].c_str(),
                  Fmt(m1, 4).c_str(), Fmt(se1, 4).c_str(), Fmt(m2, 4).c_str(), Fmt(se2, 4).c_str());
    table << buf;
    summary.push_back({{"matchup", labels[k]},
                       {"agents", names[k]},
                       {"mean_regret", {m1, m2}},
                       {"stderr", {se1, se2}},
                       {"runs", runs}});
  }
  nlohmann::json meta = {{"game", a.game},       {"game_type", games::GameTypeName(type)},
                         {"grid", a.grid},       {"lengthscale", a.lengthscale},
                         {"rounds", a.rounds},   {"init_rounds", a.init_rounds},
                         {"games", a.num_games}, {"inits", a.inits},
                         {"level0", a.level0},   {"payoff_noise", a.payoff_noise},
                         {"gp_noise", a.gp_noise}, {"beta", a.beta},
                         {"seed", a.seed},       {"results", summary}};
  WriteAtomic(fs::path(a.out_dir) / "summary.json", meta.dump(2) + "\n");
  WriteAtomic(fs::path(a.out_dir) / "table.txt", table.str());
  std::ostringstream csv;
  csv << "round";
  for (const auto& l : labels) csv << "," << l << "_agent1," << l << "_agent2";
  csv << "\n";
  std::vector<PlotSeries> series;
  double y_max = 0;
  for (size_t k = 0; k < matchups.size(); ++k) {
    PlotSeries s{labels[k], {}};
    for (int t = 1; t <= a.rounds; ++t) {
      s.ys.push_back(curve1[k][t] / runs);
      y_max = std::max(y_max, curve1[k][t] / runs);
    }
    series.push_back(s);
  }
  for (int t = 1; t <= a.rounds; ++t) {
    csv << t;
    for (size_t k = 0; k < matchups.size(); ++k)
      csv << "," << Fmt(curve1[k][t] / runs, 5) << "," << Fmt(curve2[k][t] / runs, 5);
    csv << "\n";
  }
  WriteAtomic(fs::path(a.out_dir) / "curves.csv", csv.str());
  WriteLinePlot(fs::path(a.out_dir) / "curves.png", series, 1.0, a.rounds, 0.0, y_max * 1.05,
                "round", "agent-1 mean regret");
  std::printf("\n%s\nrounds: %s; summary.json, table.txt, curves.csv, curves.png in %s\n",
              table.str().c_str(), rounds_path.c_str(), a.out_dir.c_str());
  return 0;
}

}  // namespace

std::function<int()> RegisterGameCommand(CLI::App& app) {
  auto a = std::make_shared<GameArgs>();
  CLI::App* cmd = app.add_subcommand(
      "game",
      "Repeated games between R2-B2 agents (recursive-reasoning BO, Dai 2021 Ch. 8).\n"
      "Synthetic games: payoffs sampled from a GP (SE, lengthscale 0.1) on a 100x100 grid of\n"
      "[0,1]^2, scaled to [0,1]; common-payoff, general-sum or constant-sum. Reports agent 1's\n"
      "mean regret T^-1 sum_t (max f_1 - f_1(x_t)) per matchup of reasoning levels, averaged\n"
      "over sampled games x initialisations. Writes rounds.jsonl (one line per round),\n"
      "summary.json, table.txt, curves.csv and curves.png into --out-dir.");
  cmd->add_option("--game", a->game, "game: synthetic")->default_val("synthetic");
  cmd->add_option("--type", a->type, "synthetic game type: common | general | constant")
      ->default_val("common");
  cmd->add_option("--attacker,--agent1", a->attacker,
                  "agent 1: r2b2:K (level K), r2b2:1-lite, or a level-0 strategy (random, gpmw, exp3)")
      ->default_val("r2b2:1");
  cmd->add_option("--defender,--agent2", a->defender, "agent 2, same syntax")->default_val("r2b2:0");
  cmd->add_option("--matchups", a->matchups,
                  "several matchups on the same games instead, e.g. 0v0,1v0,1Lv0,2v1 (levels of "
                  "agent 1 v agent 2; L = R2-B2-Lite)")
      ->delimiter(',');
  cmd->add_option("--level0", a->level0, "level-0 strategy of every agent: random | gpmw | exp3")
      ->default_val("gpmw");
  cmd->add_option("--grid", a->grid, "actions per agent (grid points of [0,1])")->default_val(100);
  cmd->add_option("--lengthscale", a->lengthscale, "SE lengthscale of the payoff GP")->default_val(0.1);
  cmd->add_option("--rounds", a->rounds, "T, rounds per game")->default_val(150);
  cmd->add_option("--init-rounds", a->init_rounds, "random joint actions observed first")->default_val(1);
  cmd->add_option("--games", a->num_games, "sampled payoff functions")->default_val(1);
  cmd->add_option("--inits", a->inits, "initialisations per sampled game")->default_val(1);
  cmd->add_option("--samples", a->samples,
                  "S, samples of the opponent's level-0 strategy when (8.3) is not exact")
      ->default_val(500);
  cmd->add_option("--payoff-noise", a->payoff_noise, "std. dev. of the noise on observed payoffs")
      ->default_val(0.02);
  cmd->add_option("--gp-noise", a->gp_noise, "the agents' GP noise variance (standardised units)")
      ->default_val(1e-2);
  cmd->add_option("--beta", a->beta, "UCB exploration weight: r2b2_ref | srinivas2010 | constant:V")
      ->default_val("r2b2_ref");
  cmd->add_option("--seed", a->seed, "run seed")->default_val(0);
  cmd->add_option("--out-dir", a->out_dir, "output folder (required)");
  cmd->add_flag("-q,--quiet", a->quiet, "no progress bar");
  return [cmd, a]() { return cmd->parsed() ? RunGame(*a) : 0; };
}

}  // namespace advbo::cli
