// BO-BOS: GP-UCB over hyperparameters whose training runs are early-stopped by Bayesian optimal
// stopping (Dai 2021 thesis, Ch. 4, Algorithm 4.1; App. A.2 for the BOS solver and A.4 for the
// experimental settings). With early_stopping = false the same loop is plain GP-UCB with every
// configuration trained for N epochs (the thesis' baseline), so the two are paired by seed.
#pragma once

#include <Eigen/Dense>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "algorithms/learning_curve.h"
#include "bo/acquisition.h"
#include "bo/acquisition_optimizer.h"
#include "bo/bo_loop.h"
#include "bo/gp.h"
#include "bo/hyperparameters.h"
#include "bo/random.h"

namespace advbo::algorithms {

/// Options of RunBoBos; defaults are the thesis' (Sec. 4.5.1, Fig. 4.1, App. A.4).
struct BoBosOptions {
  int max_epochs = 50;     ///< N, epochs of a full training run (>= 2)
  int warmup_epochs = 8;   ///< N0, epochs before the BOS problem is solved (2 <= N0 < N)
  double kappa = 2.0;      ///< C2: sigma([x, N]) <= kappa * sigma([x, n]); >= 1
  double k1_first = 100;   ///< K_{1,1} (> 0; +infinity = never stop)
  double gamma = 0.95;     ///< K_{1,t} = K_{1,t-1} / gamma, in (0, 1]; thesis a-d: .89 .95 .99 1
  double k2 = 99;          ///< K_2, cost of a wrong d2 (> 0)
  double cost = 1;         ///< c_{d0}, cost of one more epoch (> 0)
  int num_paths = 100000;  ///< BOS forward-simulation paths (App. A.2)
  int grid_size = 100;     ///< BOS summary-statistic intervals (App. A.2)
  int initial_points = 6;  ///< trained fully, never stopped (App. A.4)
  /// Epochs whose errors are added to the GP as extra observations [x, n/N] (App. A.4:
  /// 1, 10, 20, 30, 40 for N = 50); only those before the run's last epoch are used.
  std::vector<int> intermediate_epochs{1, 10, 20, 30, 40};
  /// false: plain GP-UCB (every run N epochs, no BOS, no intermediate observations).
  bool early_stopping = true;
  int epoch_budget = 1500;          ///< total training epochs over the whole run (>= 1)
  int max_evaluations = 0;          ///< stop after this many trained configurations (0 = no limit)
  int refit_every = 10;             ///< ML-II refit every this many BO iterations (App. A.4)
  bool fit_hyperparameters = true;  ///< false keeps the initial kernel (tests, ablations)
  /// GP-UCB exploration weight beta_t, t = BO iteration, d = hyperparameter dimension.
  bo::ExplorationWeight beta{bo::BetaPolicy::kKandasamy2015, 4.0, 0.1};
  double noise_variance = 1e-3;  ///< initial GP noise (standardised outputs), fitted
  /// ML-II fit of the GP on [0, 1]^(d+1) inputs (BoLoopOptions' defaults).
  bo::FitOptions fit = bo::BoLoopOptions::DefaultFit();
  /// How the GP-UCB acquisition is maximised over the search box.
  bo::AcquisitionOptimizerOptions acquisition_optimizer{};
  /// Every field in its documented range; throws std::invalid_argument "BO-BOS: ..." naming it.
  void Validate() const;
};

/// One trained configuration.
struct BoBosRecord {
  int evaluation = 0;         ///< 1-based
  std::string phase;          ///< "init" (trained fully) or "bo"
  int bo_iteration = 0;       ///< t of Alg. 4.1 (0 in "init")
  Eigen::VectorXd x;          ///< hyperparameters [d], caller units
  std::vector<double> curve;  ///< validation errors of epochs 1..epochs
  int epochs = 0;             ///< n_t, epochs trained
  double error = std::numeric_limits<double>::quiet_NaN();  ///< y = curve[n_t - 1]
  bool early_stopped = false;                               ///< C1 and C2 held at epoch n_t < N
  bool budget_cut = false;  ///< the epoch budget ended the run before N
  double k1 = std::numeric_limits<double>::quiet_NaN();             ///< K_{1,t} ("bo" only)
  double threshold = std::numeric_limits<double>::quiet_NaN();      ///< incumbent error e*_{t-1}
  double prior_success = std::numeric_limits<double>::quiet_NaN();  ///< BOS P(e_N < e*)
  /// C2 per epoch [N] under the GP of iteration t-1 ("bo" with early stopping; else empty).
  std::vector<bool> c2;
  /// beta_t of the GP-UCB step that proposed the configuration (NaN for initial points).
  double beta = std::numeric_limits<double>::quiet_NaN();
  /// Acquisition value at the proposal (NaN for initial points).
  double acquisition_value = std::numeric_limits<double>::quiet_NaN();
  int epochs_total = 0;  ///< epochs used by the whole run after this record
  double best_error = std::numeric_limits<double>::quiet_NaN();  ///< min error so far
  double seconds_train = 0;                                      ///< wall time inside the objective
  double seconds_bo = 0;  ///< GP fit + acquisition + BOS solve
};

/// Outcome of RunBoBos.
struct BoBosResult {
  /// One record per trained configuration, in order.
  std::vector<BoBosRecord> records;
  Eigen::VectorXd best_x;  ///< configuration with the lowest observed error
  /// Lowest final validation error found (NaN if nothing finished).
  double best_error = std::numeric_limits<double>::quiet_NaN();
  /// Training epochs spent in all.
  int epochs_used = 0;
  std::string stop_reason;  ///< "budget", "evaluations" or "callback"
  std::string kernel;       ///< final GP kernel
};

/// Called after every record; return false to stop (reason "callback").
using BoBosCallback = std::function<bool(const BoBosRecord&)>;

/// K_{1,t} = k1_first / gamma^(t - 1) for BO iteration t >= 1 (thesis Fig. 4.1 caption).
double BoBosK1(const BoBosOptions& options, int t);

/// C2 of Alg. 4.1 for every epoch: c2[n - 1] = sigma([x, N]) <= kappa * sigma([x, n]) under
/// the given GP on inputs [u, n / N] (u [d] in [0, 1]^d); returns [N]. The GP must be the one
/// from before the iteration (Alg. 4.1 uses sigma_{t-1}). An empty GP gives all true.
std::vector<bool> BoBosC2(const bo::ExactGP& gp, const Eigen::VectorXd& u, int max_epochs,
                          double kappa);

/// Runs BO-BOS (Alg. 4.1) over the box [lb, ub] (each [d], lb < ub) until the epoch budget
/// (or max_evaluations) is used. The GP is on [u, n/N] (u = x scaled to [0, 1]^d; Matérn-5/2
/// ARD) and models the score -error; x_t maximises the UCB at n = N (line 2). For a "bo"
/// configuration, after N0 epochs the BOS problem (4.1) is solved with threshold e*_{t-1} (the
/// lowest error observed so far; the noise term xi_t is left out as in App. A.4), K1 =
/// BoBosK1(t), K2, c and the summary statistic = mean error over epochs 1..n; training stops
/// at the first n in (N0, N) where the decision is d1 (C1) and C2 held under the GP of
/// iteration t-1. Then [x_t, n_t/N] with y_{t,n_t} and the intermediate epochs before n_t are
/// added to the GP (line 11). The last run is cut where the budget ends (budget_cut).
/// Throws std::invalid_argument on bad options or box; an objective exception propagates
/// (records up to then were passed to callback); a reported error that is non-finite or
/// outside [0, 1] throws std::runtime_error. Deterministic for a given rng state.
BoBosResult RunBoBos(const CurveObjective& objective, const Eigen::VectorXd& lb,
                     const Eigen::VectorXd& ub, const BoBosOptions& options, bo::Rng& rng,
                     const BoBosCallback& callback = {});

}  // namespace advbo::algorithms
