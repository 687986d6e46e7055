// The R2-B2 game study behind `advbo game` (Dai 2021 thesis, Ch. 8): R2-B2 agents of given
// reasoning levels play repeated games -- synthetic GP games (App. E.6.1.1a) or the VAE
// latent-space adversarial-ML game (Sec. 8.4.2, App. E.6.2.1a) -- one or several matchups on
// the same games and seeds. The CLI (cli/game_r2b2.cc) parses the options and writes the
// rounds, table and curves; everything that decides the numbers is here.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "data/datasets.h"
#include "experiment/setup.h"
#include "games/game.h"
#include "games/synthetic.h"
#include "oracle/autoencoder.h"
#include "oracle/classifier.h"

namespace advbo::experiment {

/// What a game study plays. Fields at -1 / 0 / "" take the game's defaults in
/// ResolveDefaults (synthetic: App. E.6.1.1a; mnist / cifar10: App. E.6.2.1a).
struct GameStudyOptions {
  std::string game = "synthetic";  ///< synthetic | mnist | cifar10
  std::string type = "common";     ///< synthetic game type (games::ParseGameType)
  /// One matchup of agents ("r2b2:K", "r2b2:1-lite" or a level-0 strategy name) ...
  /// Attacker and defender specs (levels and strategies).
  ///@{
  std::string attacker = "r2b2:1", defender = "r2b2:0";
  ///@}
  /// ... or several, as "1v0", "1Lv0", "2v1" (levels of agent 1 and agent 2).
  std::vector<std::string> matchups;
  std::string level0;  ///< level-0 strategy ("" = gpmw synthetic, random adversarial)
  /// What every R2-B2 agent assumes its opponent's level-0 strategy is: "self" =
  /// the opponent's own (its spec's level-0 strategy, the thesis' assumption and the
  /// default), or a level-0 strategy name (random, gpucb, ts, gpmw, exp3, none).
  std::string opponent_model = "self";
  /// Candidate actions of an omniscient defender (--defender omniscient; 0 = the larger of
  /// 1000 and `candidates`), >= `candidates`: the R2-B2 defender's own candidate set, then
  /// more points of its action space (Sobol, or grid rows).
  int omniscient_candidates = 0;
  int grid = 100;            ///< synthetic: grid points per action dimension, >= 2
  double lengthscale = 0.1;  ///< synthetic: the payoff GP's lengthscale
  int rounds = 150;          ///< T, rounds per run, >= 1
  int init_rounds = -1;      ///< random initial rounds (-1: 1 synthetic, 5 latent)
  /// Games (images) and runs per game, >= 1.
  ///@{
  int num_games = 1, inits = 1;  ///< games (images) and runs per game, >= 1
  ///@}
  int samples = 0;           ///< S, samples of the expectation (0: 500 / 1000)
  int candidates = 0;        ///< candidate actions (0: 1000 synthetic, 200 latent)
  int refit_every = 10;      ///< latent: belief GP refit period (App. E.6.2.1a)
  int threads = 1;           ///< LibTorch intra-op threads
  double payoff_noise = -1;  ///< observation noise std (-1: 0.02 synthetic, 0)
  double gp_noise = 1e-2;    ///< the agents' GP noise variance
  /// The agents' GPs standardise the payoffs (mean 0, std 1 before the prior); false = "raw":
  /// zero prior mean over payoffs in their own units (GPy's GPRegression in the R2-B2
  /// reference code), so an unexplored action is expected to pay 0.
  bool standardize_payoffs = true;
  /// Adversarial games: the agents' GP prior lengthscale in action units (the actions span
  /// [-2, 2] per latent dimension; the reference code starts GPy at 0.05 of its [0, 1]
  /// scaling = 0.2 here) and the random restarts of every hyperparameter refit besides the
  /// warm start (GPy's optimize_restarts(10) there).
  double gp_lengthscale = 1.0;
  /// Random restarts of the agents' GP fits.
  int gp_restarts = 1;
  /// Latent games: the defender's action gets a purification strength w in [0, 1] besides
  /// its latent move (w = 0 passes the attacker's image through; defenses::LatentGame).
  /// false = the thesis' action space.
  bool defender_strength = false;
  std::optional<double> eps;  ///< latent: L_inf clip (unset: 0.2 MNIST, 0.05 CIFAR)
  std::vector<int> indices;   ///< latent: images (empty: the first num_games)
  /// Latent game: the VAE, the classifier ("" = shipped) and the classifier's normalisation.
  ///@{
  std::string vae, model, normalize;  ///< latent: VAE, classifier ("" = shipped)
  ///@}
  std::string data;  ///< latent: test images file ("" = the shipped sample; as --data of attack)
  double http_timeout = 30;       ///< served classifier: seconds per request
  int http_retries = 3;           ///< served classifier: retries
  std::string beta = "r2b2_ref";  ///< exploration weight (bo::ParseExplorationWeight)
  /// The defender's own exploration weight when it should differ from --beta ("" = --beta);
  /// every agent models the other with the other's weight, so a GP-UCB attacker is still
  /// predicted exactly.
  std::string defender_beta;
  /// The R2-B2 defender's own candidate actions (0 = `candidates`; its first `candidates` are
  /// the shared set) and whether the vertices of its action box join them.
  int defender_candidates = 0;
  /// The defender's candidates include the 2^d vertices of its latent box.
  bool defender_vertices = false;
  /// The kernel of the defender's payoff GP over the joint action: "joint" (SE-ARD
  /// over [a_1, a_2], the thesis'), "additive" (an SE on a_1 plus an SE on a_2) or
  /// "additive+joint" (both summed). The attacker's payoff GP keeps the joint SE-ARD.
  std::string defender_kernel = "joint";
  /// The realistic setting of the thesis' Sec. 8.4.2.2 (App. E.6.2.2a), the R2-B2
  /// defender moves second -- it receives the attacker's image before it acts -- and
  /// best-responds to the attacker's actual action of the round instead of a predicted one.
  /// Needs an R2-B2 defender of level >= 1.
  bool defender_observes = false;
  uint64_t seed = 0;  ///< run seed (experiment/seeds.h derives the rest)

  /// Fills the game's defaults (the fields whose "0" / "-1" / "" above means "the game's
  /// default"), then calls Validate(). Throws std::invalid_argument as Validate does, or for
  /// an unknown --game.
  void ResolveDefaults();
  /// Refuses a defender option that no agent of the run would read (std::invalid_argument
  /// naming it and the defenders): --defender-vertices / --defender-candidates without an
  /// R2-B2 defender of level >= 1, --defender-kernel / --defender-beta without a defender
  /// whose payoff GP anyone reads, --omniscient-candidates without --defender omniscient.
  /// Before defaults are filled (an unset option is at its default).
  void RefuseUnusedDefenderOptions() const;
  /// Checks every field of resolved options: --game, --rounds, --games, --inits, --grid,
  /// --samples, --candidates >= 1, --init-rounds >= 0, --refit-every >= 0, noises, --eps,
  /// --level0, --beta, --indices, --type and the agents. Throws std::invalid_argument
  /// naming the option.
  void Validate() const;
};

/// One agent: R2-B2 level, Lite flag, and its level-0 strategy name.
struct AgentSpec {
  /// Reasoning level k >= 0.
  int level = 0;
  /// R2-B2-Lite (best response to one sampled action).
  bool lite = false;
  /// "omniscient" (defender only): plays the best of its candidates on the true model,
  /// knowing the attacker's action (games/omniscient.h); an upper bound, not a learner.
  bool omniscient = false;
  /// Level-0 strategy name.
  std::string level0;
  std::string plain;  ///< set when the agent is a bare level-0 strategy ("gpucb", "none", ...)
  /// "1", "1L" or the strategy name.
  std::string Label() const;
};

/// "r2b2:K", "r2b2:K-lite" (K = 1 only), a level-0 strategy name (games::Level0Names()),
/// which plays that strategy as a level-0 agent, or "omniscient" (whose level-0 model, for
/// an R2-B2 opponent, is default_level0). Throws std::invalid_argument naming `s`.
AgentSpec ParseAgent(const std::string& s, const std::string& default_level0);

/// "1v0", "1Lv0", "2v1": the agents of a matchup. Throws std::invalid_argument naming `s`.
std::pair<AgentSpec, AgentSpec> ParseMatchup(const std::string& s, const std::string& level0);

/// Per round of one run: the JSONL line of `advbo game`'s rounds.jsonl.
using GameRoundSink = std::function<void(const nlohmann::json& line)>;
/// After each finished run (done of total runs, a label) and, for latent games, after every
/// round (final = false).
using GameProgress =
    std::function<void(long done, long total, const std::string& text, bool final)>;

/// What a study measured, per matchup k: curves summed over runs per round [rounds + 1]
/// (synthetic: agents' running mean regret; latent: agent 1's payoff and successes) and
/// per-run totals.
struct GameStudyResult {
  /// Payoff structure of synthetic games.
  games::GameType type = games::GameType::kCommonPayoff;
  std::vector<std::string> labels;              ///< "1v0", "gpucb-vs-none", ...
  std::vector<std::vector<std::string>> names;  ///< the agents' names per matchup
  /// Per matchup and run: regret curves and final regrets of both agents, and successful attacks.
  ///@{
  std::vector<std::vector<double>> curve1, curve2, final1, final2, successes;
  ///@}
  /// Per matchup and agent (0, 1): played rounds in which the agent's decision assumed one
  /// action of its opponent (games::Agent::PredictedAction), and how many equalled the
  /// action the opponent played.
  /// Per matchup and agent: predictions made and predictions the opponent's play matched.
  ///@{
  std::vector<std::array<long, 2>> predicted, matched;
  ///@}
  /// Per matchup: model queries an omniscient defender spent scoring its candidates.
  std::vector<long> candidate_queries;
  int num_games = 0;        ///< games played per matchup
  std::vector<int> images;  ///< latent: the images played on
  /// Latent game: the classifier and VAE used.
  ///@{
  std::string model_path, vae_path;  ///< latent: the classifier and VAE used
  ///@}
  long runs() const;  ///< num_games x inits
};

/// Plays every matchup x game x init of `options` (ResolveDefaults already called), handing
/// every round to `on_round` and progress to `progress` (either may be null). Throws
/// std::invalid_argument on bad options, data::DataError / oracle::ModelError on a missing or
/// failing model, VAE or dataset.
GameStudyResult RunGameStudy(const GameStudyOptions& options, const GameRoundSink& on_round,
                             const GameProgress& progress);

}  // namespace advbo::experiment
