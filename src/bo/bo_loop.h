// The generic sequential BO loop on the shared core (Shahriari et al. 2016, Alg. 1; GP-UCB
// of Srinivas et al. 2010; EI of Jones et al. 1998; Thompson sampling with random Fourier
// features as in FTS, Dai 2021 thesis Ch. 6): an initial space-filling design, then one
// acquisition maximiser per evaluation, with a refit schedule for the GP hyperparameters,
// stopping criteria, a per-evaluation callback and an explicitly passed seeded engine.
// The GP works on inputs rescaled to [0, 1]^d; everything reported is in the caller's units.
#pragma once

#include <Eigen/Dense>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "bo/acquisition.h"
#include "bo/acquisition_optimizer.h"
#include "bo/design.h"
#include "bo/hyperparameters.h"
#include "bo/kernel.h"
#include "bo/random.h"

namespace advbo::bo {

/// Thrown by an objective to report a failed evaluation (a crashed simulation, a
/// non-numeric output); the loop records it and stops or continues per OnError.
class EvaluationError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The objective: y = f(x) for x [d] inside the box. Failure: throw (any std::exception)
/// or return a non-finite value.
using Objective = std::function<double(const Eigen::VectorXd& x)>;

enum class AcquisitionKind { kUcb, kEi, kPi, kThompson };
/// Parses "ucb", "ei", "pi", "ts"; throws std::invalid_argument otherwise.
AcquisitionKind ParseAcquisition(const std::string& name);
std::string AcquisitionName(AcquisitionKind kind);

/// What a failed evaluation does.
enum class OnError {
  kStop,      ///< end the run cleanly (reason "evaluation failed"), keeping what was done
  kContinue,  ///< record it, count it against the budget, and impute the worst value seen
              ///< so far at that point so the GP steers away (not imputed before any success)
};

/// Options of RunBo, with their defaults.
struct BoLoopOptions {
  Goal goal = Goal::kMinimize;  ///< minimise (default) or maximise the objective
  int budget = 40;              ///< total evaluations, initial design included (>= 1)
  int initial_points = 0;       ///< initial design size; 0 = min(budget, d + 1, >= 3)
  /// Initial design: Sobol, Latin hypercube or uniform.
  DesignKind initial_design = DesignKind::kSobol;
  /// Acquisition: EI, PI, UCB or Thompson sampling.
  AcquisitionKind acquisition = AcquisitionKind::kEi;
  /// UCB exploration weight; t = BO iteration (1 = first after the design), d = input dim.
  ExplorationWeight beta{BetaPolicy::kKandasamy2015, 4.0, 0.1};
  double xi = 0.0;        ///< EI / PI margin, in standardised output units
  int ts_features = 500;  ///< random Fourier features for Thompson sampling
  /// Kernel family of the GP.
  KernelFamily kernel = KernelFamily::kMatern52;
  bool ard = true;  ///< one lengthscale per input (on [0,1]-scaled inputs)
  /// Observation-noise variance in standardised units: fitted when fit.fit_noise (default,
  /// starting from this value), fixed otherwise; 0 with fit_noise = false is noise-free.
  double noise_variance = 1e-4;
  int refit_every = 1;  ///< ML-II refit every this many BO iterations (>= 1)
  /// false keeps the initial kernel for the whole run (fixed-kernel studies, e.g. Azimi
  /// et al. 2012's SE kernel of width 0.01 * sum of the box sides).
  bool fit_hyperparameters = true;
  /// Initial lengthscales on [0,1]-scaled inputs: [d] (ARD) or [1]; empty = 0.2 each.
  Eigen::VectorXd initial_lengthscales;
  double initial_signal_variance = 1.0;  ///< initial kernel variance (standardised units)
  /// A finite domain: candidate points [M, d] in caller units, inside the box. Non-empty:
  /// the initial design is min(n_init, M) distinct random rows and every proposal the
  /// acquisition's maximiser over the rows (UCB's srinivas2010 beta uses |D| = M).
  Eigen::MatrixXd candidates;
  /// Standardise the GP outputs (default). false = zero-mean prior on the raw outputs,
  /// signal variance in objective units (Azimi et al. 2012's setting).
  bool standardize = true;
  /// Hyperparameter fit options.
  FitOptions fit = DefaultFit();
  /// How the acquisition is maximised.
  AcquisitionOptimizerOptions acquisition_optimizer{};
  double target = std::numeric_limits<double>::quiet_NaN();  ///< stop once best reaches it
  int patience = 0;  ///< stop after this many evaluations without
                     ///< improvement (0 = never)
  /// What a failed evaluation does: stop the run or skip the point.
  OnError on_error = OnError::kStop;

  /// ML-II defaults for unit-cube inputs: lengthscales in [0.01, 10], noise in [1e-6, 1].
  static FitOptions DefaultFit();
  /// budget and refit_every >= 1, initial_points >= 0, initial_signal_variance > 0, and the
  /// nested fit and acquisition_optimizer options. Throws std::invalid_argument "RunBo: ...".
  void Validate() const;
};

/// One evaluation of the loop.
struct BoStep {
  int evaluation = 0;  ///< 1-based evaluation index
  std::string phase;   ///< "init" or "bo"
  Eigen::VectorXd x;   ///< the point evaluated [d], caller units
  /// The same point in the GP's [0, 1]^d units when the proposer knows it (kept exactly, so
  /// the GP sees the proposed point, not a rounded round trip); empty = derived from x.
  Eigen::VectorXd x_unit;
  /// Finite domain (BoLoopOptions::candidates): the row proposed; -1 otherwise or for a point
  /// the caller chose.
  int candidate_index = -1;
  double y = std::numeric_limits<double>::quiet_NaN();  ///< NaN if the evaluation failed
  /// Whether the evaluation succeeded.
  bool ok = false;
  std::string error;                                         ///< failure message ("" if ok)
  double best_y = std::numeric_limits<double>::quiet_NaN();  ///< best so far (goal-aware)
  double acquisition_value = std::numeric_limits<double>::quiet_NaN();  ///< NaN in "init"
  double beta = std::numeric_limits<double>::quiet_NaN();               ///< UCB only
  double seconds_objective = 0.0;  ///< wall time of the evaluation
  double seconds_bo = 0.0;         ///< wall time of fitting + acquisition for this point
  /// Algorithm-specific fields (batch index, chosen arm, ...); null for the standard loop.
  nlohmann::json extra;
};

/// Outcome of a run.
struct BoResult {
  /// Every evaluation, in order.
  std::vector<BoStep> steps;
  Eigen::VectorXd best_x;  ///< empty if no evaluation succeeded
  /// Best observed y (NaN if none succeeded).
  double best_y = std::numeric_limits<double>::quiet_NaN();
  /// Failed evaluations.
  int failures = 0;
  std::string stop_reason;  ///< "budget", "target", "patience", "callback",
                            ///< "evaluation failed"
  std::string kernel;       ///< final kernel with hyperparameters (Kernel::Describe)
};

/// Called after every evaluation; return false to stop the run (reason "callback").
using StepCallback = std::function<bool(const BoStep&)>;

/// Runs BO of `objective` over the box [lb, ub] (each [d], lb < ub, else
/// std::invalid_argument): BoSession::Step until the session is done or `callback` returns
/// false. Deterministic for a given engine state and objective.
BoResult RunBo(const Objective& objective, const Eigen::VectorXd& lb, const Eigen::VectorXd& ub,
               const BoLoopOptions& options, Rng& rng, const StepCallback& callback = {});

}  // namespace advbo::bo
