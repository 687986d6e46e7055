// Hybrid Batch Bayesian Optimization (Azimi, Jalali and Fern 2012, "Hybrid Batch Bayesian
// Optimization", ICML): EI-based BO that switches between sequential and batch selection.
// Each step starts from the sequential EI point x1* (Alg. 1, line 2), then keeps adding the
// maximiser z of EI on the GP conditioned on fantasised outcomes y^_A of the points already
// in the batch A while the expected error bound of Corollary 1,
//     gamma_z (theta_A + ||y^_A - mu_{A|O}||_2) <= epsilon        (eq. 3),
// holds, up to n_b points and the remaining budget n_l. gamma_z = ||(k(z,A) - C A^-1 B^T) D||
// (Thm 2), theta_A = sqrt(sum_i sigma^2_{x_i|O}) (Cor. 1). epsilon = 0 gives sequential EI,
// epsilon = +inf fixed batches of n_b ("constant liar", Ginsbourger et al. 2010).
//
// Everything runs on a bo::BoSession (its GP, unit scaling, goal sign, design, refits and
// records), so the first point of every batch is exactly the session's sequential EI point.
#pragma once

#include <Eigen/Dense>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "bo/gp.h"
#include "bo/random.h"
#include "bo/session.h"

namespace advbo::algorithms {

/// Salt of the batch algorithms' second engine (selection of the 2nd.. batch points):
/// callers derive it as bo::DeriveSeed(run_seed, kHybridBatchSeedSalt).
inline constexpr uint64_t kHybridBatchSeedSalt = 0xBA7C4;

/// The fantasised outcome y^ of a point chosen for the batch (Azimi et al. 2012, Sec. 4,
/// "Results": the six estimators of Table 2). Values are in the session GP's score units
/// (the maximised quantity: +y when maximising, -y when minimising).
enum class Fantasy {
  kKnownMax,    ///< y^ = M, the function's known maximum ("M")
  kBest,        ///< y^ = y_max, the best score observed ("ymax")
  kBestMargin,  ///< y^ = (1 + zeta) y_max ("ymax+")
  kMean,        ///< y^ = mu_{x|O}, the posterior mean ("mu"; Cor. 1's choice)
  kWorst,       ///< y^ = y_min, the worst score observed ("ymin")
  kRandom,      ///< y^ ~ U[y_min, y_max] ("random")
};
/// Parses "M", "ymax", "ymax+", "mu", "ymin", "random"; std::invalid_argument otherwise.
Fantasy ParseFantasy(const std::string& name);
std::string FantasyName(Fantasy f);

/// Options of RunHybridBatch, with the paper's defaults (Sec. 4, "Setting").
struct HybridBatchOptions {
  int batch_max = 5;      ///< n_b, the largest batch (>= 1)
  double epsilon = 0.02;  ///< switching threshold, objective units (>= 0; +inf allowed)
  /// What a fantasised point observes: the posterior mean or a fixed value (Azimi et al. 2012).
  Fantasy fantasy = Fantasy::kMean;
  double zeta = 0.1;  ///< margin of Fantasy::kBestMargin
  /// M for Fantasy::kKnownMax, in objective units (converted to score units); NaN = unknown
  /// (then kKnownMax is refused).
  double known_optimum = std::numeric_limits<double>::quiet_NaN();
  /// Evaluates the points of a batch: f(X [m, d] caller units) -> outcomes, one per row, in
  /// order. Empty = one at a time through the objective. Supplied by callers that can run
  /// experiments concurrently (e.g. `advbo bo --command` runs up to n_b processes at once).
  std::function<std::vector<bo::BoStep>(std::vector<bo::BoStep>)> evaluate_batch;
  /// batch_max >= 1, epsilon >= 0, a finite known_optimum for Fantasy::kKnownMax; throws
  /// std::invalid_argument naming the field.
  void Validate() const;
};

/// The quantities of the switching criterion for candidate z given batch points A.
struct SwitchCriterion {
  double gamma = 0;  ///< gamma_z = ||Sigma_{zA|O} Sigma_{AA|O}^-1||_2 (Thm 2)
  double theta = 0;  ///< theta_A = sqrt(trace Sigma_{AA|O}) (Cor. 1; noise included)
  double bias = 0;   ///< ||y^_A - mu_{A|O}||_2
  double value() const { return gamma * (theta + bias); }  ///< left side of eq. 3
};

/// Row vector g [m] = (k(z, A) - C A^-1 B^T) D = Sigma_{zA|O} Sigma_{AA|O}^-1 of the GP
/// conditioned on O (gp's data) for the batch points xa [m, d] and candidate z [d] (gp input
/// units). With a noisy GP, Sigma_AA and k(x, x) in D include the observation noise (the
/// batch outcomes are observed like O's); the paper's noise-free GP has none. By Thm 2,
/// mu_{z|O,A}(y_A) - mu_{z|O,A}(y'_A) = g (y_A - y'_A) for any outcomes, and by Thm 1 sigma^2_{z|O}
/// - sigma^2_{z|O,A} = g Sigma_{AA|O} g^T. Sigma_AA is factorised with escalating jitter; throws
/// bo::NumericalError if that fails.
Eigen::RowVectorXd MeanSensitivity(const bo::ExactGP& gp, const Eigen::MatrixXd& xa,
                                   const Eigen::VectorXd& z);

/// gamma_z, theta_A and the fantasy bias for candidate z [d], batch xa [m, d] and
/// fantasies ya [m] (gp units: inputs as the GP sees them, outputs in its original units).
SwitchCriterion ComputeCriterion(const bo::ExactGP& gp, const Eigen::MatrixXd& xa,
                                 const Eigen::VectorXd& ya, const Eigen::VectorXd& z);

/// Summary of a run.
struct HybridBatchResult {
  int batches = 0;               ///< T, the number of batches (rounds of experiments)
  int batch_evaluations = 0;     ///< n_l, evaluations after the initial design
  std::vector<int> batch_sizes;  ///< size of every batch, in order (sums to n_l)
  /// 1 - T / n_l (Sec. 4, "Results"): the share of evaluations chosen in batch mode.
  double speedup() const {
    return batch_evaluations ? 1.0 - static_cast<double>(batches) / batch_evaluations : 0.0;
  }
};

/// Azimi et al. 2012's experimental setting (Sec. 4, "Setting") on the box [lb, ub]
/// (maximisation): EI on a GP with zero-mean prior on the raw outputs and the fixed kernel
/// k(x, x') = exp(-||x - x'||^2 / l), l = 0.01 * sum_i (ub_i - lb_i) (variance 1,
/// noise-free), 2 (d <= 3) or 5 uniform random initial points, budget = initial points +
/// n_l with n_l = 15 (d <= 3) or 30. Throws std::invalid_argument on a bad box.
bo::BoLoopOptions Azimi2012LoopOptions(const Eigen::VectorXd& lb, const Eigen::VectorXd& ub);
/// The same setting's switching options: n_b = 5, epsilon = 0.02 (d <= 3) or 0.2, y^ = mu.
HybridBatchOptions Azimi2012HybridOptions(int d);

/// Runs Algorithm 1 on `session` (its options must select EI: the first point of every
/// batch is session.Propose()) until the session is done. The initial design is evaluated
/// one point at a time and is not part of any batch. `batch_rng` drives the selection of the
/// 2nd.. points (and Fantasy::kRandom), so epsilon = 0 reproduces sequential EI exactly.
/// Every evaluation is recorded in the session with extra = {"batch": t (1-based, 0 in the
/// design), "batch_size", "position" (1-based), "criterion" (eq. 3's left side; null for
/// the first point), "fantasy"}. `callback` (optional) sees every recorded step; returning
/// false stops the session ("callback") after the current batch is recorded.
/// Throws std::invalid_argument on bad options (batch_max < 1, epsilon < 0 or NaN, a
/// non-EI session, kKnownMax without known_optimum).
HybridBatchResult RunHybridBatch(bo::BoSession& session, const bo::Objective& objective,
                                 const HybridBatchOptions& options, bo::Rng& batch_rng,
                                 const std::function<bool(const bo::BoStep&)>& callback = {});

}  // namespace advbo::algorithms
