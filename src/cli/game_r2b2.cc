// `advbo game` between R2-B2 agents (Dai 2021 thesis, Ch. 8): synthetic GP games (App.
// E.6.1.1a) and the VAE latent-space adversarial-ML game (Sec. 8.4.2, App. E.6.2.1a), one or
// several matchups of reasoning levels on the same games; one JSONL line per round, a
// summary table, mean-regret (or attack-score) curves as CSV and PNG.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "bo/acquisition.h"
#include "bo/random.h"
#include "cli/format.h"
#include "cli/game_args.h"
#include "cli/plot.h"
#include "cli/progress.h"
#include "defenses/latent_game.h"
#include "experiment/records.h"
#include "experiment/seeds.h"
#include "experiment/setup.h"
#include "experiment/spec.h"
#include "games/r2b2.h"
#include "games/synthetic.h"
#include "oracle/autoencoder.h"

namespace advbo::cli {
namespace {

namespace fs = std::filesystem;
using games::GameType;

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

// Game-dependent defaults (App. E.6.1.1a synthetic; E.6.2.1a adversarial ML), then checks.
void ResolveDefaults(GameArgs& a) {
  const bool synthetic = a.game == "synthetic";
  if (!synthetic && a.game != "mnist" && a.game != "cifar10")
    throw std::invalid_argument("--game " + a.game + ": use synthetic, mnist or cifar10");
  if (a.level0.empty()) a.level0 = synthetic ? "gpmw" : "random";
  if (a.samples <= 0) a.samples = a.game == "cifar10" ? 1000 : 500;
  if (a.init_rounds < 0) a.init_rounds = synthetic ? 1 : 5;
  if (a.payoff_noise < 0) a.payoff_noise = synthetic ? 0.02 : 0.0;
  if (a.candidates <= 0) a.candidates = synthetic ? 1000 : 200;
  // Latent game: the R2-B2 thesis' radius (App. E.6.2.1a) unless given; a given one is
  // checked like every other --eps.
  a.eps = a.eps ? experiment::EpsilonFor(a.game, a.eps) : (a.game == "cifar10" ? 0.05 : 0.2);
  if (a.rounds < 1 || a.num_games < 1 || a.inits < 1 || a.grid < 2 || a.samples < 1)
    throw std::invalid_argument(
        "--rounds, --games, --inits, --grid and --samples must be positive");
  if (a.level0 != "random" && a.level0 != "gpmw" && a.level0 != "exp3" && a.level0 != "gpucb" &&
      a.level0 != "ts")
    throw std::invalid_argument("--level0 " + a.level0 + ": use random, gpmw, exp3, gpucb or ts");
  bo::ParseExplorationWeight(a.beta);  // validate before any work
  experiment::CheckImageIndices(a.indices);
  if (a.out_dir.empty()) throw std::invalid_argument("-o/--out (the output folder) is required");
}

// The matchups to play and their labels ("1v0", "gpucb-vs-none", ...).
struct Matchups {
  std::vector<std::pair<AgentSpec, AgentSpec>> pairs;
  std::vector<std::string> labels;
};

Matchups ParseMatchups(const GameArgs& a) {
  Matchups m;
  if (a.matchups.empty()) {
    m.pairs.push_back({ParseAgent(a.attacker, a.level0), ParseAgent(a.defender, a.level0)});
  } else {
    for (const auto& s : a.matchups) m.pairs.push_back(ParseMatchup(s, a.level0));
  }
  for (const auto& [p, q] : m.pairs)
    m.labels.push_back(p.Label() + (p.plain.empty() && q.plain.empty() ? "v" : "-vs-") + q.Label());
  return m;
}

// The adversarial-ML game's model, VAE and images (empty for synthetic games).
struct LatentSetup {
  std::unique_ptr<data::ImageSet> images;
  std::unique_ptr<oracle::Classifier> model;
  std::unique_ptr<oracle::Autoencoder> vae;
  std::vector<experiment::Instance> targets;
  std::string model_path, vae_path;
};

LatentSetup LoadLatentGame(const GameArgs& a) {
  LatentSetup ls;
  ls.images = std::make_unique<data::ImageSet>(experiment::LoadImages(a.game, "", "auto"));
  ls.model_path = a.model.empty() ? experiment::DefaultModelPath(a.game) : a.model;
  ls.model = experiment::LoadModelFor(*ls.images, ls.model_path, "auto", a.threads, a.normalize,
                                      oracle::HttpOptions{a.http_timeout, a.http_retries});
  ls.vae_path =
      a.vae.empty() ? (experiment::RepoRoot() / "models" / (a.game + "_vae.pt")).string() : a.vae;
  ls.vae = oracle::Autoencoder::Load(ls.vae_path, ls.images->channels, ls.images->height,
                                     ls.images->width);
  if ((a.level0 == "gpmw" || a.level0 == "exp3") && ls.vae->latent_dim() != 2)
    throw std::invalid_argument("--level0 " + a.level0 +
                                " needs a discretised action space: only for a 2-D latent (MNIST)");
  ls.targets =
      experiment::SelectInstances(*ls.images, *ls.model, a.indices, a.num_games, true, -1, a.game)
          .instances;
  if (ls.targets.empty()) throw std::invalid_argument("no correctly classified image to play on");
  return ls;
}

// Game g's environment; fills the agents' context (action spaces, prior, belief schedule).
std::unique_ptr<games::GameEnvironment> MakeGame(const GameArgs& a, GameType type,
                                                 const LatentSetup& ls, int g, bool defender_active,
                                                 AgentContext* ctx) {
  if (a.game == "synthetic") {
    bo::Rng game_rng(bo::DeriveSeed(a.seed, static_cast<uint64_t>(g)));
    auto sg = std::make_unique<games::SyntheticGame>(type, game_rng, a.grid, a.lengthscale);
    ctx->spaces = {sg->space(0), sg->space(1)};
    ctx->prior = sg->TruePrior(a.gp_noise);
    ctx->belief.refit_every = 0;  // App. E.6.1.1a: the true GP hyperparameters
    ctx->rff_lengthscale = a.lengthscale;
    return sg;
  }
  const experiment::Instance& t = ls.targets[g];
  defenses::LatentGameOptions lo;
  lo.epsilon = *a.eps;
  lo.defender_active = defender_active;
  auto lg = std::make_unique<defenses::LatentGame>(*ls.model, *ls.vae, *ls.vae,
                                                   ls.images->image(t.index), t.label, lo);
  ctx->spaces = {lg->space(0), lg->space(1)};
  if (a.level0 == "gpmw" || a.level0 == "exp3")  // the 100 x 100 grid of [-2, 2]^2
    for (auto& sp : ctx->spaces) {
      Eigen::VectorXd v = Eigen::VectorXd::LinSpaced(100, sp.lower(0), sp.upper(0));
      sp.grid.resize(100 * 100, 2);
      for (int i = 0; i < 100; ++i)
        for (int j = 0; j < 100; ++j) sp.grid.row(i * 100 + j) << v(i), v(j);
    }
  const int joint = ctx->spaces[0].dim() + ctx->spaces[1].dim();
  ctx->prior =
      bo::ExactGP(std::make_unique<bo::StationaryKernel>(bo::KernelFamily::kSquaredExponential,
                                                         joint, true, std::vector<int>{}, 1.0, 1.0),
                  a.gp_noise);
  ctx->belief.refit_every = a.refit_every;  // App. E.6.2.1a: every 10 iterations
  ctx->rff_lengthscale = 1.0;
  ctx->exact_limit = 1000;  // large grids: sample the expectation (S samples)
  return lg;
}

// Curves summed over runs (agent-1 running mean regret, or attack score per round) and
// per-run totals, per matchup.
struct Tallies {
  std::vector<std::vector<double>> curve1, curve2, final1, final2, successes;
  std::vector<std::vector<std::string>> names;
  Tallies(size_t matchups, int rounds)
      : curve1(matchups, std::vector<double>(rounds + 1, 0.0)),
        curve2(curve1),
        final1(matchups),
        final2(matchups),
        successes(matchups),
        names(matchups) {}
};

// Plays run `init` of matchup k on game g, writing one line per round and adding to `t`.
void PlayRun(const GameArgs& a, GameType type, const LatentSetup& ls, const Matchups& mu, size_t k,
             int g, int init, games::GameEnvironment& env, AgentContext& ctx,
             std::ofstream& rounds_out, ProgressBar& bar, long done, Tallies* t) {
  const bool synthetic = a.game == "synthetic";
  const uint64_t run_seed = experiment::GameRunSeed(a.seed, g, init);
  bo::Rng rng(run_seed);
  ctx.belief.fit_seed = run_seed;
  auto p1 = MakeR2b2(0, mu.pairs[k], ctx, a, run_seed);
  auto p2 = MakeR2b2(1, mu.pairs[k], ctx, a, run_seed);
  t->names[k] = {p1->name(), p2->name()};
  games::GameOptions go;
  go.rounds = a.rounds;
  go.init_rounds = a.init_rounds;
  go.payoff_noise = a.payoff_noise;
  double cum1 = 0, cum2 = 0, succ = 0;
  const std::string& label = mu.labels[k];
  games::RunRepeatedGame(env, {p1.get(), p2.get()}, go, rng, [&](const games::RoundRecord& r) {
    nlohmann::json line = {{"matchup", label},
                           {"agents", {p1->name(), p2->name()}},
                           {"game", a.game},
                           {"run_game", g},
                           {"init", init},
                           {"round", r.round},
                           {"init_round", r.init},
                           {"payoffs", {r.payoffs(0), r.payoffs(1)}},
                           {"observed", {r.observed(0), r.observed(1)}},
                           {"seconds", r.seconds},
                           {"seed", a.seed}};
    line["actions"] = {
        std::vector<double>(r.actions[0].data(), r.actions[0].data() + r.actions[0].size()),
        std::vector<double>(r.actions[1].data(), r.actions[1].data() + r.actions[1].size())};
    if (synthetic) {
      line["game_type"] = games::GameTypeName(type);
    } else {
      line["image_index"] = ls.targets[g].index;
      line["true_class"] = ls.targets[g].label;
    }
    for (const auto& [key, v] : r.details.items()) line[key] = v;
    rounds_out << line.dump() << "\n";
    if (r.init) return;
    if (synthetic) {
      cum1 += r.details["regret"][0].get<double>();
      cum2 += r.details["regret"][1].get<double>();
      t->curve1[k][r.round] += cum1 / r.round;
      t->curve2[k][r.round] += cum2 / r.round;
    } else {
      const bool success = r.details["success"].get<bool>();
      cum1 += r.payoffs(0);
      cum2 += r.payoffs(1);
      succ += success ? 1 : 0;
      t->curve1[k][r.round] += r.payoffs(0);
      t->curve2[k][r.round] += success ? 1 : 0;
      bar.Update(done,
                 label + " image " + std::to_string(ls.targets[g].index) + " round " +
                     std::to_string(r.round) + " successes " + std::to_string(int(succ)),
                 false);
    }
  });
  t->final1[k].push_back(cum1 / a.rounds);
  t->final2[k].push_back(cum2 / a.rounds);
  t->successes[k].push_back(succ);
}

// Mean and standard error of v.
std::pair<double, double> MeanSe(const std::vector<double>& v) {
  double m = 0, s2 = 0;
  for (double x : v) m += x;
  m /= v.size();
  for (double x : v) s2 += (x - m) * (x - m);
  const double se = v.size() > 1 ? std::sqrt(s2 / (v.size() - 1) / v.size()) : 0.0;
  return {m, se};
}

// The table (returned; also table.txt) and summary.json: synthetic = mean regret over the T
// rounds; adversarial = successful attacks per T rounds and mean attack score; mean and
// standard error over runs.
std::string WriteSummary(const GameArgs& a, GameType type, const LatentSetup& ls,
                         const Matchups& mu, const Tallies& t, int num_games) {
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
    std::snprintf(buf, sizeof buf, "%-10s %24s %22s\n", "levels", "successful attacks / T",
                  "mean attack score");
  }
  table << buf;
  nlohmann::json summary = nlohmann::json::array();
  for (size_t k = 0; k < mu.labels.size(); ++k) {
    const auto [m1, se1] = MeanSe(t.final1[k]);
    const auto [m2, se2] = MeanSe(t.final2[k]);
    nlohmann::json row = {{"matchup", mu.labels[k]}, {"agents", t.names[k]}, {"runs", runs}};
    if (synthetic) {
      std::snprintf(buf, sizeof buf, "%-10s %14s +- %-5s %14s +- %-5s\n", mu.labels[k].c_str(),
                    Fmt(m1, 4).c_str(), Fmt(se1, 4).c_str(), Fmt(m2, 4).c_str(),
                    Fmt(se2, 4).c_str());
      row["mean_regret"] = {m1, m2};
      row["stderr"] = {se1, se2};
    } else {
      const auto [ms, ses] = MeanSe(t.successes[k]);
      std::snprintf(buf, sizeof buf, "%-10s %16s +- %-5s %14s +- %-5s\n", mu.labels[k].c_str(),
                    Fmt(ms, 1).c_str(), Fmt(ses, 1).c_str(), Fmt(m1, 4).c_str(),
                    Fmt(se1, 4).c_str());
      row["successful_attacks"] = ms;
      row["successful_attacks_stderr"] = ses;
      row["mean_attack_score"] = m1;
      row["mean_attack_score_stderr"] = se1;
      row["per_run_successes"] = t.successes[k];
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
    meta["model"] = experiment::RecordPath(ls.model_path);
    meta["vae"] = experiment::RecordPath(ls.vae_path);
    meta["refit_every"] = a.refit_every;
    std::vector<int> idx;
    for (const auto& t : ls.targets) idx.push_back(t.index);
    meta["images"] = idx;
  }
  experiment::WriteFileAtomic(fs::path(a.out_dir) / "summary.json", meta.dump(2) + "\n");
  experiment::WriteFileAtomic(fs::path(a.out_dir) / "table.txt", table.str());
  return table.str();
}

// curves.csv and curves.png: per round, agent-1 running mean regret (synthetic) or attack
// score and success rate (adversarial), averaged over runs.
void WriteCurves(const GameArgs& a, const Matchups& mu, const Tallies& tally, long runs) {
  const bool synthetic = a.game == "synthetic";
  std::ostringstream csv;
  csv << "round";
  for (const auto& l : mu.labels)
    csv << "," << l << (synthetic ? "_agent1," : "_attack_score,") << l
        << (synthetic ? "_agent2" : "_success_rate");
  csv << "\n";
  std::vector<PlotSeries> series;
  double y_max = synthetic ? 0.0 : 1.0;
  for (size_t k = 0; k < mu.labels.size(); ++k) {
    PlotSeries ser{mu.labels[k], {}};
    for (int r = 1; r <= a.rounds; ++r) {
      ser.ys.push_back(tally.curve1[k][r] / runs);
      if (synthetic) y_max = std::max(y_max, tally.curve1[k][r] / runs);
    }
    series.push_back(ser);
  }
  for (int r = 1; r <= a.rounds; ++r) {
    csv << r;
    for (size_t k = 0; k < mu.labels.size(); ++k)
      csv << "," << Fmt(tally.curve1[k][r] / runs, 5) << "," << Fmt(tally.curve2[k][r] / runs, 5);
    csv << "\n";
  }
  experiment::WriteFileAtomic(fs::path(a.out_dir) / "curves.csv", csv.str());
  WriteLinePlot(fs::path(a.out_dir) / "curves.png", series, 1.0, a.rounds, 0.0,
                synthetic ? y_max * 1.05 : 1.0, "round",
                synthetic ? "agent-1 mean regret" : "attack score (mean over runs)");
}

}  // namespace

int RunR2b2Game(const GameArgs& in) {
  GameArgs a = in;
  ResolveDefaults(a);
  const GameType type = games::ParseGameType(a.type);
  const Matchups mu = ParseMatchups(a);
  const bool synthetic = a.game == "synthetic";
  LatentSetup ls;
  if (!synthetic) ls = LoadLatentGame(a);
  const int num_games = synthetic ? a.num_games : static_cast<int>(ls.targets.size());

  experiment::CreatedFolders folders;  // removed again if the run fails
  folders.Create(a.out_dir);
  const fs::path rounds_path = fs::path(a.out_dir) / "rounds.jsonl";
  experiment::RemoveUnlessReleased partial(rounds_path.string() + ".partial");
  std::ofstream rounds_out(rounds_path.string() + ".partial");
  if (!rounds_out) throw std::runtime_error(rounds_path.string() + ": cannot write");
  const size_t km = mu.pairs.size();
  ProgressBar bar(static_cast<long>(km) * num_games * a.inits, !a.quiet);
  Tallies t(km, a.rounds);
  long done = 0;
  for (size_t k = 0; k < km; ++k)
    for (int g = 0; g < num_games; ++g) {
      AgentContext ctx{{},
                       bo::ExactGP(std::make_unique<bo::StationaryKernel>(
                                       bo::KernelFamily::kSquaredExponential, 2, false),
                                   a.gp_noise)};
      ctx.candidates = a.candidates;
      auto env = MakeGame(a, type, ls, g, mu.pairs[k].second.level0 != "none", &ctx);
      for (int i = 0; i < a.inits; ++i) {
        PlayRun(a, type, ls, mu, k, g, i, *env, ctx, rounds_out, bar, done, &t);
        ++done;
        bar.Update(done, mu.labels[k] + " game " + std::to_string(g) + " init " + std::to_string(i),
                   true);
      }
    }
  bar.Finish();
  rounds_out.close();
  if (!rounds_out) throw std::runtime_error(rounds_path.string() + ".partial: write failed");
  fs::rename(rounds_path.string() + ".partial", rounds_path);
  partial.Release();
  const std::string table = WriteSummary(a, type, ls, mu, t, num_games);
  WriteCurves(a, mu, t, static_cast<long>(num_games) * a.inits);
  folders.Keep();
  std::printf("\n%s\nrounds: %s; summary.json, table.txt, curves.csv, curves.png in %s\n",
              table.c_str(), rounds_path.c_str(), a.out_dir.c_str());
  return 0;
}

}  // namespace advbo::cli
