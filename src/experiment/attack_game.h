// The attack game of `advbo game --attacker ATTACK` (Dai 2021 thesis, Sec. 8.4.2.2): an attack
// from attacks/ -- a level-0 strategy of the attacker (Sec. 8.3.1) -- against the defense of
// the experiment in the query loop (defenses/game_defense.h: an R2-B2 level-1 or random
// defender, or a fixed pipeline), one round per query, untargeted. The CLI
// (cli/game_attack.cc) writes the rounds and the summary; the runs and their tallies are here.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "experiment/runner.h"

namespace advbo::experiment {

/// Per-run tallies of an attack game, over instances x inits in order.
struct AttackGameTally {
  std::vector<double> first_success;  ///< queries to the first success, successful runs only
  std::vector<double> queries_all;    ///< queries to success, T for a failed run
  std::vector<double> successes;      ///< 1 per successful run, else 0
  std::vector<double> success_curve;  ///< [rounds + 1] runs successful by round t
};

/// Hooks of PlayAttackGame.
struct AttackGameHooks {
  /// Every answered batch of run (instance g, init): the oracle's result, the 1-based index
  /// of its first query in the run, the run's game defender (null for a fixed defense).
  std::function<void(size_t g, int init, const oracle::QueryResult& r, long first,
                     const defenses::GameDefense* defender)>
      on_batch;
  /// (runs done, status, whether a run just finished).
  std::function<void(long done, const std::string& status, bool run_finished)> progress;
};

/// Plays `inits` runs on every instance of `ex` (its first attack; budget = rounds), run
/// (g, i) seeded by GameRunSeed(seed, g, i), and tallies them. Model and defense failures
/// propagate.
AttackGameTally PlayAttackGame(const Experiment& ex, int inits, uint64_t seed,
                               const AttackGameHooks& hooks);

}  // namespace advbo::experiment
