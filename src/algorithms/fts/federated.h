// Federated BO in lock-step on a finite domain (Dai 2021 thesis, Ch. 5 general setting, App.
// B.4.2.1, and Ch. 6, Algorithms 6.1 / 6.2): N agents each run Thompson sampling on their own
// objective; every round each agent sends omega_{n,t} (a draw from its weight posterior on the
// shared normalised features) and, with probability 1 - p_t, picks its next query from what it
// received instead of its own GP sample:
//   kTs       — no communication (standard TS for every agent);
//   kFts      — FTS: the latest omega of one other agent drawn uniformly (Alg. 5.1, P_N uniform);
//   kDpFtsDe  — DP-FTS-DE: the server's subsampled, clipped, weighted, noised vectors, one per
//               sub-region, maximised piecewise (Alg. 6.1 / 6.2); z = 0, q = 1 and a large S
//               give FTS-DE without privacy, P = 1 gives DP-FTS.
// Agents' own TS draws are exact joint GP posterior samples on the domain, computed by pathwise
// conditioning of one shared prior draw per sample (a prior Cholesky of the domain, factorised
// once), so N x T draws stay cheap.
#pragma once

#include <Eigen/Dense>
#include <functional>
#include <vector>

#include "algorithms/dp_fts_de/dp_fts_de.h"
#include "algorithms/fts/fts.h"
#include "bo/random.h"

namespace advbo::algorithms {

enum class FederatedAlgo { kTs, kFts, kDpFtsDe };

/// a of the distributed-exploration weights phi_n^(i) ∝ exp(a) for the agents exploring
/// region i and exp(1) for the others (App. C.2): a = 16 up to iteration hold + 1, then linear
/// down to 1 at iteration hold + decay, 1 after. The thesis: (5, 5) synthetic -> 16, ..., 16,
/// 12.25, 8.5, 4.75, 1 for t = 6..10; (10, 30) real. decay >= 2, hold >= 0, else
/// std::invalid_argument.
double DeWeightExponent(int t, int hold, int decay);

/// The sub-region of each domain row x [K, d] (points in [0, 1]^d): P equal slabs along the
/// first coordinate ([0, 1/P), ..., [(P-1)/P, 1]). Returns [K] indices in 0..P-1.
std::vector<int> DomainRegions(const Eigen::MatrixXd& x, int regions);

/// Settings of the federated loop (defaults: the DP-FTS-DE synthetic study, Sec. 6.5.1).
struct FederatedOptions {
  /// Which algorithm runs: TS, FTS, FTS-DE or DP-FTS-DE.
  FederatedAlgo algo = FederatedAlgo::kDpFtsDe;
  int rounds = 40;             ///< T, iterations after initialisation, >= 1
  int initial_points = 10;     ///< N_init per agent, from its sub-region (DE) or the domain
  bool local_init = true;      ///< DE component (a): initial points from the agent's region
  int regions = 2;             ///< P >= 1 (kDpFtsDe)
  bool region_weights = true;  ///< DE component (b): exp(a) / exp(1) weights; false = uniform
  /// DeWeightExponent schedule: rounds the region weights hold, then rounds over which they decay.
  ///@{
  int weight_hold = 5, weight_decay = 5;  ///< DeWeightExponent schedule
  ///@}
  FtsSchedule schedule = FtsSchedule::kInverseSqrt;  ///< p_t (Sec. 6.5.1: 1 - 1/sqrt(t))
  /// p_t of FtsSchedule::kConstant, in [0, 1].
  double constant_p = 1.0;
  ServerOptions server;          ///< q, z, S of Alg. 6.1
  double lengthscale = 0.03;     ///< agents' GP and feature SE lengthscale, > 0
  double signal_variance = 1.0;  ///< sigma_0^2 of kernel and features, > 0
  double noise_variance = 0.01;  ///< sigma^2, > 0
  int features = 50;             ///< M shared random features, >= 1
  /// rounds, initial_points and features >= 1; lengthscale, signal and noise variance > 0;
  /// regions >= 1 for kDpFtsDe; valid schedules. Throws std::invalid_argument.
  void Validate() const;
};

/// One round (t = 0 is initialisation, Alg. 6.2 line 2).
struct FederatedRound {
  /// Round index t (0 = initialisation).
  int round = 0;
  std::vector<int> index;     ///< [N] domain row each agent queried (the last one at t = 0)
  std::vector<double> y;      ///< [N] its observed output
  std::vector<int> source;    ///< [N] -1 own TS, -2 the server's vectors, k >= 0 agent k's omega
  std::vector<int> selected;  ///< S_t of the server (kDpFtsDe)
  int clipped = 0;            ///< vectors clipped this round (kDpFtsDe)
};

/// Runs the loop for N = agents agents on the domain x [K, d] ([0, 1]^d); evaluate(n, i) is
/// agent n's noisy output at row i (called from several threads at once, for different n).
/// Every agent has its own engine derived from `seed` (DeriveSeed(seed, n)); the shared
/// features and the server use their own derived engines, so runs are reproducible whatever
/// the thread count. on_round (optional) sees each finished round; returning false stops.
/// Throws std::invalid_argument on bad options.
std::vector<FederatedRound> RunFederated(
    const Eigen::MatrixXd& x, int agents, const std::function<double(int, int)>& evaluate,
    const FederatedOptions& options, uint64_t seed,
    const std::function<bool(const FederatedRound&)>& on_round = {});

}  // namespace advbo::algorithms
