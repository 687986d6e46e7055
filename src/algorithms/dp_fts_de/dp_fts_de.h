// DP-FTS-DE (Dai 2021 thesis, Ch. 6 + App. C; Dai, Low, Jaillet, NeurIPS 2021): the central
// server's subsampled Gaussian mechanism of Algorithm 6.1 (Poisson subsampling with rate q,
// per-block clipping to S / sqrt(P), weighted sums per sub-region, Gaussian noise of standard
// deviation z phi_max S / q) and its privacy accountant.
//
// The accountant is the Renyi-DP one of the moments accountant (Abadi et al. 2016; Mironov,
// Talwar, Zhang 2019): for integer orders alpha the subsampled Gaussian mechanism has RDP
//   eps(alpha) = log( sum_{k=0}^{alpha} C(alpha, k) (1 - q)^{alpha - k} q^k
//                     exp((k^2 - k) / (2 z^2)) ) / (alpha - 1),
// composes additively over T rounds, and converts to (eps, delta)-DP by the classic
//   eps = min_alpha T eps(alpha) + log(1 / delta) / (alpha - 1).
// With N = 200, delta = 200^-1.1, T = 40 this gives the thesis' Fig. 6.4 caption values
// (z = 1: q = 0.15 / 0.25 / 0.5 -> 5.93 / 9.91 / 20.12; q = 0.25: z = 1.2 / 1.5 -> 7.39 / 5.22).
//
// The accountant and the server step; the agents' loop (Algorithm 6.2)
// and `advbo fbo --privacy-only` come next.
#pragma once

#include <Eigen/Dense>
#include <vector>

#include "bo/random.h"

namespace advbo::algorithms {

/// RDP of one round of the Poisson-subsampled Gaussian mechanism at integer order alpha >= 2,
/// sampling rate q in [0, 1], noise multiplier z > 0 (noise std = z x sensitivity). Computed
/// in log space (log-sum-exp), exact for integer orders. q = 1 gives alpha / (2 z^2). Throws
/// std::invalid_argument for alpha < 2, q outside [0, 1] or z <= 0.
double SampledGaussianRdp(double q, double z, int alpha);

/// The privacy loss after `steps` rounds and the order that attains it.
struct PrivacyLoss {
  double epsilon = 0;  ///< epsilon of (epsilon, delta)-DP
  int order = 0;       ///< the minimising RDP order
};

/// min over integer alpha in [2, max_order] of steps * RDP(alpha) + log(1/delta) / (alpha - 1).
/// Requires steps >= 0, delta in (0, 1), max_order >= 2 (default 256, the 2..256), else
/// std::invalid_argument. steps = 0 gives epsilon = min log(1/delta)/(alpha-1) > 0 (the
/// conversion's own slack).
PrivacyLoss PrivacyLossOf(double q, double z, int steps, double delta, int max_order = 256);

/// w / max(1, ||w|| / bound): w scaled onto the L2 ball of radius bound > 0 (Alg. 6.1 line 9).
Eigen::VectorXd ClipToNorm(const Eigen::VectorXd& w, double bound);

/// The server's settings (Alg. 6.1; defaults: the synthetic study, Sec. 6.5.1).
struct ServerOptions {
  double q = 0.25;   ///< Poisson sampling rate, in (0, 1]
  double z = 1.0;    ///< noise multiplier, >= 0 (0 = no privacy, for ablations)
  double clip = 11;  ///< S: every selected agent's vector clipped to S / sqrt(P), > 0
  /// q in (0, 1], z >= 0 and clip > 0 finite; throws std::invalid_argument.
  void Validate() const;
};

/// One round's output.
struct ServerRound {
  Eigen::MatrixXd joint;      ///< [P, M]: row i is omega_t^(i)
  std::vector<int> selected;  ///< S_t, ascending agent indices
  int clipped = 0;            ///< selected vectors whose norm exceeded S / sqrt(P)
};

/// Alg. 6.1 lines 5-11 for messages omega_{n,t} [M] (n = 1..N) and sub-region weights phi
/// [P, N] (phi(i, n) = phi_n^(i) >= 0): select each agent with probability q, clip its vector
/// to S / sqrt(P), omega^(i) = q^-1 sum_{n in S_t} phi_n^(i) clip(omega_n) + N(0, (z phi_max S
/// / q)^2 I) with phi_max = max phi. Draws: one uniform per agent (in order), then the P x M
/// normals row by row. Throws std::invalid_argument on empty or unequal messages, weights of
/// the wrong shape or negative, or bad options.
ServerRound AggregateMessages(const std::vector<Eigen::VectorXd>& messages,
                              const Eigen::MatrixXd& weights, const ServerOptions& options,
                              bo::Rng& rng);

}  // namespace advbo::algorithms
