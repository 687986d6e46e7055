// Hyperband (Li et al. 2017, JMLR 18, Algorithm 1): successive halving over brackets of random
// configurations with geometrically growing epoch budgets; the baseline of BO-BOS' experiments
// (Dai 2021 thesis App. A.4: eta = 3, R = 80 epochs).
#pragma once

#include <Eigen/Dense>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "algorithms/learning_curve.h"
#include "bo/random.h"

namespace advbo::algorithms {

/// Options of RunHyperband, with the thesis' values as defaults.
struct HyperbandOptions {
  int max_epochs = 80;      ///< R, the most epochs one configuration gets (>= 1)
  double eta = 3.0;         ///< successive-halving rate (> 1)
  int epoch_budget = 1500;  ///< total epochs charged over the whole run (>= 1)
  /// true: a promoted configuration continues its training, so it is charged only the new
  /// epochs r_i - r_{i-1} (the objective is still called for r_i epochs from scratch; with a
  /// deterministic objective that is the same curve). false: charged r_i (restart).
  bool resume = true;
  /// max_epochs and epoch_budget >= 1, eta > 1 finite; throws std::invalid_argument.
  void Validate() const;
};

/// One training run of a configuration in a rung.
struct HyperbandRecord {
  int evaluation = 0;      ///< 1-based
  int round = 0;           ///< pass over all brackets (0-based)
  int bracket = 0;         ///< s, from s_max down to 0
  int rung = 0;            ///< i, 0-based successive-halving round of the bracket
  int config = 0;          ///< index of the configuration in its bracket
  Eigen::VectorXd x;       ///< [d], caller units
  int epochs = 0;          ///< r_i, epochs the configuration reached
  int epochs_charged = 0;  ///< epochs added to the budget by this run
  double error = std::numeric_limits<double>::quiet_NaN();  ///< validation error at r_i
  /// Epochs spent when the record was made.
  int epochs_total = 0;
  /// Lowest validation error so far (NaN before any).
  double best_error = std::numeric_limits<double>::quiet_NaN();
  /// Training wall seconds so far.
  double seconds_train = 0;
};

/// Outcome of RunHyperband.
struct HyperbandResult {
  /// One record per trained configuration and rung, in order.
  std::vector<HyperbandRecord> records;
  /// Best configuration [d] in search units (empty if nothing finished).
  Eigen::VectorXd best_x;
  /// Its validation error (NaN if nothing finished).
  double best_error = std::numeric_limits<double>::quiet_NaN();
  /// Training epochs spent in all.
  int epochs_used = 0;
  std::string stop_reason;  ///< "budget" or "callback"
};

using HyperbandCallback = std::function<bool(const HyperbandRecord&)>;

/// s_max = floor(log_eta R) (with a 1e-9 tolerance, so R = eta^k gives k); for R = 80, eta = 3
/// it is 3.
int HyperbandSMax(int max_epochs, double eta);

/// Bracket s of Li et al. Alg. 1: n = ceil((s_max + 1) / (s + 1) * eta^s) configurations
/// starting at r = R eta^-s epochs; rung i keeps floor(n eta^-i) of them at round(r eta^i)
/// (>= 1) epochs. Returns the (configurations, epochs) pairs of rungs 0..s.
std::vector<std::pair<int, int>> HyperbandRungs(int max_epochs, double eta, int s);

/// Runs Hyperband over the box [lb, ub] (each [d], lb < ub; configurations uniform in the
/// box), repeating the brackets s = s_max..0 until the next training run would exceed the
/// epoch budget. Throws std::invalid_argument on bad options; objective exceptions propagate;
/// a reported error outside [0, 1] throws std::runtime_error. Deterministic for a given rng.
HyperbandResult RunHyperband(const CurveObjective& objective, const Eigen::VectorXd& lb,
                             const Eigen::VectorXd& ub, const HyperbandOptions& options,
                             bo::Rng& rng, const HyperbandCallback& callback = {});

}  // namespace advbo::algorithms
