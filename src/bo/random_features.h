// Random Fourier features (Rahimi & Recht 2007) for stationary kernels, drawn by spectral
// sampling (Bochner's theorem), and the Bayesian linear-regression posterior over the
// feature weights -- the finite-dimensional GP surrogate that Federated Thompson Sampling
// (Dai 2021 thesis, Chapter 6, Sec. 6.2: phi(x) = sqrt(2 s2 / M) cos(w^T x + b)) and the
// EXP3 level-0 strategy of R2-B2 (App. E.6.1.1c, d' = 5 features) are built on.
#pragma once

#include <Eigen/Dense>

#include "bo/kernel.h"
#include "bo/random.h"

namespace advbo::bo {

/// phi(x) = sqrt(2 s2 / M) cos(W x_active + b), W [M, |active|], b [M] ~ U[0, 2 pi), with the
/// rows of W drawn from the kernel's normalised spectral density: N(0, diag(1/l^2)) for the
/// squared exponential, a multivariate Student-t with 2 nu degrees of freedom and scale
/// diag(1/l^2) for Matérn-nu (RW06 eq. 4.15). E[phi(x)^T phi(x')] = k(x, x').
class RandomFeatures {
 public:
  /// Draws M = num_features features for `kernel` (its current lengthscales and variance,
  /// its active dimensions). Throws std::invalid_argument if num_features < 1.
  RandomFeatures(const StationaryKernel& kernel, int num_features, Rng& rng);

  /// Feature matrix Phi [N, M] for X [N, D] (D = the kernel's input dimension).
  Eigen::MatrixXd Features(const Eigen::MatrixXd& x) const;
  /// Jacobian d phi(x) / dx [M, D] at one point x [D].
  Eigen::MatrixXd Jacobian(const Eigen::VectorXd& x) const;

  /// Number of features M.
  int num_features() const { return static_cast<int>(b_.size()); }
  /// Input dimension d.
  int input_dim() const { return input_dim_; }
  /// Frequencies W [M, |active|] and phases b [M].
  const Eigen::MatrixXd& frequencies() const { return w_; }
  /// Phases b [M] of the features.
  const Eigen::VectorXd& phases() const { return b_; }

 private:
  int input_dim_;
  std::vector<int> active_;
  Eigen::MatrixXd w_;
  Eigen::VectorXd b_;
  double scale_;  // sqrt(2 s2 / M)
};

/// Bayesian linear regression y = phi(x)^T w + eps, w ~ N(0, I), eps ~ N(0, noise) on random
/// features (the weight-space view of a GP, RW06 Sec. 2.1.1-2.1.2): posterior
/// w | D ~ N(A^{-1} Phi^T y / noise, A^{-1}), A = Phi^T Phi / noise + I  [M, M].
/// Targets are used as given (standardise them beforehand if the kernel variance assumes so).
class RffPosterior {
 public:
  /// X [N, D] (N may be 0: the prior), y [N], noise variance > 0. Throws
  /// std::invalid_argument on shape mismatch or noise <= 0, NumericalError if A is not PD.
  RffPosterior(RandomFeatures features, const Eigen::MatrixXd& x, const Eigen::VectorXd& y,
               double noise_variance);

  /// Posterior mean of the weights [M].
  const Eigen::VectorXd& mean_weights() const { return mean_; }
  /// One draw of the weight vector [M] from the posterior.
  Eigen::VectorXd SampleWeights(Rng& rng) const;
  /// Predictive mean and variance of f at Xs [K, D]: [K] each.
  void Predict(const Eigen::MatrixXd& xs, Eigen::VectorXd* mean, Eigen::VectorXd* var) const;
  /// The features the posterior is over.
  const RandomFeatures& features() const { return features_; }

 private:
  RandomFeatures features_;
  Eigen::VectorXd mean_;
  Eigen::MatrixXd chol_a_;  // lower Cholesky factor of A
};

/// A function drawn from (an RFF approximation of) a GP: f(x) = phi(x)^T w for a fixed
/// weight vector, with its exact gradient. Used for Thompson sampling and as a test
/// objective ("functions sampled from a GP").
class FeatureFunction {
 public:
  /// weights [M] must match features.num_features(), else std::invalid_argument.
  FeatureFunction(RandomFeatures features, Eigen::VectorXd weights);
  /// Values at X [N, D]: [N].
  Eigen::VectorXd Evaluate(const Eigen::MatrixXd& x) const;
  /// Value at x [D]; if grad is non-null it receives df/dx [D].
  double ValueAndGradient(const Eigen::VectorXd& x, Eigen::VectorXd* grad) const;
  /// Input dimension d.
  int input_dim() const { return features_.input_dim(); }

 private:
  RandomFeatures features_;
  Eigen::VectorXd w_;
};

}  // namespace advbo::bo
