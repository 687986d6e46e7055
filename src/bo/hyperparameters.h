// Maximum-likelihood GP hyperparameters (type-II ML, Rasmussen & Williams 2006 Sec. 5.4.1):
// the log marginal likelihood is maximised over log-hyperparameters with L-BFGS-B using
// analytic gradients (RW06 eq. 5.9), from the current values plus random restarts.
// Optional log-normal priors turn it into a MAP estimate (RW06 Sec. 5.2), and the fit can
// use a dataset other than the one the GP predicts from (UHE-BO, Ha et al., Sec. 5.2).
#pragma once

#include "bo/gp.h"
#include "bo/random.h"

namespace advbo::bo {

/// A Gaussian prior on a log-hyperparameter (a log-normal prior on the parameter):
/// log p(theta) = -0.5 ((log v - mean) / sd)^2 + const. sd = 0 disables it.
struct LogNormalPrior {
  double mean = 0.0;  ///< mean of log v
  double sd = 0.0;    ///< standard deviation of log v (> 0 enables the prior)
  /// Whether the prior is used (sd > 0).
  bool enabled() const { return sd > 0; }
};

/// A Gamma(shape a, rate b) prior on a positive hyperparameter v (GPy's Gamma(a, b)), used
/// in log space with its Jacobian: log p(log v) = a log v - b v + const (UHE-BO's
/// Gamma(1e-3, 10) priors, Ha et al., App. D). shape = 0 disables it.
struct GammaPrior {
  double shape = 0.0;  ///< a > 0 enables the prior
  double rate = 0.0;   ///< b >= 0
  /// Whether the prior is used (shape > 0).
  bool enabled() const { return shape > 0; }
};

/// Options of FitHyperparameters. Bounds are in natural units (not log) and apply in
/// the GP's standardised output scale and the caller's input units.
struct FitOptions {
  int restarts = 2;         ///< random restarts in addition to the warm start (>= 0)
  int max_iterations = 50;  ///< L-BFGS-B iterations per start
  /// Bounds of every lengthscale.
  ///@{
  double lengthscale_min = 1e-2, lengthscale_max = 1e2;
  ///@}
  /// Bounds of the signal variance (standardised y).
  ///@{
  double variance_min = 1e-2, variance_max = 1e2;  ///< signal variance (standardised y)
  ///@}
  /// Bounds of the noise variance (standardised y).
  ///@{
  double noise_min = 1e-6, noise_max = 1.0;  ///< noise variance (standardised y)
  ///@}
  /// Bounds of other positive kernel parameters.
  ///@{
  double shape_min = 1e-3, shape_max = 1e3;  ///< other positive kernel parameters
  ///@}
  bool fit_noise = true;  ///< if false the noise variance is kept fixed
  /// Fit on a random subset of at most this many points (0 = all). The posterior keeps
  /// using all points; this only bounds the O(N^3) cost of each likelihood evaluation.
  int max_points = 0;
  /// Priors for a MAP fit (all disabled by default = maximum likelihood). They apply to
  /// every lengthscale / signal variance of the kernel and to the noise variance.
  /// Log-normal priors of lengthscales, signal and noise variance (MAP; disabled by default).
  ///@{
  LogNormalPrior lengthscale_prior, variance_prior, noise_prior;
  ///@}
  /// Gamma priors (MAP), added to the log-normal ones where both are set; the same scope.
  /// Gamma priors of lengthscales, signal and noise variance (MAP; disabled by default).
  ///@{
  GammaPrior lengthscale_gamma, variance_gamma, noise_gamma;
  ///@}
  /// restarts, max_iterations and max_points >= 0; every (min, max) range with
  /// 0 < min <= max, finite. Throws std::invalid_argument naming the field.
  void Validate() const;
};

/// Result of a fit.
struct FitResult {
  double log_marginal_likelihood;  ///< at the chosen hyperparameters (on the fit subset)
  int evaluations;                 ///< likelihood evaluations used
  double log_posterior;            ///< LML + log prior (= LML without priors), up to a constant
};

/// A copy of gp (same kernel and noise; outputs re-standardised on the subset) holding a
/// uniformly random subset of at most max_points observations, in their original order.
ExactGP SubsetOf(const ExactGP& gp, int max_points, Rng& rng);

/// Fits the kernel hyperparameters (and the noise, unless fixed) of gp by maximum
/// marginal likelihood and refactorises gp. Requires gp.num_data() >= 1, else throws
/// std::invalid_argument. The current hyperparameters are the first start, so a fit
/// never returns a worse likelihood than it began with. A GP with noise variance 0
/// (noise-free mode) keeps it at 0 unless options.fit_noise is set. The starts (the current
/// hyperparameters and options.restarts random ones, drawn from rng in order) are optimised
/// in parallel (TBB); the result does not depend on the thread count.
FitResult FitHyperparameters(ExactGP* gp, const FitOptions& options, Rng& rng);

/// Fits gp's hyperparameters on another dataset X [N, D], y [N] (N >= 1; e.g. UHE-BO's
/// pseudo-i.i.d. points) and installs them in gp, which keeps its own data and is
/// refactorised. The fit uses gp's kernel, noise and standardisation on (X, y). Throws
/// std::invalid_argument on shape mismatch, NumericalError on non-finite data.
FitResult FitHyperparametersOn(ExactGP* gp, const Eigen::MatrixXd& x, const Eigen::VectorXd& y,
                               const FitOptions& options, Rng& rng);

}  // namespace advbo::bo
