// Exact Gaussian-process regression (Rasmussen & Williams 2006, Algorithm 2.1) with
// output standardisation, Cholesky factorisation with escalating jitter, and an
// incremental row-append update of the factor (O(N^2) per new observation instead of
// O(N^3) refactorisation), falling back to a full refactorisation when the appended
// pivot is not numerically positive.
#pragma once

#include <Eigen/Dense>
#include <memory>
#include <stdexcept>

#include "bo/kernel.h"
#include "bo/random.h"

namespace advbo::bo {

/// Raised when K + noise*I cannot be factorised even with the largest jitter, or when
/// observations are non-finite.
class NumericalError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Exact GP posterior over a finite training set.
///
/// Targets are standardised internally (y~ = (y - mean(y)) / std(y); std 1 when N < 2
/// or the targets are constant), so the kernel's signal variance and the noise variance
/// are in standardised units; Predict returns original units.
///
/// Noise modes: a positive noise variance that FitHyperparameters fits (FitOptions::fit_noise,
/// the default) or keeps fixed (fit_noise = false), or noise-free interpolation with
/// noise_variance = 0, where only the escalating Cholesky jitter regularises K.
class ExactGP {
 public:
  /// @param kernel          covariance function (owned).
  /// @param noise_variance  Gaussian observation noise in standardised units (>= 0; 0 is
  ///                        the noise-free mode). Throws std::invalid_argument if < 0 or NaN.
  /// @param standardize     standardise outputs (default true).
  ExactGP(std::unique_ptr<Kernel> kernel, double noise_variance, bool standardize = true);
  /// A deep copy (the kernel is cloned).
  ExactGP(const ExactGP& other);
  /// Deep copy assignment.
  ExactGP& operator=(const ExactGP& other);

  /// Replaces the training set: X [N, D], y [N] (finite), and refactorises (O(N^3)).
  /// Throws std::invalid_argument on shape mismatch, NumericalError on non-finite y.
  void SetData(const Eigen::MatrixXd& x, const Eigen::VectorXd& y);
  /// Appends one observation (x [D], y) with an O(N^2) row-append Cholesky update.
  void AddObservation(const Eigen::VectorXd& x, double y);
  /// Replaces the observations y[from .. from + y.size()) (finite) and keeps X and the
  /// Cholesky factor: only the standardisation and alpha are recomputed, O(N^2). Used to turn
  /// fantasy observations (Kriging believer batches) into the real ones at the same inputs.
  /// Throws std::invalid_argument when the range leaves the data, NumericalError on non-finite
  /// y.
  void ReplaceTargets(Eigen::Index from, const Eigen::VectorXd& y);
  /// Refactorises from scratch (call after changing kernel hyperparameters or noise).
  void Refactorize();

  /// Posterior mean and variance (latent f, noise excluded) at Xs [M, D], original units:
  /// mean [M], var [M] (>= 0). Prior (mean(y) or 0, kernel diag) when N = 0. Large M is
  /// split into cache-sized blocks predicted in parallel (TBB); results are independent of
  /// the blocking and thread count.
  void Predict(const Eigen::MatrixXd& xs, Eigen::VectorXd* mean, Eigen::VectorXd* var) const;

  /// Joint posterior of the latent f at Xs [M, D]: mean [M] and covariance [M, M], original
  /// units (used for forward simulation of sample paths).
  void PredictJoint(const Eigen::MatrixXd& xs, Eigen::VectorXd* mean, Eigen::MatrixXd* cov) const;

  /// Posterior mean and variance at Xs [M, D] with their gradients with respect to the
  /// input: dmean [M, D], dvar [M, D] (original units; RW06 eq. 2.25-2.26 differentiated:
  /// dmu/dx = dk(x,X)^T alpha, dvar/dx = -2 dk(x,X)^T K^{-1} k(X,x)). Assumes k(x, x) does
  /// not depend on x (true for stationary kernels and their sums/products). Any output
  /// pointer may be null.
  void PredictWithGradient(const Eigen::MatrixXd& xs, Eigen::VectorXd* mean, Eigen::VectorXd* var,
                           Eigen::MatrixXd* dmean, Eigen::MatrixXd* dvar) const;

  /// num_samples joint draws of the latent f at Xs [M, D] from the posterior: [M, S],
  /// original units. The joint covariance is factorised with escalating jitter; throws
  /// NumericalError if even that fails.
  Eigen::MatrixXd SamplePosterior(const Eigen::MatrixXd& xs, int num_samples, Rng& rng) const;

  /// A copy of this GP conditioned on hypothetical observations ("fantasies") ys [B] at
  /// Xs [B, D], e.g. the posterior mean for GP-BUCB-style batch selection (Desautels et al.
  /// 2014). Each fantasy is a row-append Cholesky update, O(N^2) per point, no refit of
  /// hyperparameters. The copy keeps this GP's output standardisation (shift and scale of
  /// the real data), so a fantasy equal to the posterior mean leaves the mean unchanged
  /// everywhere (Azimi et al. 2012, Thm 2). Throws std::invalid_argument on a shape mismatch.
  ExactGP Fantasize(const Eigen::MatrixXd& xs, const Eigen::VectorXd& ys) const;

  /// Log marginal likelihood of the standardised targets (RW06 eq. 2.30) at the current
  /// hyperparameters; if grad is non-null it receives d/d[kernel log-params..., log noise].
  /// Uses the current factor. Requires N >= 1.
  double LogMarginalLikelihood(Eigen::VectorXd* grad = nullptr) const;

  /// Log marginal likelihood and gradient for log-parameters `theta` =
  /// [kernel log-params..., log noise] without changing the GP, using a PairwiseCache of
  /// the training inputs (Kernel::Precompute(X())). Returns -inf if not factorisable.
  double LogMarginalLikelihoodAt(const Eigen::VectorXd& theta, const PairwiseCache& cache,
                                 Eigen::VectorXd* grad) const;

  /// Same for an arbitrary kernel (e.g. a candidate decomposition) and noise variance on
  /// this GP's data; grad (optional) is over [kernel log-params..., log noise].
  double LogMarginalLikelihoodWith(const Kernel& kernel, double noise_variance,
                                   const PairwiseCache& cache, Eigen::VectorXd* grad) const;

  /// All log-hyperparameters [kernel..., log noise] and their setter (refactorises).
  Eigen::VectorXd LogHyperparameters() const;
  /// Sets the kernel's log hyperparameters followed by log noise variance, and refactorises.
  void SetLogHyperparameters(const Eigen::VectorXd& theta);

  /// Replaces the kernel (owned) and refactorises. Throws std::invalid_argument on null.
  void SetKernel(std::unique_ptr<Kernel> kernel);
  /// The kernel.
  const Kernel& kernel() const { return *kernel_; }
  /// The kernel, to change its hyperparameters (call SetData or Refactor afterwards).
  Kernel& mutable_kernel() { return *kernel_; }
  /// Noise variance in standardised-output units.
  double noise_variance() const { return noise_; }
  /// Whether outputs are standardised.
  bool standardize() const { return standardize_; }
  /// Number of training points N.
  int num_data() const { return static_cast<int>(x_.rows()); }
  /// Training inputs [N, d].
  const Eigen::MatrixXd& X() const { return x_; }
  /// Training outputs [N] as given (unstandardised).
  const Eigen::VectorXd& y() const { return y_; }
  /// Lower Cholesky factor L of K + (noise + jitter) I, [N, N].
  const Eigen::MatrixXd& cholesky() const { return l_; }
  /// alpha = (K + noise I)^{-1} y~ [N], standardised units.
  const Eigen::VectorXd& alpha() const { return alpha_; }
  /// The jitter added to the diagonal by the last factorisation (0 if none was needed).
  double jitter() const { return jitter_; }
  /// Output standardisation: y = y_shift + y_scale * y~.
  double y_shift() const { return y_shift_; }
  /// Standard deviation used to standardise y (1 without standardisation).
  double y_scale() const { return y_scale_; }
  /// Number of full O(N^3) factorisations so far (for tests and profiling).
  long num_factorizations() const { return num_factorizations_; }

 private:
  void PredictBlock(const Eigen::MatrixXd& xs, Eigen::VectorXd* mean, Eigen::VectorXd* var) const;
  void UpdateStandardization();
  void SolveAlpha();

  std::unique_ptr<Kernel> kernel_;
  double noise_;
  bool standardize_;
  Eigen::MatrixXd x_;
  Eigen::VectorXd y_;
  Eigen::MatrixXd l_;
  Eigen::VectorXd alpha_;
  double jitter_ = 0.0;
  double y_shift_ = 0.0, y_scale_ = 1.0;
  bool frozen_standardization_ = false;  // set on Fantasize copies
  long num_factorizations_ = 0;
};

/// Cholesky factor of a symmetric PSD matrix A with escalating diagonal jitter
/// (0, then 1e-10 * mean(diag) growing 10x up to 1e-2 * mean(diag)). Returns L with
/// L L^T = A + jitter I and writes the jitter used. Throws NumericalError otherwise.
Eigen::MatrixXd CholeskyWithJitter(const Eigen::MatrixXd& a, double* jitter_used);

}  // namespace advbo::bo
