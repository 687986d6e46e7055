// Maximum-likelihood GP hyperparameters (type-II ML, Rasmussen & Williams 2006 Sec. 5.4.1):
// the log marginal likelihood is maximised over log-hyperparameters with L-BFGS-B using
// analytic gradients (RW06 eq. 5.9), from the current values plus random restarts.
#pragma once

#include "bo/gp.h"
#include "bo/random.h"

namespace advbo::bo {

/// Options of FitHyperparameters. Bounds are in natural units (not log) and apply in
/// the GP's standardised output scale and the caller's input units.
struct FitOptions {
  int restarts = 2;             ///< random restarts in addition to the warm start (>= 0)
  int max_iterations = 50;      ///< L-BFGS-B iterations per start
  double lengthscale_min = 1e-2, lengthscale_max = 1e2;
  double variance_min = 1e-2, variance_max = 1e2;  ///< signal variance (standardised y)
  double noise_min = 1e-6, noise_max = 1.0;        ///< noise variance (standardised y)
  double shape_min = 1e-3, shape_max = 1e3;        ///< other positive kernel parameters
  bool fit_noise = true;        ///< if false the noise variance is kept fixed
  /// Fit on a random subset of at most this many points (0 = all). The posterior keeps
  /// using all points; this only bounds the O(N^3) cost of each likelihood evaluation.
  int max_points = 0;
};

/// Result of a fit.
struct FitResult {
  double log_marginal_likelihood;  ///< at the chosen hyperparameters (on the fit subset)
  int evaluations;                 ///< likelihood evaluations used
};

/// A copy of gp (same kernel and noise; outputs re-standardised on the subset) holding a
/// uniformly random subset of at most max_points observations, in their original order.
ExactGP SubsetOf(const ExactGP& gp, int max_points, Rng& rng);

/// Fits the kernel hyperparameters (and the noise, unless fixed) of gp by maximum
/// marginal likelihood and refactorises gp. Requires gp.num_data() >= 1, else throws
/// std::invalid_argument. The current hyperparameters are the first start, so a fit
/// never returns a worse likelihood than it began with.
FitResult FitHyperparameters(ExactGP* gp, const FitOptions& options, Rng& rng);

}  // namespace advbo::bo
