// An agent's GP belief about one payoff function f_m over the joint action
// (Dai 2021 thesis Sec. 8.2: each agent models its payoff as a GP sample over [x_1, x_2]),
// kept in sync with the game history, with hyperparameters refit on a schedule.
//
// Refits draw their random restarts from an engine seeded by (fit_seed, round, m), so two
// agents with the same prior who model the same payoff hold identical posteriors: that is
// what lets a level-k agent simulate exactly what its opponent computes (eq. 8.7).
#pragma once

#include <cstdint>

#include "bo/gp.h"
#include "bo/hyperparameters.h"
#include "games/game.h"

namespace advbo::games {

/// Options of a PayoffBelief.
struct BeliefOptions {
  int refit_every = 10;  ///< refit the hyperparameters every this many rounds (App.
                         ///< E.6.2.1a: 10); 0 = keep the prior's hyperparameters
  int refit_until = 0;   ///< no refits once the history has more rounds than this
                         ///< (0 = no limit; bounds the O(N^3) refits of long games)
  /// Hyperparameter fit of the payoff GP.
  bo::FitOptions fit = DefaultFit();
  uint64_t fit_seed = 0;  ///< seed of the refit restarts (shared by all agents by default)
  /// ML-II with 1 restart, lengthscales in [0.01, 100], signal variance in [0.01, 100],
  /// noise in [1e-6, 1] (standardised units).
  static bo::FitOptions DefaultFit();
  /// Throws std::invalid_argument when refit_every or refit_until is negative or `fit` is
  /// out of range (bo::FitOptions::Validate).
  void Validate() const;
};

/// What a PayoffBelief's GP takes as input.
enum class BeliefInputs {
  kJointAction,  ///< the joint action [x_1, ..., x_M] (R2-B2, Sec. 8.2)
  kOwnAction,    ///< agent m's own action x_m only: a BO agent that ignores the others
                 ///< (App. E.6.2.2b GP-UCB / TS attackers)
};

/// GP posterior of payoff f_m given every round of the history.
class PayoffBelief {
 public:
  /// agent = m; input_dim = D, the joint action dimension (kJointAction) or d_m
  /// (kOwnAction); prior = kernel over [D], noise variance and output standardisation (its
  /// data is ignored). Throws std::invalid_argument if m < 0 or D < 1.
  PayoffBelief(int agent, int input_dim, const bo::ExactGP& prior, BeliefOptions options = {},
               BeliefInputs inputs = BeliefInputs::kJointAction);
  /// Brings the GP up to date with the history: appends new rounds (O(N^2) each) and refits
  /// when the round count reaches a multiple of refit_every (restarts seeded by fit_seed,
  /// the round count, m and the input kind). Throws std::invalid_argument if the history's
  /// joint (or agent m's) dimension differs from the kernel's or m has no action in it.
  void Update(const GameHistory& history);
  /// The payoff GP.
  const bo::ExactGP& gp() const { return gp_; }
  /// The agent whose payoff it models.
  int agent() const { return agent_; }
  /// Which actions the GP's inputs are.
  BeliefInputs inputs() const { return inputs_; }

 private:
  int agent_, input_dim_;
  BeliefInputs inputs_;
  bo::ExactGP gp_;
  BeliefOptions options_;
  long dropped_seen_ = 0;  // the history's dropped() at the last Update
};

}  // namespace advbo::games
