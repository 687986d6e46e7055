// `advbo game`: repeated games between R2-B2 agents (Dai 2021 thesis, Ch. 8). Synthetic GP
// games (App. E.6.1.1a) with one or several matchups of reasoning levels on the same sampled
// games; one JSONL line per round, a summary table, mean-regret curves as CSV and PNG.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "attacks/attack.h"
#include "bo/acquisition.h"
#include "bo/random.h"
#include "cli/commands.h"
#include "cli/format.h"
#include "cli/plot.h"
#include "cli/progress.h"
#include "cli/validators.h"
#include "defenses/latent_game.h"
#include "experiment/records.h"
#include "experiment/runner.h"
#include "experiment/seeds.h"
#include "games/r2b2.h"
#include "games/synthetic.h"
#include "oracle/autoencoder.h"

namespace advbo::cli {
namespace {

namespace fs = std::filesystem;
using games::GameType;

struct GameArgs {
  std::string game = "synthetic";
  std::string type = "common";
  std::string attacker = "r2b2:1", defender = "r2b2:0";
  std::vector<std::string> matchups;
  std::string level0;  // "" = game default (gpmw synthetic, random adversarial)
  int grid = 100;
  double lengthscale = 0.1;
  int rounds = 150, init_rounds = -1, num_games = 1, inits = 1, samples = 0, candidates = 0;
  int refit_every = 10, threads = 1;
  double payoff_noise = -1, gp_noise = 1e-2;
  std::optional<double> eps, defender_eps;  // unset = the game's defaults
  std::vector<int> indices;
  std::string vae;
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
  std::string plain;  // set when the agent is a bare level-0 strategy ("gpucb", "none", ...)
  std::string Label() const {
    return plain.empty() ? std::to_string(level) + (lite ? "L" : "") : plain;
  }
};

// "r2b2:K", "r2b2:K-lite", or a level-0 strategy name (games::Level0Names(): random, gpmw,
// exp3, gpucb, ts, none), which plays that strategy as a level-0 agent.
AgentSpec ParseAgent(const std::string& s, const std::string& default_level0) {
  AgentSpec a;
  a.level0 = default_level0;
  const auto& names = games::Level0Names();
  if (std::find(names.begin(), names.end(), s) != names.end()) {
    a.level0 = a.plain = s;
    return a;
  }
  const std::string prefix = "r2b2:";
  if (s.rfind(prefix, 0) != 0)
    throw std::invalid_argument("agent '" + s +
                                "': use r2b2:K (K = reasoning level), r2b2:1-lite, or a level-0 "
                                "strategy: random, gpmw, exp3, gpucb, ts, none");
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

// Everything an R2-B2 agent needs besides its spec: the game's action spaces, the prior GP
// over the joint action, belief refit schedule, and the RFF lengthscale of EXP3.
struct AgentContext {
  std::vector<games::ActionSpace> spaces;
  bo::ExactGP prior;
  games::BeliefOptions belief;
  double rff_lengthscale = 0.1;
  int candidates = 1000;
  long exact_limit = 20000;
};

// Agent `self` of the pair `specs`. It models agent m's level-0 strategy as specs[m]'s (the
// agents know each other's level-0 algorithm, Sec. 8.3.1.1); random features, candidate
// sets and refit restarts are seeded by the run and the agent index, so an agent's copy of
// another's strategy matches the original.
std::unique_ptr<games::R2b2Agent> MakeR2b2(int self, const std::pair<AgentSpec, AgentSpec>& specs,
                                           const AgentContext& ctx, const GameArgs& a,
                                           uint64_t run_seed) {
  const AgentSpec& spec = self == 0 ? specs.first : specs.second;
  int joint = 0;
  for (const auto& sp : ctx.spaces) joint += sp.dim();
  std::vector<games::PayoffBelief> beliefs;
  for (int m = 0; m < 2; ++m) beliefs.emplace_back(m, joint, ctx.prior, ctx.belief);
  std::vector<std::unique_ptr<games::Level0Strategy>> level0;
  for (int m = 0; m < 2; ++m) {
    bo::Rng feat(bo::DeriveSeed(run_seed, 77 + m));
    games::Level0Options lo;
    lo.rff_lengthscale = ctx.rff_lengthscale;
    lo.candidates = ctx.candidates;
    lo.candidate_seed = bo::DeriveSeed(run_seed, 91 + m);
    lo.gp_noise = a.gp_noise;
    lo.belief = ctx.belief;
    level0.push_back(
        games::MakeLevel0((m == 0 ? specs.first : specs.second).level0, ctx.spaces[m], lo, feat));
  }
  games::R2b2Options opt;
  opt.level = spec.level;
  opt.lite = spec.lite;
  opt.samples = a.samples;
  opt.candidates = ctx.candidates;
  opt.exact_limit = ctx.exact_limit;
  opt.beta = bo::ParseExplorationWeight(a.beta);
  return std::make_unique<games::R2b2Agent>(self, ctx.spaces, std::move(beliefs), std::move(level0),
                                            opt);
}

// An attack from attacks/ (a level-0 pure or mixed strategy of the attacker, Sec. 8.3.1)
// against a defender in the query loop (defenses/game_defense.h: an R2-B2 level-1 or random
// defender with latent or transformation-parameter actions, or a fixed pipeline): one round
// per query, T = --rounds queries per run, untargeted. Writes one JSONL line per round
// and a summary of ASR and queries to the first successful attack.
int RunAttackGame(const GameArgs& a) {
  if (a.game != "mnist" && a.game != "cifar10")
    throw std::invalid_argument("--attacker " + a.attacker + " plays on --game mnist or cifar10");
  if (a.rounds < 1 || a.num_games < 1 || a.inits < 1)
    throw std::invalid_argument("--rounds, --games and --inits must be positive");
  if (a.out_dir.empty()) throw std::invalid_argument("--out-dir is required");
  experiment::ExperimentSpec spec;
  spec.dataset = a.game;
  spec.attacks = {a.attacker};
  spec.untargeted = true;
  spec.indices = a.indices;
  spec.num_images = a.num_games;
  spec.eps = a.eps;
  spec.budget = a.rounds;  // one round per query
  spec.seed = a.seed;
  spec.threads = a.threads;
  spec.defense = a.defender;
  spec.defender_vae = a.vae;
  spec.defender_eps = a.defender_eps;
  spec.clean_images = 0;  // the game reports no clean accuracy
  const experiment::Experiment ex(spec);
  const double eps = ex.epsilon();
  const experiment::DefenseSetup& defense = ex.defense();
  const experiment::Selection& sel = ex.selection();
  fs::create_directories(a.out_dir);
  const fs::path rounds_path = fs::path(a.out_dir) / "rounds.jsonl";
  std::ofstream out(rounds_path.string() + ".partial");
  if (!out) throw std::runtime_error(rounds_path.string() + ": cannot write");
  const long total = static_cast<long>(sel.instances.size()) * a.inits;
  ProgressBar bar(total, !a.quiet);
  std::vector<double> first_success, queries_all, successes;
  std::vector<double> success_curve(a.rounds + 1, 0.0);
  long done = 0;
  for (size_t g = 0; g < sel.instances.size(); ++g) {
    const experiment::Instance& inst = sel.instances[g];
    for (int i = 0; i < a.inits; ++i) {
      experiment::JobHooks hooks;
      hooks.instance_seed = experiment::GameRunSeed(a.seed, g, i);
      hooks.on_batch = [&](const oracle::QueryResult& r, long first,
                           const defenses::GameDefense* defender) {
        for (Eigen::Index b = 0; b < r.objective.size(); ++b) {
          const long q = first + b;
          nlohmann::json line = {{"attacker", a.attacker},
                                 {"defender", defense.Spec()},
                                 {"game", a.game},
                                 {"image_index", inst.index},
                                 {"true_class", inst.label},
                                 {"init", i},
                                 {"round", q},
                                 {"objective", r.objective(b)},
                                 {"success", static_cast<bool>(r.success[b])},
                                 {"predicted", r.predicted[b]},
                                 {"seed", a.seed}};
          if (defender && defender->rounds() >= q) {
            const Eigen::VectorXd act = defender->Action(static_cast<int>(q - 1));
            line["defender_action"] = std::vector<double>(act.data(), act.data() + act.size());
          }
          out << line.dump() << "\n";
        }
      };
      const attacks::AttackResult res =
          ex.Run(
                g, 0,
                [&](long q, double b) {
                  bar.Update(done,
                             a.attacker + " image " + std::to_string(inst.index) +
                                 " q=" + std::to_string(q) + " best y=" + Fmt(b, 3),
                             false);
                },
                hooks)
              .result;
      // Success rate against queries: a run counts from its first successful query on.
      if (res.success)
        for (long q = res.queries; q <= a.rounds; ++q) success_curve[q] += 1;
      successes.push_back(res.success ? 1 : 0);
      queries_all.push_back(res.success ? res.queries : a.rounds);
      if (res.success) first_success.push_back(res.queries);
      bar.Update(++done, a.attacker + (res.success ? " success" : " defended"), true);
    }
  }
  bar.Finish();
  out.close();
  fs::rename(rounds_path.string() + ".partial", rounds_path);
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
                a.game.c_str(), a.attacker.c_str(), defense.Spec().c_str(), eps, a.rounds,
                static_cast<int>(runs), sel.instances.size(), a.inits,
                static_cast<unsigned long long>(a.seed));
  table << buf;
  std::snprintf(buf, sizeof buf, "%-34s %s %%\n%-34s %s\n%-34s %s\n", "ASR within T",
                Fmt(100 * asr, 1).c_str(), "queries to success (successes)",
                first_success.empty() ? "-" : Fmt(mean_first, 1).c_str(),
                "mean queries (failures = T)", Fmt(mean_q, 1).c_str());
  table << buf;
  std::vector<int> idx;
  for (const auto& t : sel.instances) idx.push_back(t.index);
  nlohmann::json meta = {
      {"game", a.game},
      {"attacker", a.attacker},
      {"defender", defense.Spec()},
      {"defender_vae", defense.vae_path()},
      {"epsilon", eps},
      {"defender_eps", a.defender_eps.value_or(eps)},
      {"rounds", a.rounds},
      {"inits", a.inits},
      {"images", idx},
      {"model", experiment::RecordPath(ex.model_path())},
      {"seed", a.seed},
      {"asr", asr},
      {"mean_queries_to_success",
       first_success.empty() ? nlohmann::json(nullptr) : nlohmann::json(mean_first)},
      {"mean_queries_failures_at_T", mean_q},
      {"per_run_success", successes},
      {"per_run_queries", queries_all}};
  experiment::WriteFileAtomic(fs::path(a.out_dir) / "summary.json", meta.dump(2) + "\n");
  experiment::WriteFileAtomic(fs::path(a.out_dir) / "table.txt", table.str());
  std::ostringstream csv;
  csv << "round,success_rate\n";
  PlotSeries ser{a.attacker + " vs " + defense.Spec(), {}};
  for (int t = 1; t <= a.rounds; ++t) {
    csv << t << "," << Fmt(success_curve[t] / runs, 5) << "\n";
    ser.ys.push_back(success_curve[t] / runs);
  }
  experiment::WriteFileAtomic(fs::path(a.out_dir) / "curves.csv", csv.str());
  WriteLinePlot(fs::path(a.out_dir) / "curves.png", {ser}, 1.0, a.rounds, 0.0, 1.0, "query",
                "attack success rate");
  std::printf("\n%s\nrounds: %s; summary.json, table.txt, curves.csv, curves.png in %s\n",
              table.str().c_str(), rounds_path.c_str(), a.out_dir.c_str());
  return 0;
}

int RunGame(const GameArgs& in) {
  GameArgs a = in;
  {
    const auto names = attacks::AttackNames();
    const auto& l0 = games::Level0Names();  // "random" = the level-0 agent, not the attack
    if (std::find(names.begin(), names.end(), a.attacker) != names.end() &&
        std::find(l0.begin(), l0.end(), a.attacker) == l0.end()) {
      if (!a.matchups.empty())
        throw std::invalid_argument("--matchups is for R2-B2 agents, not with --attacker " +
                                    a.attacker);
      return RunAttackGame(a);
    }
  }

  const bool synthetic = a.game == "synthetic";
  if (!synthetic && a.game != "mnist" && a.game != "cifar10")
    throw std::invalid_argument("--game " + a.game + ": use synthetic, mnist or cifar10");
  // Game-dependent defaults (App. E.6.1.1a synthetic; E.6.2.1a adversarial ML).
  if (a.level0.empty()) a.level0 = synthetic ? "gpmw" : "random";
  if (a.samples <= 0) a.samples = a.game == "cifar10" ? 1000 : 500;
  if (a.init_rounds < 0) a.init_rounds = synthetic ? 1 : 5;
  if (a.payoff_noise < 0) a.payoff_noise = synthetic ? 0.02 : 0.0;
  if (a.candidates <= 0) a.candidates = synthetic ? 1000 : 200;
  // Latent game: the R2-B2 thesis' radius (App. E.6.2.1a) unless given; a given one is
  // checked like every other --eps.
  a.eps = a.eps ? experiment::EpsilonFor(a.game, a.eps) : (a.game == "cifar10" ? 0.05 : 0.2);
  const GameType type = games::ParseGameType(a.type);
  if (a.rounds < 1 || a.num_games < 1 || a.inits < 1 || a.grid < 2 || a.samples < 1)
    throw std::invalid_argument(
        "--rounds, --games, --inits, --grid and --samples must be positive");
  if (a.level0 != "random" && a.level0 != "gpmw" && a.level0 != "exp3" && a.level0 != "gpucb" &&
      a.level0 != "ts")
    throw std::invalid_argument("--level0 " + a.level0 + ": use random, gpmw, exp3, gpucb or ts");
  std::vector<std::pair<AgentSpec, AgentSpec>> matchups;
  std::vector<std::string> labels;
  if (a.matchups.empty()) {
    matchups.push_back({ParseAgent(a.attacker, a.level0), ParseAgent(a.defender, a.level0)});
  } else {
    for (const auto& m : a.matchups) matchups.push_back(ParseMatchup(m, a.level0));
  }
  for (const auto& [p, q] : matchups)
    labels.push_back(p.Label() + (p.plain.empty() && q.plain.empty() ? "v" : "-vs-") + q.Label());
  bo::ParseExplorationWeight(a.beta);  // validate before any work
  if (a.out_dir.empty()) throw std::invalid_argument("--out-dir is required");

  // ---- The games: sampled payoff functions, or images of the adversarial-ML game.
  std::unique_ptr<data::ImageSet> images;
  std::unique_ptr<oracle::Classifier> model;
  std::unique_ptr<oracle::Autoencoder> vae;
  std::vector<experiment::Instance> targets;
  std::string model_path, vae_path;
  if (!synthetic) {
    images = std::make_unique<data::ImageSet>(experiment::LoadImages(a.game, "", "auto"));
    model_path = experiment::DefaultModelPath(a.game);
    model = experiment::LoadModelFor(*images, model_path, "auto", a.threads);
    vae_path =
        a.vae.empty() ? (experiment::RepoRoot() / "models" / (a.game + "_vae.pt")).string() : a.vae;
    vae = oracle::Autoencoder::Load(vae_path, images->channels, images->height, images->width);
    if ((a.level0 == "gpmw" || a.level0 == "exp3") && vae->latent_dim() != 2)
      throw std::invalid_argument(
          "--level0 " + a.level0 +
          " needs a discretised action space: only for a 2-D latent (MNIST)");
    targets = experiment::SelectInstances(*images, *model, a.indices, a.num_games, true, -1, a.game)
                  .instances;
    if (targets.empty()) throw std::invalid_argument("no correctly classified image to play on");
  }
  const int num_games = synthetic ? a.num_games : static_cast<int>(targets.size());

  fs::create_directories(a.out_dir);
  const fs::path rounds_path = fs::path(a.out_dir) / "rounds.jsonl";
  std::ofstream rounds_out(rounds_path.string() + ".partial");
  if (!rounds_out) throw std::runtime_error(rounds_path.string() + ": cannot write");

  const long total = static_cast<long>(matchups.size()) * num_games * a.inits;
  ProgressBar bar(total, !a.quiet);
  // Per matchup: curves summed over runs (agent-1 running mean regret, or attack score per
  // round), and per-run totals.
  const size_t km = matchups.size();
  std::vector<std::vector<double>> curve1(km, std::vector<double>(a.rounds + 1, 0.0)),
      curve2 = curve1;
  std::vector<std::vector<double>> final1(km), final2(km), successes(km);
  std::vector<std::vector<std::string>> names(km);
  long done = 0;
  for (size_t k = 0; k < km; ++k) {
    for (int g = 0; g < num_games; ++g) {
      std::unique_ptr<games::GameEnvironment> env;
      AgentContext ctx{{},
                       bo::ExactGP(std::make_unique<bo::StationaryKernel>(
                                       bo::KernelFamily::kSquaredExponential, 2, false),
                                   a.gp_noise)};
      ctx.candidates = a.candidates;
      if (synthetic) {
        bo::Rng game_rng(bo::DeriveSeed(a.seed, static_cast<uint64_t>(g)));
        auto sg = std::make_unique<games::SyntheticGame>(type, game_rng, a.grid, a.lengthscale);
        ctx.spaces = {sg->space(0), sg->space(1)};
        ctx.prior = sg->TruePrior(a.gp_noise);
        ctx.belief.refit_every = 0;  // App. E.6.1.1a: the true GP hyperparameters
        ctx.rff_lengthscale = a.lengthscale;
        env = std::move(sg);
      } else {
        const experiment::Instance& t = targets[g];
        defenses::LatentGameOptions lo;
        lo.epsilon = *a.eps;
        lo.defender_active = matchups[k].second.level0 != "none";
        auto lg = std::make_unique<defenses::LatentGame>(*model, *vae, *vae, images->image(t.index),
                                                         t.label, lo);
        ctx.spaces = {lg->space(0), lg->space(1)};
        if (a.level0 == "gpmw" || a.level0 == "exp3")  // the 100 x 100 grid of [-2, 2]^2
          for (auto& sp : ctx.spaces) {
            Eigen::VectorXd v = Eigen::VectorXd::LinSpaced(100, sp.lower(0), sp.upper(0));
            sp.grid.resize(100 * 100, 2);
            for (int i = 0; i < 100; ++i)
              for (int j = 0; j < 100; ++j) sp.grid.row(i * 100 + j) << v(i), v(j);
          }
        const int joint = ctx.spaces[0].dim() + ctx.spaces[1].dim();
        ctx.prior = bo::ExactGP(
            std::make_unique<bo::StationaryKernel>(bo::KernelFamily::kSquaredExponential, joint,
                                                   true, std::vector<int>{}, 1.0, 1.0),
            a.gp_noise);
        ctx.belief.refit_every = a.refit_every;  // App. E.6.2.1a: every 10 iterations
        ctx.rff_lengthscale = 1.0;
        ctx.exact_limit = 1000;  // large grids: sample the expectation (S samples)
        env = std::move(lg);
      }
      for (int i = 0; i < a.inits; ++i) {
        const uint64_t run_seed = experiment::GameRunSeed(a.seed, g, i);
        bo::Rng rng(run_seed);
        ctx.belief.fit_seed = run_seed;
        auto p1 = MakeR2b2(0, matchups[k], ctx, a, run_seed);
        auto p2 = MakeR2b2(1, matchups[k], ctx, a, run_seed);
        names[k] = {p1->name(), p2->name()};
        games::GameOptions go;
        go.rounds = a.rounds;
        go.init_rounds = a.init_rounds;
        go.payoff_noise = a.payoff_noise;
        double cum1 = 0, cum2 = 0, succ = 0;
        games::RunRepeatedGame(
            *env, {p1.get(), p2.get()}, go, rng, [&](const games::RoundRecord& r) {
              nlohmann::json line = {{"matchup", labels[k]},
                                     {"agents", {p1->name(), p2->name()}},
                                     {"game", a.game},
                                     {"run_game", g},
                                     {"init", i},
                                     {"round", r.round},
                                     {"init_round", r.init},
                                     {"payoffs", {r.payoffs(0), r.payoffs(1)}},
                                     {"observed", {r.observed(0), r.observed(1)}},
                                     {"seconds", r.seconds},
                                     {"seed", a.seed}};
              line["actions"] = {std::vector<double>(r.actions[0].data(),
                                                     r.actions[0].data() + r.actions[0].size()),
                                 std::vector<double>(r.actions[1].data(),
                                                     r.actions[1].data() + r.actions[1].size())};
              if (synthetic) {
                line["game_type"] = games::GameTypeName(type);
              } else {
                line["image_index"] = targets[g].index;
                line["true_class"] = targets[g].label;
              }
              for (const auto& [key, v] : r.details.items()) line[key] = v;
              rounds_out << line.dump() << "\n";
              if (r.init) return;
              if (synthetic) {
                cum1 += r.details["regret"][0].get<double>();
                cum2 += r.details["regret"][1].get<double>();
                curve1[k][r.round] += cum1 / r.round;
                curve2[k][r.round] += cum2 / r.round;
              } else {
                cum1 += r.payoffs(0);
                cum2 += r.payoffs(1);
                succ += r.details["success"].get<bool>() ? 1 : 0;
                curve1[k][r.round] += r.payoffs(0);
                curve2[k][r.round] += r.details["success"].get<bool>() ? 1 : 0;
                bar.Update(done,
                           labels[k] + " image " + std::to_string(targets[g].index) + " round " +
                               std::to_string(r.round) + " successes " + std::to_string(int(succ)),
                           false);
              }
            });
        final1[k].push_back(cum1 / a.rounds);
        final2[k].push_back(cum2 / a.rounds);
        successes[k].push_back(succ);
        ++done;
        bar.Update(done, labels[k] + " game " + std::to_string(g) + " init " + std::to_string(i),
                   true);
      }
    }
  }
  bar.Finish();
  rounds_out.close();
  fs::rename(rounds_path.string() + ".partial", rounds_path);

  // ---- Summary: synthetic = mean regret over the T rounds; adversarial = successful
  // attacks per T rounds and mean attack score; mean and standard error over runs.
  auto mean_se = [](const std::vector<double>& v) {
    double m = 0, s2 = 0;
    for (double x : v) m += x;
    m /= v.size();
    for (double x : v) s2 += (x - m) * (x - m);
    const double se = v.size() > 1 ? std::sqrt(s2 / (v.size() - 1) / v.size()) : 0.0;
    return std::make_pair(m, se);
  };
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
    std::snprintf(buf, sizeof buf, "%-10s %24s %22s\n", "levels", "successful attacks / T",
                  "mean attack score");
  }
  table << buf;
  nlohmann::json summary = nlohmann::json::array();
  for (size_t k = 0; k < km; ++k) {
    const auto [m1, se1] = mean_se(final1[k]);
    const auto [m2, se2] = mean_se(final2[k]);
    nlohmann::json row = {{"matchup", labels[k]}, {"agents", names[k]}, {"runs", runs}};
    if (synthetic) {
      std::snprintf(buf, sizeof buf, "%-10s %14s +- %-5s %14s +- %-5s\n", labels[k].c_str(),
                    Fmt(m1, 4).c_str(), Fmt(se1, 4).c_str(), Fmt(m2, 4).c_str(),
                    Fmt(se2, 4).c_str());
      row["mean_regret"] = {m1, m2};
      row["stderr"] = {se1, se2};
    } else {
      const auto [ms, ses] = mean_se(successes[k]);
      std::snprintf(buf, sizeof buf, "%-10s %16s +- %-5s %14s +- %-5s\n", labels[k].c_str(),
                    Fmt(ms, 1).c_str(), Fmt(ses, 1).c_str(), Fmt(m1, 4).c_str(),
                    Fmt(se1, 4).c_str());
      row["successful_attacks"] = ms;
      row["successful_attacks_stderr"] = ses;
      row["mean_attack_score"] = m1;
      row["mean_attack_score_stderr"] = se1;
      row["per_run_successes"] = successes[k];
    }
    table << buf;
    summary.push_back(row);
  }
  nlohmann::json meta = {{"game", a.game},
                         {"rounds", a.rounds},
                         {"init_rounds", a.init_rounds},
                         {"games", num_games},
                         {"inits", a.inits},
                         {"level0", a.level0},
                         {"payoff_noise", a.payoff_noise},
                         {"gp_noise", a.gp_noise},
                         {"beta", a.beta},
                         {"samples", a.samples},
                         {"candidates", a.candidates},
                         {"seed", a.seed},
                         {"results", summary}};
  if (synthetic) {
    meta["game_type"] = games::GameTypeName(type);
    meta["grid"] = a.grid;
    meta["lengthscale"] = a.lengthscale;
  } else {
    meta["epsilon"] = *a.eps;
    meta["model"] = experiment::RecordPath(model_path);
    meta["vae"] = vae_path;
    meta["refit_every"] = a.refit_every;
    std::vector<int> idx;
    for (const auto& t : targets) idx.push_back(t.index);
    meta["images"] = idx;
  }
  experiment::WriteFileAtomic(fs::path(a.out_dir) / "summary.json", meta.dump(2) + "\n");
  experiment::WriteFileAtomic(fs::path(a.out_dir) / "table.txt", table.str());
  std::ostringstream csv;
  csv << "round";
  for (const auto& l : labels)
    csv << "," << l << (synthetic ? "_agent1," : "_attack_score,") << l
        << (synthetic ? "_agent2" : "_success_rate");
  csv << "\n";
  std::vector<PlotSeries> series;
  double y_max = synthetic ? 0.0 : 1.0;
  for (size_t k = 0; k < km; ++k) {
    PlotSeries ser{labels[k], {}};
    for (int t = 1; t <= a.rounds; ++t) {
      ser.ys.push_back(curve1[k][t] / runs);
      if (synthetic) y_max = std::max(y_max, curve1[k][t] / runs);
    }
    series.push_back(ser);
  }
  for (int t = 1; t <= a.rounds; ++t) {
    csv << t;
    for (size_t k = 0; k < km; ++k)
      csv << "," << Fmt(curve1[k][t] / runs, 5) << "," << Fmt(curve2[k][t] / runs, 5);
    csv << "\n";
  }
  experiment::WriteFileAtomic(fs::path(a.out_dir) / "curves.csv", csv.str());
  WriteLinePlot(fs::path(a.out_dir) / "curves.png", series, 1.0, a.rounds, 0.0,
                synthetic ? y_max * 1.05 : 1.0, "round",
                synthetic ? "agent-1 mean regret" : "attack score (mean over runs)");
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
      "synthetic: payoffs sampled from a GP (SE, lengthscale 0.1) on a 100x100 grid of [0,1]^2,\n"
      "  scaled to [0,1]; common-payoff, general-sum or constant-sum; reports agent 1's mean\n"
      "  regret T^-1 sum_t (max f_1 - f_1(x_t)).\n"
      "mnist | cifar10: the adversarial-ML game. The attacker (agent 1) adds a_1 in [-2,2]^z to\n"
      "  the VAE code of a clean test image and decodes (clipped to the eps-ball around the clean\n"
      "  image); the defender (agent 2) encodes that image, adds a_2, decodes (clipped around the\n"
      "  attacker's image); the model scores it. Attacker payoff = largest wrong-class\n"
      "  probability; a round is a successful attack when it beats the true class.\n"
      "Writes rounds.jsonl (one line per round), summary.json, table.txt, curves.csv and\n"
      "curves.png into --out-dir.\n"
      "--attacker ATTACK (square, bos2, parsimonious, ...): that attack plays T = --rounds\n"
      "  queries per image (untargeted) against --defender, a defender in the query loop\n"
      "  (r2b2:latent, r2b2:jpeg+noise, random:..., Dai 2021 Sec. 8.4.2.2) or a fixed defense.");
  cmd->add_option("--game", a->game, "synthetic | mnist | cifar10")->default_val("synthetic");
  cmd->add_option("--type", a->type, "synthetic game type: common | general | constant")
      ->default_val("common");
  cmd->add_option("--attacker,--agent1", a->attacker,
                  "agent 1: r2b2:K (level K), r2b2:1-lite, or a level-0 strategy: random, gpmw, "
                  "exp3, gpucb / ts (BO over the own action only, unaware of the opponent), none "
                  "(adversarial defender: no defender stage); or an attack from attacks/ (square, "
                  "bos2, parsimonious, ...) playing T = --rounds queries against --defender")
      ->default_val("r2b2:1");
  cmd->add_option("--defender,--agent2", a->defender,
                  "agent 2, same syntax; against an attack from attacks/ (--attacker square, "
                  "bos2, parsimonious, ...): a defender in the query loop -- r2b2:latent, "
                  "r2b2:jpeg+noise (tunable jpeg, bits, blur, noise, resize), random:..., a fixed "
                  "pipeline (jpeg:quality=75) or none")
      ->default_val("r2b2:0");
  cmd->add_option("--defender-eps", a->defender_eps,
                  "attack games, latent defender: L_inf clip around the attacker's image "
                  "(default the attack's eps)");
  cmd->add_option("--matchups", a->matchups,
                  "several matchups on the same games instead, e.g. 0v0,1v0,1Lv0,2v1 (levels of "
                  "agent 1 v agent 2; L = R2-B2-Lite)")
      ->delimiter(',');
  cmd->add_option("--level0", a->level0,
                  "level-0 strategy of every agent: random | gpmw | exp3 (default gpmw synthetic, "
                  "random adversarial; gpmw/exp3 there use a 100x100 grid, 2-D latents only)");
  cmd->add_option("--grid", a->grid, "synthetic: actions per agent (grid points of [0,1])")
      ->default_val(100);
  cmd->add_option("--lengthscale", a->lengthscale, "synthetic: SE lengthscale of the payoff GP")
      ->default_val(0.1);
  cmd->add_option("--rounds", a->rounds, "T, rounds per game")->default_val(150);
  cmd->add_option("--init-rounds", a->init_rounds,
                  "random joint actions observed first (default 1 synthetic, 5 adversarial)");
  cmd->add_option("--games", a->num_games,
                  "synthetic: sampled payoff functions; adversarial: first N correctly classified "
                  "test images")
      ->default_val(1);
  cmd->add_option("--indices", a->indices, "adversarial: play on these image indices")
      ->delimiter(',');
  cmd->add_option("--inits", a->inits, "initialisations per game / image")->default_val(1);
  cmd->add_option("--samples", a->samples,
                  "S, samples of the opponent's level-0 strategy when (8.3) is not exact "
                  "(default 500, 1000 CIFAR-10)");
  cmd->add_option("--candidates", a->candidates,
                  "own-action candidates per decision on continuous or large spaces (default 1000 "
                  "synthetic, 200 adversarial)");
  cmd->add_option(
      "--eps", a->eps,
      "adversarial: L_inf radius of each clip (default 0.2 MNIST, 0.05 CIFAR-10; attack "
      "games: the attack's, 0.3 MNIST, 0.05 CIFAR-10)");
  cmd->add_option("--vae", a->vae, "adversarial: TorchScript VAE (default models/<game>_vae.pt)");
  cmd->add_option("--refit-every", a->refit_every,
                  "adversarial: GP hyperparameter refit period in rounds (0 = never)")
      ->default_val(10);
  cmd->add_option("--threads", a->threads, "LibTorch threads (at most 256)")
      ->check(IntInRange(0, experiment::kMaxThreads))
      ->default_val(1);
  cmd->add_option(
      "--payoff-noise", a->payoff_noise,
      "std. dev. of the noise added to observed payoffs (default 0.02 synthetic, 0 adversarial)");
  cmd->add_option("--gp-noise", a->gp_noise, "the agents' GP noise variance (standardised units)")
      ->default_val(1e-2);
  cmd->add_option("--beta", a->beta, "UCB exploration weight: r2b2_ref | srinivas2010 | constant:V")
      ->default_val("r2b2_ref");
  cmd->add_option("--seed", a->seed, "run seed")->check(UnsignedInt())->default_val(0);
  cmd->add_option("--out-dir", a->out_dir, "output folder (required)");
  cmd->add_flag("-q,--quiet", a->quiet, "no progress bar");
  return [cmd, a]() { return cmd->parsed() ? RunGame(*a) : 0; };
}

}  // namespace advbo::cli
