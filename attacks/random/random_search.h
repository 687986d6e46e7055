// Random search in the L_inf eps-ball: the floor every attack should beat. Each query is an
// independent uniformly random vertex of the eps-ball (every pixel at x0 - eps or x0 + eps,
// then clipped to [0, 1] by the oracle); vertices are where L_inf attacks find their
// successes, so this is a stronger floor than sampling the interior.
#pragma once

#include "attacks/attack.h"

namespace advbo::attacks {

/// Options of RandomSearch.
struct RandomSearchOptions {
  int batch = 50;  ///< queries evaluated per model call (>= 1); does not change the result
                   ///< except that a success ends the run at the end of its batch
  /// batch >= 1; throws std::invalid_argument.
  void Validate() const;
};

/// Random vertex search; stops at the first success or at the budget.
class RandomSearch final : public Attack {
 public:
  /// An attack with `options`.
  explicit RandomSearch(RandomSearchOptions options = {}) : options_(options) {}
  std::string name() const override { return "random"; }
  AttackResult Run(oracle::QueryOracle& oracle, bo::Rng& rng,
                   const AttackProgress& progress) const override;

 private:
  RandomSearchOptions options_;
};

}  // namespace advbo::attacks
