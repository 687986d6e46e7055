// Federated Thompson Sampling (Dai 2021 thesis, Ch. 5 + App. B; Dai, Low, Jaillet, NeurIPS
// 2020): a target agent runs Thompson sampling and, with probability 1 - p_t, instead maximises
// a function sampled by another agent, received once as the weight vector omega_n of a Bayesian
// linear regression on shared, normalised random Fourier features (Alg. 5.1, eqs. 5.1-5.2).
//
// This file holds the pieces and the loop on a finite domain; the agents in lock-step, the
// families and the outputs of `advbo fbo` are in federated.h and federated_study.h.
#pragma once

#include <Eigen/Dense>
#include <functional>
#include <vector>

#include "bo/random.h"
#include "bo/random_features.h"

namespace advbo::algorithms {

/// The sequence p_t of Alg. 5.1 (probability of the target's own sample at iteration t >= 1).
enum class FtsSchedule {
  kInverseSqrt,     ///< p_t = 1 - 1/sqrt(t) for t >= 2, p_1 = p_2 (synthetic study, Sec. 5.5.1)
  kInverseSquare,   ///< p_t = 1 - 1/t^2 for t >= 2, p_1 = p_2 (real-world studies, App. B.4)
  kInverseSqrtAll,  ///< p_t = 1 - 1/sqrt(t) for every t >= 1, so p_1 = 0 (DP-FTS-DE's
                    ///< synthetic study, Sec. 6.5.1: "1 - p_t = 1/sqrt(t) for all t")
  kConstant,        ///< p_t = value (ablations and tests; 1 = plain TS, 0 = agents first)
};

/// p_t for t >= 1 (t < 1 is treated as 1). p_1 = 0.2929 (kInverseSqrt) / 0.75 (kInverseSquare).
/// kConstant needs value in [0, 1], else std::invalid_argument.
double FtsProbability(int t, FtsSchedule schedule, double value = 1.0);

/// The shared features of App. B.1: phi(x) = sqrt(2/M) cos(S x + b) from `features` (an SE
/// kernel's spectral draws), then each row rescaled so ||phi(x)||^2 = signal_variance (> 0).
/// x [N, D] -> [N, M]. Throws std::invalid_argument for a bad signal variance.
Eigen::MatrixXd NormalizedFeatures(const bo::RandomFeatures& features, const Eigen::MatrixXd& x,
                                   double signal_variance = 1.0);

/// The weight posterior of eqs. 5.1-5.2 on feature rows phi [t, M] (t may be 0) and outputs y
/// [t]: w ~ N(nu, sigma^2 Sigma^{-1}) with Sigma = Phi^T Phi + sigma^2 I, nu = Sigma^{-1} Phi^T y.
class FeaturePosterior {
 public:
  /// noise_variance sigma^2 > 0; sizes must agree; else std::invalid_argument.
  FeaturePosterior(const Eigen::MatrixXd& phi, const Eigen::VectorXd& y, double noise_variance);
  /// The agent's sampled feature weights nu [M].
  const Eigen::VectorXd& nu() const { return nu_; }
  /// Predictive mean phi^T nu and variance sigma^2 phi^T Sigma^{-1} phi at rows phi [K, M] (App.
  /// B.2; equal to an exact GP with kernel phi(x)^T phi(x')).
  void Predict(const Eigen::MatrixXd& phi, Eigen::VectorXd* mean, Eigen::VectorXd* var) const;
  /// One draw omega ~ N(nu, sigma^2 Sigma^{-1}) [M]: the message an agent sends (Sec. 5.3.1).
  Eigen::VectorXd Sample(bo::Rng& rng) const;

 private:
  Eigen::LLT<Eigen::MatrixXd> llt_;  // Sigma = L L^T
  Eigen::VectorXd nu_;
  double noise_;
};

/// Settings of Alg. 5.1 on a finite domain (defaults: Sec. 5.5 / App. C.2 synthetic study).
struct FtsOptions {
  int iterations = 50;     ///< T, >= 1
  int initial_points = 1;  ///< random distinct domain points before iteration 1, >= 0
  /// How p_t, the probability of using the other agents' information, evolves.
  FtsSchedule schedule = FtsSchedule::kInverseSqrt;
  double constant_p = 1.0;       ///< p for FtsSchedule::kConstant
  double beta = 1.0;             ///< f_t ~ GP(mu, beta^2 sigma^2) (Sec. 5.5: constant 1), > 0
  double lengthscale = 0.03;     ///< target GP: SE kernel lengthscale (domain units), > 0
  double signal_variance = 1.0;  ///< target GP kernel variance, > 0
  double noise_variance = 0.01;  ///< observation noise sigma^2, > 0
  /// iterations >= 1, initial_points >= 0, beta, lengthscale, signal and noise variance > 0,
  /// a valid schedule; throws std::invalid_argument "RunFts: ...".
  void Validate() const;
};

/// One evaluation of RunFts.
struct FtsStep {
  int iteration = 0;  ///< 0 for initial points, else t
  int index = 0;      ///< domain row queried
  int agent = -1;     ///< the agent whose omega chose it (line 6), -1 for the target's own
  double p = 1.0;     ///< p_t (1 for initial points)
  double y = 0.0;     ///< observed output
};

/// Alg. 5.1 on the domain x [K, d] with the agents' features phi [K, M] (NormalizedFeatures
/// of the shared features at the domain) and their messages omega_n [M] each (may be empty:
/// then FTS is plain TS). P_N is uniform over the messages not yet used; a used message is
/// removed (each omega_n used once, Sec. 5.3.1); with none left line 4 always runs. Line 4
/// draws f_t jointly at the K points from the target's exact GP (SE kernel of the options,
/// zero prior mean) and takes its argmax. `evaluate(i)` returns the noisy output at row i.
/// Deterministic for a given rng state. Throws std::invalid_argument on bad options or sizes.
std::vector<FtsStep> RunFts(const Eigen::MatrixXd& x, const Eigen::MatrixXd& phi,
                            const std::vector<Eigen::VectorXd>& messages,
                            const std::function<double(int)>& evaluate, const FtsOptions& options,
                            bo::Rng& rng);

}  // namespace advbo::algorithms
