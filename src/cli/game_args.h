// What the `advbo game` front ends share: the parsed arguments and the two kinds of game.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "experiment/game_study.h"

namespace advbo::cli {

/// Arguments of `advbo game` (see RegisterGameCommand for their meaning and defaults).
struct GameArgs {
  experiment::GameStudyOptions study;  // the R2-B2 game study (and the attack game's
                                       // game, model, eps, rounds, ... fields)
  std::optional<double> defender_eps;  // attack games: unset = the attack's eps
  std::string pixels = "8bit";         // attack games: query space, 8bit | float
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
