// `advbo game`: the command line of repeated games (Dai 2021 thesis, Ch. 8). R2-B2 agents
// against each other (cli/game_r2b2.cc) or an attack from attacks/ against a defender in the
// query loop (cli/game_attack.cc).
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "attacks/attack.h"
#include "cli/commands.h"
#include "cli/game_args.h"
#include "cli/validators.h"
#include "experiment/spec.h"
#include "games/level0.h"

namespace advbo::cli {
namespace {

// An attack as --attacker (a registry name or a spec such as bos2:kernel=matern52) plays
// against a defender in the query loop; anything else is an R2-B2 agent or a level-0
// strategy ("random" is the level-0 agent, not the attack).
int RunGame(const GameArgs& a) {
  {
    const auto names = attacks::AttackNames();
    const auto& l0 = games::Level0Names();
    const std::string base = a.study.attacker.substr(0, a.study.attacker.find(':'));
    if (std::find(names.begin(), names.end(), base) != names.end() &&
        std::find(l0.begin(), l0.end(), a.study.attacker) == l0.end()) {
      if (!a.study.matchups.empty())
        throw std::invalid_argument("--matchups is for R2-B2 agents, not with --attacker " +
                                    a.study.attacker);
      return RunAttackGame(a);
    }
  }
  return RunR2b2Game(a);
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
      "curves.png into the -o/--out folder.\n"
      "--attacker ATTACK (square, bos2, parsimonious, ...): that attack plays T = --rounds\n"
      "  queries per image (untargeted) against --defender, a defender in the query loop\n"
      "  (r2b2:latent, r2b2:jpeg+noise, random:..., Dai 2021 Sec. 8.4.2.2) or a fixed defense.");
  cmd->add_option("--game", a->study.game, "synthetic | mnist | cifar10")->default_val("synthetic");
  cmd->add_option("--type", a->study.type, "synthetic game type: common | general | constant")
      ->default_val("common");
  cmd->add_option("--attacker,--agent1", a->study.attacker,
                  "agent 1: r2b2:K (level K), r2b2:1-lite, or a level-0 strategy: random, gpmw, "
                  "exp3, gpucb / ts (BO over the own action only, unaware of the opponent), none "
                  "(adversarial defender: no defender stage); or an attack from attacks/ (square, "
                  "bos2, parsimonious, ...) playing T = --rounds queries against --defender")
      ->default_val("r2b2:1");
  cmd->add_option("--defender,--agent2", a->study.defender,
                  "agent 2, same syntax, or omniscient (R2-B2 games: sees the attacker's action "
                  "and plays the best of its candidates on the true model -- a bound on what any "
                  "defender with this action space could do, not a learner); against an attack "
                  "from attacks/ (--attacker square, "
                  "bos2, parsimonious, ...): a defender in the query loop -- r2b2:latent, "
                  "r2b2:jpeg+noise (tunable jpeg, bits, blur, noise, resize), random:..., a fixed "
                  "pipeline (jpeg:quality=75) or none")
      ->default_val("r2b2:0");
  cmd->add_option("--model", a->study.model,
                  "attack games: the classifier, a TorchScript file or a served model's URL "
                  "(http://127.0.0.1:PORT/predict, see advbo serve); default models/<game>_cw.pt");
  cmd->add_option("--normalize", a->study.normalize,
                  "attack games: the model expects normalised input: MEAN[,..]:STD[,..]");
  cmd->add_option("--pixels", a->pixels,
                  "attack games: query space, 8bit (every query on the 1/255 grid inside the "
                  "ball) | float (any float32 pixel)")
      ->check(CLI::IsMember({"8bit", "float"}))
      ->default_val("8bit");
  cmd->add_option("--http-timeout", a->study.http_timeout, "served model: seconds per request")
      ->check(NumberIn(0, experiment::kMaxHttpTimeout, true))
      ->default_val(30);
  cmd->add_option("--http-retries", a->study.http_retries,
                  "served model: retries after a transport error, 5xx or 429")
      ->check(IntInRange(0, 100))
      ->default_val(3);
  cmd->add_option("--defender-eps", a->defender_eps,
                  "attack games, latent defender: L_inf clip around the attacker's image "
                  "(default the attack's eps)")
      ->transform(RadiusIn(1));
  cmd->add_option("--matchups", a->study.matchups,
                  "several matchups on the same games instead, e.g. 0v0,1v0,1Lv0,2v1 (levels of "
                  "agent 1 v agent 2; L = R2-B2-Lite)")
      ->delimiter(',');
  cmd->add_option("--level0", a->study.level0,
                  "level-0 strategy of every agent: random | gpmw | exp3 (default gpmw synthetic, "
                  "random adversarial; gpmw/exp3 there use a 100x100 grid, 2-D latents only)");
  cmd->add_option("--opponent-model", a->study.opponent_model,
                  "what every R2-B2 agent assumes its opponent's level-0 strategy is: self (the "
                  "opponent's own, e.g. gpucb against --attacker gpucb; the thesis' assumption) | "
                  "random | gpucb | ts | gpmw | exp3 | none. Each round's record holds the action "
                  "the agent's decision assumed (predicted_actions) and whether it was played")
      ->default_val("self");
  cmd->add_option("--omniscient-candidates", a->study.omniscient_candidates,
                  "--defender omniscient: candidate actions scored per round (model queries; the "
                  "R2-B2 defender's --candidates first; default max(1000, --candidates))")
      ->check(IntInRange(1, 100000));
  cmd->add_option("--grid", a->study.grid, "synthetic: actions per agent (grid points of [0,1])")
      ->check(IntInRange(2, 1000))
      ->default_val(100);
  cmd->add_option("--lengthscale", a->study.lengthscale,
                  "synthetic: SE lengthscale of the payoff GP")
      ->check(NumberIn(0, 1e6, true))
      ->default_val(0.1);
  cmd->add_option("--rounds", a->study.rounds, "T, rounds per game")
      ->check(IntInRange(1, 1000000))
      ->default_val(150);
  cmd->add_option("--init-rounds", a->study.init_rounds,
                  "random joint actions observed first (default 1 synthetic, 5 adversarial)")
      ->check(IntInRange(0, 1000000));
  cmd->add_option("--games", a->study.num_games,
                  "synthetic: sampled payoff functions; adversarial: first N correctly classified "
                  "test images")
      ->check(IntInRange(1, 1000000))
      ->default_val(1);
  cmd->add_option("--indices", a->study.indices, "adversarial: play on these image indices")
      ->delimiter(',')
      ->check(IntAtLeast(0));
  cmd->add_option("--inits", a->study.inits, "initialisations per game / image")
      ->check(IntInRange(1, 1000000))
      ->default_val(1);
  cmd->add_option("--samples", a->study.samples,
                  "S, samples of the opponent's level-0 strategy when (8.3) is not exact "
                  "(default 500, 1000 CIFAR-10)")
      ->check(IntInRange(1, 1000000));
  cmd->add_option("--candidates", a->study.candidates,
                  "own-action candidates per decision on continuous or large spaces (default 1000 "
                  "synthetic, 200 adversarial)")
      ->check(IntInRange(1, 1000000));
  cmd->add_option(
         "--eps", a->study.eps,
         "adversarial: L_inf radius of each clip (default 0.2 MNIST, 0.05 CIFAR-10, the R2-B2 "
         "thesis' game setting; attack games: the standard eps of advbo attack, 0.3 MNIST, "
         "8/255 CIFAR-10)")
      ->transform(RadiusIn(1));
  cmd->add_option("--data", a->study.data,
                  "adversarial: play on these test images instead of the shipped sample (an MNIST "
                  "IDX images file or a CIFAR-10 .bin batch, e.g. the full CIFAR-10 test batch "
                  "(test_batch.bin) for the thesis' image 9139)");
  cmd->add_flag("--defender-strength", a->study.defender_strength,
                "adversarial: the defender also chooses its purification strength w in [0, 1] "
                "(its image moves w of the way to its VAE move; w = 0 passes the attacker's image "
                "through), so it can learn to stand aside; advbo's extension of the thesis' action "
                "space");
  cmd->add_option("--vae", a->study.vae,
                  "adversarial: TorchScript VAE (default models/<game>_vae.pt)");
  cmd->add_option("--refit-every", a->study.refit_every,
                  "adversarial: GP hyperparameter refit period in rounds (0 = never)")
      ->check(IntInRange(0, 1000000))
      ->default_val(10);
  cmd->add_option("--threads", a->study.threads, "LibTorch threads (at most 256)")
      ->check(IntInRange(0, experiment::kMaxThreads))
      ->default_val(1);
  cmd->add_option(
         "--payoff-noise", a->study.payoff_noise,
         "std. dev. of the noise added to observed payoffs (default 0.02 synthetic, 0 adversarial)")
      ->check(NumberIn(0, 1e6));
  cmd->add_option("--gp-noise", a->study.gp_noise,
                  "the agents' GP noise variance (standardised units)")
      ->check(NumberIn(0, 1e6, true))
      ->default_val(1e-2);
  cmd->add_option_function<std::string>(
         "--gp-outputs",
         [a](const std::string& v) { a->study.standardize_payoffs = v == "standardized"; },
         "adversarial: the agents' GPs model payoffs standardized (mean 0, std 1; the default) "
         "or raw (zero prior mean in payoff units: an unexplored action is expected to pay 0, "
         "as GPy's GPRegression in the R2-B2 reference code)")
      ->check(CLI::IsMember({"standardized", "raw"}))
      ->default_str("standardized");
  cmd->add_option("--gp-lengthscale", a->study.gp_lengthscale,
                  "adversarial: the agents' GP prior lengthscale in action units (latent actions "
                  "span [-2, 2]; refits start from it; the reference code's GPy start is 0.2)")
      ->check(NumberIn(0, 1e6, true))
      ->default_val(1.0);
  cmd->add_option("--gp-restarts", a->study.gp_restarts,
                  "adversarial: random restarts of each GP hyperparameter refit besides the warm "
                  "start (the reference code: 10)")
      ->check(IntInRange(0, 100))
      ->default_val(1);
  cmd->add_option("--beta", a->study.beta,
                  "UCB exploration weight: r2b2_ref (0.5 d log 2t, d = own action dimension, the "
                  "reference code) | r2b2_joint (d = joint dimension) | srinivas2010 | constant:V")
      ->default_val("r2b2_ref");
  cmd->add_option("--defender-beta", a->study.defender_beta,
                  "the defender's own UCB exploration weight, same syntax as --beta (default: "
                  "--beta); the agents still model each other with each other's weight");
  cmd->add_option("--defender-candidates", a->study.defender_candidates,
                  "the R2-B2 defender's own candidate actions (default --candidates; the first "
                  "--candidates of them are the set the attacker models it with)")
      ->check(IntInRange(1, 100000));
  cmd->add_flag("--defender-vertices", a->study.defender_vertices,
                "the R2-B2 defender also considers the 2^d vertices of its latent action box (the "
                "largest moves; d <= 12)");
  cmd->add_option("--defender-kernel", a->study.defender_kernel,
                  "kernel of the defender's payoff GP over the joint action: joint (SE-ARD, the "
                  "thesis') | additive (SE on the attacker's action + SE on its own) | "
                  "additive+joint (both summed)")
      ->default_val("joint");
  cmd->add_flag("--defender-observes", a->study.defender_observes,
                "the R2-B2 defender moves second: it receives the attacker's image before it "
                "acts and best-responds to the attacker's actual action (the thesis' realistic "
                "setting, Sec. 8.4.2.2) instead of predicting it");
  cmd->add_option("--seed", a->study.seed, "run seed")->check(UnsignedInt())->default_val(0);
  cmd->add_option("-o,--out,--out-dir", a->out_dir,
                  "output folder (required; --out-dir is the old name)");
  cmd->add_flag("-q,--quiet", a->quiet, "no progress bar");
  return [cmd, a]() { return cmd->parsed() ? RunGame(*a) : 0; };
}

}  // namespace advbo::cli
