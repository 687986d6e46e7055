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
#include "cli/option_table.h"
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

// The options of the command, in --help order (cli/option_table.h).
const OptionRow<GameArgs> kGameOptions[] = {
    Value("--game", &GameArgs::study, &experiment::GameStudyOptions::game,
          "synthetic | mnist | cifar10", std::nullopt, "synthetic"),
    Value("--type", &GameArgs::study, &experiment::GameStudyOptions::type,
          "synthetic game type: common | general | constant", std::nullopt, "common"),
    Value("--attacker,--agent1", &GameArgs::study, &experiment::GameStudyOptions::attacker,
          "agent 1: r2b2:K (level K), r2b2:1-lite, or a level-0 strategy: random, gpmw, "
          "exp3, gpucb / ts (BO over the own action only, unaware of the opponent), none "
          "(adversarial defender: no defender stage); or an attack from attacks/ (square, "
          "bos2, parsimonious, ...) playing T = --rounds queries against --defender",
          std::nullopt, "r2b2:1"),
    Value("--defender,--agent2", &GameArgs::study, &experiment::GameStudyOptions::defender,
          "agent 2, same syntax, or omniscient (R2-B2 games: sees the attacker's action "
          "and plays the best of its candidates on the true model -- a bound on what any "
          "defender with this action space could do, not a learner); against an attack "
          "from attacks/ (--attacker square, "
          "bos2, parsimonious, ...): a defender in the query loop -- r2b2:latent, "
          "r2b2:jpeg+noise (tunable jpeg, bits, blur, noise, resize), random:..., a fixed "
          "pipeline (jpeg:quality=75) or none",
          std::nullopt, "r2b2:0"),
    Value("--model", &GameArgs::study, &experiment::GameStudyOptions::model,
          "attack games: the classifier, a TorchScript file or a served model's URL "
          "(http://127.0.0.1:PORT/predict, see advbo serve); default models/<game>_cw.pt"),
    Value("--normalize", &GameArgs::study, &experiment::GameStudyOptions::normalize,
          "attack games: the model expects normalised input: MEAN[,..]:STD[,..]"),
    Value("--pixels", &GameArgs::pixels,
          "attack games: query space, 8bit (every query on the 1/255 grid inside the "
          "ball) | float (any float32 pixel)",
          CLI::IsMember({"8bit", "float"}), "8bit"),
    Value("--http-timeout", &GameArgs::study, &experiment::GameStudyOptions::http_timeout,
          "served model: seconds per request", NumberIn(0, experiment::kMaxHttpTimeout, true), 30),
    Value("--http-retries", &GameArgs::study, &experiment::GameStudyOptions::http_retries,
          "served model: retries after a transport error, 5xx or 429", IntInRange(0, 100), 3),
    Custom<GameArgs>([](CLI::App* cmd, GameArgs* a) {
      return cmd
          ->add_option("--defender-eps", a->defender_eps,
                       "attack games, latent defender: L_inf clip around the attacker's image "
                       "(default the attack's eps)")
          ->transform(RadiusIn(1));
    }),
    Custom<GameArgs>([](CLI::App* cmd, GameArgs* a) {
      return cmd
          ->add_option(
              "--matchups", a->study.matchups,
              "several matchups on the same games instead, e.g. 0v0,1v0,1Lv0,2v1 (levels of "
              "agent 1 v agent 2; L = R2-B2-Lite)")
          ->delimiter(',');
    }),
    Value("--level0", &GameArgs::study, &experiment::GameStudyOptions::level0,
          "level-0 strategy of every agent: random | gpmw | exp3 (default gpmw synthetic, "
          "random adversarial; gpmw/exp3 there use a 100x100 grid, 2-D latents only)"),
    Value("--opponent-model", &GameArgs::study, &experiment::GameStudyOptions::opponent_model,
          "what every R2-B2 agent assumes its opponent's level-0 strategy is: self (the "
          "opponent's own, e.g. gpucb against --attacker gpucb; the thesis' assumption) | "
          "random | gpucb | ts | gpmw | exp3 | none. Each round's record holds the action "
          "the agent's decision assumed (predicted_actions) and whether it was played",
          std::nullopt, "self"),
    Value("--omniscient-candidates", &GameArgs::study,
          &experiment::GameStudyOptions::omniscient_candidates,
          "--defender omniscient: candidate actions scored per round (model queries; the "
          "R2-B2 defender's --candidates first; default max(1000, --candidates))",
          IntInRange(1, 100000)),
    Value("--grid", &GameArgs::study, &experiment::GameStudyOptions::grid,
          "synthetic: actions per agent (grid points of [0,1])", IntInRange(2, 1000), 100),
    Value("--lengthscale", &GameArgs::study, &experiment::GameStudyOptions::lengthscale,
          "synthetic: SE lengthscale of the payoff GP", NumberIn(0, 1e6, true), 0.1),
    Value("--rounds", &GameArgs::study, &experiment::GameStudyOptions::rounds, "T, rounds per game",
          IntInRange(1, 1000000), 150),
    Value("--init-rounds", &GameArgs::study, &experiment::GameStudyOptions::init_rounds,
          "random joint actions observed first (default 1 synthetic, 5 adversarial)",
          IntInRange(0, 1000000)),
    Value("--games", &GameArgs::study, &experiment::GameStudyOptions::num_games,
          "synthetic: sampled payoff functions; adversarial: first N correctly classified "
          "test images",
          IntInRange(1, 1000000), 1),
    Custom<GameArgs>([](CLI::App* cmd, GameArgs* a) {
      return cmd
          ->add_option("--indices", a->study.indices, "adversarial: play on these image indices")
          ->delimiter(',')
          ->check(IntAtLeast(0));
    }),
    Value("--inits", &GameArgs::study, &experiment::GameStudyOptions::inits,
          "initialisations per game / image", IntInRange(1, 1000000), 1),
    Value("--samples", &GameArgs::study, &experiment::GameStudyOptions::samples,
          "S, samples of the opponent's level-0 strategy when (8.3) is not exact "
          "(default 500, 1000 CIFAR-10)",
          IntInRange(1, 1000000)),
    Value("--candidates", &GameArgs::study, &experiment::GameStudyOptions::candidates,
          "own-action candidates per decision on continuous or large spaces (default 1000 "
          "synthetic, 200 adversarial)",
          IntInRange(1, 1000000)),
    Custom<GameArgs>([](CLI::App* cmd, GameArgs* a) {
      return cmd
          ->add_option(
              "--eps", a->study.eps,
              "adversarial: L_inf radius of each clip (default 0.2 MNIST, 0.05 CIFAR-10, the R2-B2 "
              "thesis' game setting; attack games: the standard eps of advbo attack, 0.3 MNIST, "
              "8/255 CIFAR-10)")
          ->transform(RadiusIn(1));
    }),
    Value("--data", &GameArgs::study, &experiment::GameStudyOptions::data,
          "adversarial: play on these test images instead of the shipped sample (an MNIST "
          "IDX images file or a CIFAR-10 .bin batch, e.g. the full CIFAR-10 test batch "
          "(test_batch.bin) for the thesis' image 9139)"),
    Flag("--defender-strength", &GameArgs::study, &experiment::GameStudyOptions::defender_strength,
         "adversarial: the defender also chooses its purification strength w in [0, 1] "
         "(its image moves w of the way to its VAE move; w = 0 passes the attacker's image "
         "through), so it can learn to stand aside; advbo's extension of the thesis' action "
         "space"),
    Value("--vae", &GameArgs::study, &experiment::GameStudyOptions::vae,
          "adversarial: TorchScript VAE (default models/<game>_vae.pt)"),
    Value("--refit-every", &GameArgs::study, &experiment::GameStudyOptions::refit_every,
          "adversarial: GP hyperparameter refit period in rounds (0 = never)",
          IntInRange(0, 1000000), 10),
    Value("--threads", &GameArgs::study, &experiment::GameStudyOptions::threads,
          "LibTorch threads (at most 256)", IntInRange(0, experiment::kMaxThreads), 1),
    Value(
        "--payoff-noise", &GameArgs::study, &experiment::GameStudyOptions::payoff_noise,
        "std. dev. of the noise added to observed payoffs (default 0.02 synthetic, 0 adversarial)",
        NumberIn(0, 1e6)),
    Value("--gp-noise", &GameArgs::study, &experiment::GameStudyOptions::gp_noise,
          "the agents' GP noise variance (standardised units)", NumberIn(0, 1e6, true), 1e-2),
    Custom<GameArgs>([](CLI::App* cmd, GameArgs* a) {
      return cmd
          ->add_option_function<std::string>(
              "--gp-outputs",
              [a](const std::string& v) { a->study.standardize_payoffs = v == "standardized"; },
              "adversarial: the agents' GPs model payoffs standardized (mean 0, std 1; the "
              "default) "
              "or raw (zero prior mean in payoff units: an unexplored action is expected to pay 0, "
              "as GPy's GPRegression in the R2-B2 reference code)")
          ->check(CLI::IsMember({"standardized", "raw"}))
          ->default_str("standardized");
    }),
    Value("--gp-lengthscale", &GameArgs::study, &experiment::GameStudyOptions::gp_lengthscale,
          "adversarial: the agents' GP prior lengthscale in action units (latent actions "
          "span [-2, 2]; refits start from it; the reference code's GPy start is 0.2)",
          NumberIn(0, 1e6, true), 1.0),
    Value("--gp-restarts", &GameArgs::study, &experiment::GameStudyOptions::gp_restarts,
          "adversarial: random restarts of each GP hyperparameter refit besides the warm "
          "start (the reference code: 10)",
          IntInRange(0, 100), 1),
    Value("--beta", &GameArgs::study, &experiment::GameStudyOptions::beta,
          "UCB exploration weight: r2b2_ref (0.5 d log 2t, d = own action dimension, the "
          "reference code) | r2b2_joint (d = joint dimension) | srinivas2010 | constant:V",
          std::nullopt, "r2b2_ref"),
    Value("--defender-beta", &GameArgs::study, &experiment::GameStudyOptions::defender_beta,
          "the defender's own UCB exploration weight, same syntax as --beta (default: "
          "--beta); the agents still model each other with each other's weight"),
    Value("--defender-candidates", &GameArgs::study,
          &experiment::GameStudyOptions::defender_candidates,
          "the R2-B2 defender's own candidate actions (default --candidates; the first "
          "--candidates of them are the set the attacker models it with)",
          IntInRange(1, 100000)),
    Flag("--defender-vertices", &GameArgs::study, &experiment::GameStudyOptions::defender_vertices,
         "the R2-B2 defender also considers the 2^d vertices of its latent action box (the "
         "largest moves; d <= 12)"),
    Value("--defender-kernel", &GameArgs::study, &experiment::GameStudyOptions::defender_kernel,
          "kernel of the defender's payoff GP over the joint action: joint (SE-ARD, the "
          "thesis') | additive (SE on the attacker's action + SE on its own) | "
          "additive+joint (both summed)",
          std::nullopt, "joint"),
    Flag("--defender-observes", &GameArgs::study, &experiment::GameStudyOptions::defender_observes,
         "the R2-B2 defender moves second: it receives the attacker's image before it "
         "acts and best-responds to the attacker's actual action (the thesis' realistic "
         "setting, Sec. 8.4.2.2) instead of predicting it"),
    Value("--seed", &GameArgs::study, &experiment::GameStudyOptions::seed, "run seed",
          UnsignedInt(), 0),
    Value("-o,--out,--out-dir", &GameArgs::out_dir,
          "output folder (required; --out-dir is the old name)"),
    Flag("-q,--quiet", &GameArgs::quiet, "no progress bar"),
};

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

  AddOptionTable(cmd, a.get(), kGameOptions);

  return [cmd, a]() { return cmd->parsed() ? RunGame(*a) : 0; };
}

}  // namespace advbo::cli
