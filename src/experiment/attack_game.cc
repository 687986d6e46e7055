#include "experiment/attack_game.h"

#include <cstdio>

#include "experiment/seeds.h"
#include "text/numbers.h"

namespace advbo::experiment {

AttackGameTally PlayAttackGame(const Experiment& ex, int inits, uint64_t seed,
                               const AttackGameHooks& hooks) {
  const long rounds = ex.spec().budget;
  const std::string attacker = ex.attack(0).name();
  AttackGameTally tally;
  tally.success_curve.assign(rounds + 1, 0.0);
  long done = 0;
  auto progress = [&](const std::string& status, bool run_finished) {
    if (hooks.progress) hooks.progress(done, status, run_finished);
  };
  for (size_t g = 0; g < ex.instances().size(); ++g) {
    const Instance& inst = ex.instances()[g];
    for (int i = 0; i < inits; ++i) {
      JobHooks job;
      job.instance_seed = GameRunSeed(seed, g, i);
      if (hooks.on_batch)
        job.on_batch = [&](const oracle::QueryResult& r, long first,
                           const defenses::GameDefense* defender) {
          hooks.on_batch(g, i, r, first, defender);
        };
      const attacks::AttackResult res =
          ex.Run(
                g, 0,
                [&](long q, double best) {
                  progress(attacker + " image " + std::to_string(inst.index) +
                               " q=" + std::to_string(q) + " best y=" + text::FormatG(best, 3),
                           false);
                },
                job)
              .result;
      // Success rate against queries: a run counts from its first successful query on.
      if (res.success)
        for (long q = res.queries; q <= rounds; ++q) tally.success_curve[q] += 1;
      tally.successes.push_back(res.success ? 1 : 0);
      tally.queries_all.push_back(res.success ? res.queries : rounds);
      if (res.success) tally.first_success.push_back(res.queries);
      ++done;
      progress(attacker + (res.success ? " success" : " defended"), true);
    }
  }
  return tally;
}

}  // namespace advbo::experiment
