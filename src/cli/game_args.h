// What the `advbo game` front ends share: the parsed arguments and the two kinds of game.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace advbo::cli {

/// Arguments of `advbo game` (see RegisterGameCommand for their meaning and defaults).
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
  std::string model, normalize;  // attack games: classifier file or URL ("" = shipped)
  std::string pixels = "8bit";   // attack games: query space, 8bit | float
  double http_timeout = 30;
  int http_retries = 3;
  std::string beta = "r2b2_ref";
  uint64_t seed = 0;
  std::string out_dir;
  bool quiet = false;
};

/// R2-B2 agents against each other (Dai 2021 thesis Ch. 8): synthetic GP games (App.
/// E.6.1.1a) or the VAE latent-space adversarial-ML game (Sec. 8.4.2), one or several
/// matchups of reasoning levels on the same games (cli/game_r2b2.cc). Returns the exit code.
int RunR2b2Game(const GameArgs& args);

/// An attack from attacks/ against a defender in the query loop, one round per query
/// (cli/game_attack.cc). Returns the exit code.
int RunAttackGame(const GameArgs& args);

}  // namespace advbo::cli
