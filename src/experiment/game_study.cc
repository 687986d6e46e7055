#include "experiment/game_study.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "bo/acquisition.h"
#include "bo/random.h"
#include "defenses/latent_game.h"
#include "experiment/seeds.h"
#include "experiment/spec.h"
#include "experiment/threat_model.h"
#include "games/omniscient.h"
#include "games/r2b2.h"

namespace advbo::experiment {

using games::GameType;

std::string AgentSpec::Label() const {
  return plain.empty() ? std::to_string(level) + (lite ? "L" : "") : plain;
}

AgentSpec ParseAgent(const std::string& s, const std::string& default_level0) {
  AgentSpec a;
  a.level0 = default_level0;
  const auto& names = games::Level0Names();
  if (s == "omniscient") {
    a.plain = s;
    a.omniscient = true;
    return a;
  }
  if (std::find(names.begin(), names.end(), s) != names.end()) {
    a.level0 = a.plain = s;
    return a;
  }
  const std::string prefix = "r2b2:";
  if (s.rfind(prefix, 0) != 0)
    throw std::invalid_argument("agent '" + s +
                                "': use r2b2:K (K = reasoning level), r2b2:1-lite, a level-0 "
                                "strategy (random, gpmw, exp3, gpucb, ts, none) or, as the "
                                "defender, omniscient");
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

long GameStudyResult::runs() const {
  return final1.empty() ? 0 : static_cast<long>(final1.front().size());
}

namespace {

// Whether a level-0 strategy learns from the payoff GP it observes (GamePayoffBelief): GP-UCB,
// Thompson sampling and GP-MW do; random and EXP3 (random features) do not.
bool UsesPayoffGp(const std::string& level0) {
  return level0 == "gpucb" || level0 == "ts" || level0 == "gpmw";
}

}  // namespace

void GameStudyOptions::RefuseUnusedDefenderOptions() const {
  const GameStudyOptions& a = *this;
  std::vector<std::pair<AgentSpec, AgentSpec>> pairs;
  if (a.matchups.empty())
    pairs.push_back({ParseAgent(a.attacker, a.level0), ParseAgent(a.defender, a.level0)});
  for (const auto& m : a.matchups) pairs.push_back(ParseMatchup(m, a.level0));
  bool r2b2_defender = false, omniscient = false, defender_gp = false;
  for (const auto& [att, def] : pairs) {
    omniscient |= def.omniscient;
    if (def.omniscient) continue;
    r2b2_defender |= def.level >= 1;
    // The defender's payoff GP (its kernel, its UCB weight) is read by its own reasoning
    // (level >= 1), by a level-0 strategy that learns from it, and by an attacker that
    // reasons about the defender's reasoning (level >= 2).
    defender_gp |= def.level >= 1 || att.level >= 2 || UsesPayoffGp(def.level0);
  }
  std::string defenders;
  for (const auto& [att, def] : pairs)
    defenders +=
        (defenders.empty() ? "" : ", ") + std::string(def.omniscient ? "omniscient" : "") +
        (def.omniscient      ? ""
         : def.plain.empty() ? "r2b2:" + std::to_string(def.level) + (def.lite ? "-lite" : "")
                             : def.plain);
  const auto refuse = [&](const std::string& option, const std::string& needs) {
    throw std::invalid_argument(option + " changes nothing here: it needs " + needs +
                                ", and the defender is " + defenders);
  };
  if ((a.defender_vertices || a.defender_candidates > 0) && !r2b2_defender)
    refuse(a.defender_vertices ? "--defender-vertices" : "--defender-candidates",
           "an R2-B2 defender of level >= 1 (r2b2:1, r2b2:1-lite, ...), which picks among its "
           "own candidates");
  if ((a.defender_kernel != "joint" || !a.defender_beta.empty()) && !defender_gp)
    refuse(a.defender_kernel != "joint" ? "--defender-kernel" : "--defender-beta",
           "a defender that learns from its payoff GP (an R2-B2 level >= 1 defender, a level-0 "
           "gpucb, ts or gpmw one, or an attacker of level >= 2 reasoning about it)");
  if (a.omniscient_candidates > 0 && !omniscient)
    refuse("--omniscient-candidates", "--defender omniscient");
}

// Game-dependent defaults (App. E.6.1.1a synthetic; E.6.2.1a adversarial ML), then checks.
void GameStudyOptions::ResolveDefaults() {
  GameStudyOptions& a = *this;
  const bool synthetic = a.game == "synthetic";
  if (!synthetic && a.game != "mnist" && a.game != "cifar10")
    throw std::invalid_argument("--game " + a.game + ": use synthetic, mnist or cifar10");
  if (a.level0.empty()) a.level0 = synthetic ? "gpmw" : "random";
  if (a.samples <= 0) a.samples = a.game == "cifar10" ? 1000 : 500;
  if (a.init_rounds < 0) a.init_rounds = synthetic ? 1 : 5;
  if (a.payoff_noise < 0) a.payoff_noise = synthetic ? 0.02 : 0.0;
  if (a.candidates <= 0) a.candidates = synthetic ? 1000 : 200;
  RefuseUnusedDefenderOptions();
  if (a.omniscient_candidates <= 0) a.omniscient_candidates = std::max(1000, a.candidates);
  // Latent game: the R2-B2 thesis' radius (App. E.6.2.1a) unless given; a given one is
  // checked like every other --eps.
  if (a.eps) CheckLinfRadius("--eps", a.eps);
  // (The synthetic game has no images: its radius is unused.)
  a.eps =
      a.eps.value_or(DefaultRadius(a.game, oracle::Norm::kLinf, RadiusUse::kGame).value_or(0.2));
  Validate();
}

void GameStudyOptions::Validate() const {
  const GameStudyOptions& a = *this;
  if (a.game != "synthetic" && a.game != "mnist" && a.game != "cifar10")
    throw std::invalid_argument("--game " + a.game + ": use synthetic, mnist or cifar10");
  if (a.game == "synthetic" && !a.data.empty())
    throw std::invalid_argument("--data is for the adversarial games (mnist, cifar10)");
  if (a.defender_strength && a.game == "synthetic")
    throw std::invalid_argument(
        "--defender-strength is for the adversarial games (mnist, cifar10)");
  if (a.defender_strength && (a.level0 == "gpmw" || a.level0 == "exp3"))
    throw std::invalid_argument(
        "--defender-strength needs a continuous action space: not with "
        "--level0 " +
        a.level0);
  if (a.rounds < 1 || a.num_games < 1 || a.inits < 1 || a.grid < 2 || a.samples < 1 ||
      a.candidates < 1)
    throw std::invalid_argument(
        "--rounds, --games, --inits, --samples and --candidates must be positive, --grid >= 2");
  if (a.init_rounds < 0 || a.refit_every < 0 || a.threads < 0)
    throw std::invalid_argument("--init-rounds, --refit-every and --threads must be >= 0");
  if (!(a.payoff_noise >= 0) || !std::isfinite(a.payoff_noise))
    throw std::invalid_argument("--payoff-noise must be >= 0");
  if (!(a.gp_lengthscale > 0) || !std::isfinite(a.gp_lengthscale) || a.gp_restarts < 0 ||
      a.gp_restarts > 100)
    throw std::invalid_argument("--gp-lengthscale must be > 0 and --gp-restarts in 0..100");
  if (!(a.gp_noise > 0) || !std::isfinite(a.gp_noise))
    throw std::invalid_argument("--gp-noise must be > 0");
  if (!(a.lengthscale > 0) || !std::isfinite(a.lengthscale))
    throw std::invalid_argument("--lengthscale must be > 0");
  if (a.eps && (!(*a.eps > 0) || *a.eps > 1))
    throw std::invalid_argument("--eps must be in (0, 1]");
  if (a.level0 != "random" && a.level0 != "gpmw" && a.level0 != "exp3" && a.level0 != "gpucb" &&
      a.level0 != "ts")
    throw std::invalid_argument("--level0 " + a.level0 + ": use random, gpmw, exp3, gpucb or ts");
  bo::ParseExplorationWeight(a.beta);  // validate before any work
  if (!a.defender_beta.empty()) bo::ParseExplorationWeight(a.defender_beta);
  CheckImageIndices(a.indices);
  games::ParseGameType(a.type);
  const auto& l0 = games::Level0Names();
  if (a.opponent_model != "self" && std::find(l0.begin(), l0.end(), a.opponent_model) == l0.end())
    throw std::invalid_argument("--opponent-model " + a.opponent_model +
                                ": use self, random, gpucb, ts, gpmw, exp3 or none");
  if (a.game != "synthetic" && (a.opponent_model == "gpmw" || a.opponent_model == "exp3") &&
      a.level0 != "gpmw" && a.level0 != "exp3")
    throw std::invalid_argument("--opponent-model " + a.opponent_model +
                                " needs the discretised action space of --level0 gpmw or exp3");
  if (a.defender_kernel != "joint" && a.defender_kernel != "additive" &&
      a.defender_kernel != "additive+joint")
    throw std::invalid_argument("--defender-kernel " + a.defender_kernel +
                                ": use joint, additive or additive+joint");
  if (a.defender_candidates < 0 || a.defender_candidates > 100000)
    throw std::invalid_argument("--defender-candidates must be in [0, 100000]");
  if (a.omniscient_candidates < a.candidates || a.omniscient_candidates > 100000)
    throw std::invalid_argument("--omniscient-candidates must be in [--candidates (" +
                                std::to_string(a.candidates) +
                                "), 100000]: the omniscient defender scores the R2-B2 "
                                "defender's candidates and more (default max(1000, --candidates))");
  if (a.defender_observes) {
    std::vector<AgentSpec> defenders;
    if (a.matchups.empty()) defenders.push_back(ParseAgent(a.defender, a.level0));
    for (const auto& m : a.matchups) defenders.push_back(ParseMatchup(m, a.level0).second);
    for (const auto& d : defenders)
      if (d.omniscient || d.level < 1)
        throw std::invalid_argument(
            "--defender-observes needs an R2-B2 defender of level >= 1 (r2b2:K or r2b2:1-lite), "
            "not " +
            d.Label());
  }
  if (a.matchups.empty()) {
    if (ParseAgent(a.attacker, a.level0).omniscient)
      throw std::invalid_argument(
          "--attacker omniscient: the omniscient agent moves second, so it can only defend "
          "(--defender omniscient)");
    ParseAgent(a.defender, a.level0);
  }
  for (const auto& m : a.matchups) ParseMatchup(m, a.level0);
}

namespace {

// Everything an R2-B2 agent needs besides its spec: the game's action spaces, the prior GP
// over the joint action, belief refit schedule, and the RFF lengthscale of EXP3.
struct AgentContext {
  std::vector<games::ActionSpace> spaces;
  bo::ExactGP prior;
  games::BeliefOptions belief;
  double rff_lengthscale = 0.1;
  int candidates = 1000;
  long exact_limit = 20000;
  double gp_lengthscale = 1.0;  // gpucb / ts own-action GP prior
};

// The prior of the defender's payoff GP: ctx.prior, or with --defender-kernel an SE per agent's
// action summed (plus the joint SE-ARD for additive+joint), same noise and outputs.
bo::ExactGP DefenderPrior(const AgentContext& ctx, const GameStudyOptions& a) {
  if (a.defender_kernel == "joint") return ctx.prior;
  const int d0 = ctx.spaces[0].dim(), d1 = ctx.spaces[1].dim();
  std::vector<std::vector<int>> groups(2);
  for (int j = 0; j < d0 + d1; ++j) groups[j < d0 ? 0 : 1].push_back(j);
  auto additive = std::make_unique<bo::AdditiveKernel>(bo::KernelFamily::kSquaredExponential,
                                                       d0 + d1, groups, a.gp_lengthscale, 0.5);
  std::unique_ptr<bo::Kernel> k;
  if (a.defender_kernel == "additive") {
    k = std::move(additive);
  } else {
    std::vector<std::unique_ptr<bo::Kernel>> parts;
    parts.push_back(std::move(additive));
    parts.push_back(ctx.prior.kernel().Clone());
    k = std::make_unique<bo::CompositeKernel>(bo::CompositeKernel::Op::kSum, std::move(parts));
  }
  return bo::ExactGP(std::move(k), ctx.prior.noise_variance(), ctx.prior.standardize());
}

// Agent `self` of the pair `specs`. It models agent m's level-0 strategy as specs[m]'s (the
// agents know each other's level-0 algorithm, Sec. 8.3.1.1); random features, candidate
// sets and refit restarts are seeded by the run and the agent index, so an agent's copy of
// another's strategy matches the original.
std::unique_ptr<games::R2b2Agent> MakeR2b2(int self, const std::pair<AgentSpec, AgentSpec>& specs,
                                           const AgentContext& ctx, const GameStudyOptions& a,
                                           uint64_t run_seed) {
  const AgentSpec& spec = self == 0 ? specs.first : specs.second;
  int joint = 0;
  for (const auto& sp : ctx.spaces) joint += sp.dim();
  std::vector<games::PayoffBelief> beliefs;
  beliefs.emplace_back(0, joint, ctx.prior, ctx.belief);
  beliefs.emplace_back(1, joint, DefenderPrior(ctx, a), ctx.belief);
  std::vector<std::unique_ptr<games::Level0Strategy>> level0;
  for (int m = 0; m < 2; ++m) {
    bo::Rng feat(bo::DeriveSeed(run_seed, 77 + m));
    games::Level0Options lo;
    lo.rff_lengthscale = ctx.rff_lengthscale;
    lo.candidates = ctx.candidates;
    lo.candidate_seed = bo::DeriveSeed(run_seed, 91 + m);
    lo.gp_noise = a.gp_noise;
    lo.standardize = a.standardize_payoffs;
    lo.gp_lengthscale = ctx.gp_lengthscale;
    lo.belief = ctx.belief;
    const std::string& own = (m == 0 ? specs.first : specs.second).level0;
    level0.push_back(games::MakeLevel0(
        m == self || a.opponent_model == "self" ? own : a.opponent_model, ctx.spaces[m], lo, feat));
  }
  games::R2b2Options opt;
  opt.level = spec.level;
  opt.lite = spec.lite;
  opt.samples = a.samples;
  opt.candidates = ctx.candidates;
  opt.exact_limit = ctx.exact_limit;
  opt.beta = bo::ParseExplorationWeight(a.beta);
  if (!a.defender_beta.empty())
    opt.agent_betas = {opt.beta, bo::ParseExplorationWeight(a.defender_beta)};
  if (self == 1) {
    opt.own_candidates = a.defender_candidates;
    opt.vertex_candidates = a.defender_vertices;
  }
  return std::make_unique<games::R2b2Agent>(self, ctx.spaces, std::move(beliefs), std::move(level0),
                                            opt, self == 1 && a.defender_observes);
}

// The omniscient defender's candidates [omniscient_candidates, d]: the R2-B2 defender's own
// set (R2b2Options::candidate_seed 0, agent 1), then further points of the space drawn from
// the run seed -- so it can always play what an R2-B2 defender could.
Eigen::MatrixXd OmniscientCandidates(const games::ActionSpace& space, const GameStudyOptions& a,
                                     uint64_t run_seed) {
  const Eigen::MatrixXd own = games::CandidateActions(space, a.candidates, bo::DeriveSeed(0, 1));
  const long more = a.omniscient_candidates - own.rows();
  if (more <= 0 || (space.finite() && own.rows() == space.size())) return own;
  const Eigen::MatrixXd extra = games::CandidateActions(
      space, static_cast<int>(std::min<long>(more, space.finite() ? space.size() : more)),
      bo::DeriveSeed(run_seed, 0x0a11));
  Eigen::MatrixXd all(own.rows() + extra.rows(), space.dim());
  all << own, extra;
  return all;
}

// The matchups to play and their labels ("1v0", "gpucb-vs-none", ...).
struct Matchups {
  std::vector<std::pair<AgentSpec, AgentSpec>> pairs;
  std::vector<std::string> labels;
};

Matchups ParseMatchups(const GameStudyOptions& a) {
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
  std::vector<Instance> targets;
  std::string model_path, vae_path;
};

LatentSetup LoadLatentGame(const GameStudyOptions& a) {
  LatentSetup ls;
  ls.images = std::make_unique<data::ImageSet>(LoadImages(a.game, a.data, "auto"));
  ls.model_path = a.model.empty() ? DefaultModelPath(a.game) : a.model;
  ls.model = LoadModelFor(*ls.images, ls.model_path, "auto", a.threads, a.normalize,
                          oracle::HttpOptions{a.http_timeout, a.http_retries});
  ls.vae_path = a.vae.empty() ? (RepoRoot() / "models" / (a.game + "_vae.pt")).string() : a.vae;
  ls.vae = oracle::Autoencoder::Load(ls.vae_path, ls.images->channels, ls.images->height,
                                     ls.images->width);
  if ((a.level0 == "gpmw" || a.level0 == "exp3") && ls.vae->latent_dim() != 2)
    throw std::invalid_argument("--level0 " + a.level0 +
                                " needs a discretised action space: only for a 2-D latent (MNIST)");
  ls.targets =
      SelectInstances(*ls.images, *ls.model, a.indices, a.num_games, true, -1, a.game).instances;
  if (ls.targets.empty()) throw std::invalid_argument("no correctly classified image to play on");
  return ls;
}

// Game g's environment; fills the agents' context (action spaces, prior, belief schedule).
std::unique_ptr<games::GameEnvironment> MakeGame(const GameStudyOptions& a, GameType type,
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
  const Instance& t = ls.targets[g];
  defenses::LatentGameOptions lo;
  lo.epsilon = *a.eps;
  lo.defender_active = defender_active;
  lo.strength_action = a.defender_strength;
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
  ctx->prior = bo::ExactGP(
      std::make_unique<bo::StationaryKernel>(bo::KernelFamily::kSquaredExponential, joint, true,
                                             std::vector<int>{}, a.gp_lengthscale, 1.0),
      a.gp_noise, a.standardize_payoffs);
  ctx->belief.refit_every = a.refit_every;  // App. E.6.2.1a: every 10 iterations
  ctx->belief.fit.restarts = a.gp_restarts;
  ctx->gp_lengthscale = a.gp_lengthscale;
  ctx->rff_lengthscale = 1.0;
  ctx->exact_limit = 1000;  // large grids: sample the expectation (S samples)
  return lg;
}

// Into `line`: what each agent's decision assumed its opponent would play (or null) and
// whether it did; counts predicted and matched played rounds per agent.
void RecordPredictions(const games::Agent& p1, const games::Agent& p2, const games::RoundRecord& r,
                       nlohmann::json* line, std::array<long, 2>* predicted,
                       std::array<long, 2>* matched) {
  nlohmann::json guesses = nlohmann::json::array(), hits = nlohmann::json::array();
  for (int m = 0; m < 2; ++m) {
    const Eigen::VectorXd guess = (m == 0 ? p1 : p2).PredictedAction(1 - m);
    const Eigen::VectorXd& played = r.actions[1 - m];
    if (guess.size() != played.size()) {
      guesses.push_back(nullptr);
      hits.push_back(nullptr);
      continue;
    }
    const bool same = (guess - played).cwiseAbs().maxCoeff() <= 1e-12;
    guesses.push_back(std::vector<double>(guess.data(), guess.data() + guess.size()));
    hits.push_back(same);
    ++(*predicted)[m];
    (*matched)[m] += same ? 1 : 0;
  }
  (*line)["predicted_actions"] = guesses;
  (*line)["prediction_matched"] = hits;
}

// Plays run `init` of matchup k on game g, handing one line per round to on_round and adding
// to `t`.
void PlayRun(const GameStudyOptions& a, GameType type, const LatentSetup& ls, const Matchups& mu,
             size_t k, int g, int init, games::GameEnvironment& env, AgentContext& ctx,
             const GameRoundSink& on_round, const GameProgress& progress, long done, long total,
             GameStudyResult* t) {
  const bool synthetic = a.game == "synthetic";
  const uint64_t run_seed = GameRunSeed(a.seed, g, init);
  bo::Rng rng(run_seed);
  ctx.belief.fit_seed = run_seed;
  std::unique_ptr<games::Agent> p1 = MakeR2b2(0, mu.pairs[k], ctx, a, run_seed), p2;
  games::OmniscientAgent* omniscient = nullptr;
  if (mu.pairs[k].second.omniscient) {
    auto o = std::make_unique<games::OmniscientAgent>(
        1, env, OmniscientCandidates(ctx.spaces[1], a, run_seed));
    omniscient = o.get();
    p2 = std::move(o);
  } else {
    p2 = MakeR2b2(1, mu.pairs[k], ctx, a, run_seed);
  }
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
    if (!r.init) RecordPredictions(*p1, *p2, r, &line, &t->predicted[k], &t->matched[k]);
    if (omniscient) line["omniscient_evaluations"] = omniscient->candidates().rows();
    if (on_round) on_round(line);
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
      if (progress)
        progress(done, total,
                 label + " image " + std::to_string(ls.targets[g].index) + " round " +
                     std::to_string(r.round) + " successes " + std::to_string(int(succ)),
                 false);
    }
  });
  if (omniscient) t->candidate_queries[k] += omniscient->evaluations();
  t->final1[k].push_back(cum1 / a.rounds);
  t->final2[k].push_back(cum2 / a.rounds);
  t->successes[k].push_back(succ);
}

}  // namespace

GameStudyResult RunGameStudy(const GameStudyOptions& a, const GameRoundSink& on_round,
                             const GameProgress& progress) {
  GameStudyResult t;
  t.type = games::ParseGameType(a.type);
  const Matchups mu = ParseMatchups(a);
  const bool synthetic = a.game == "synthetic";
  LatentSetup ls;
  if (!synthetic) ls = LoadLatentGame(a);
  t.num_games = synthetic ? a.num_games : static_cast<int>(ls.targets.size());
  for (const auto& inst : ls.targets) t.images.push_back(inst.index);
  t.model_path = ls.model_path;
  t.vae_path = ls.vae_path;
  const size_t km = mu.pairs.size();
  t.labels = mu.labels;
  t.names.assign(km, {});
  t.curve1.assign(km, std::vector<double>(a.rounds + 1, 0.0));
  t.curve2 = t.curve1;
  t.final1.assign(km, {});
  t.final2.assign(km, {});
  t.successes.assign(km, {});
  t.predicted.assign(km, {0, 0});
  t.matched.assign(km, {0, 0});
  t.candidate_queries.assign(km, 0);
  long done = 0;
  const long total = static_cast<long>(km) * t.num_games * a.inits;
  for (size_t k = 0; k < km; ++k)
    for (int g = 0; g < t.num_games; ++g) {
      AgentContext ctx{{},
                       bo::ExactGP(std::make_unique<bo::StationaryKernel>(
                                       bo::KernelFamily::kSquaredExponential, 2, false),
                                   a.gp_noise)};
      ctx.candidates = a.candidates;
      auto env = MakeGame(a, t.type, ls, g, mu.pairs[k].second.level0 != "none", &ctx);
      for (int i = 0; i < a.inits; ++i) {
        PlayRun(a, t.type, ls, mu, k, g, i, *env, ctx, on_round, progress, done, total, &t);
        ++done;
        if (progress)
          progress(done, total,
                   mu.labels[k] + " game " + std::to_string(g) + " init " + std::to_string(i),
                   true);
      }
    }
  return t;
}

}  // namespace advbo::experiment
