// PO-GP-UCB (Kharkovskii, Dai, Low, ICML 2020 "Private Outsourced Bayesian Optimization";
// Kharkovskii 2020 thesis, Ch. 3): a curator releases a random projection of its records
// (Algorithm 1) and a modeler runs GP-UCB over the released rows (Algorithm 2).
//
// The released data is ONE linear map of all centred records (Z = r^{-1/2} X~ M with X~ = X A
// for a d x d matrix A), so anyone who knows d + 1 records and their released rows recovers the
// map and with it every other record (ReconstructRecords). The published differential-privacy
// argument therefore does not hold for the released dataset; advbo implements the algorithm as
// published and makes no privacy claim for it (docs/design.md).
#pragma once

#include <Eigen/Dense>
#include <cstdint>
#include <functional>
#include <vector>

#include "bo/bo_loop.h"
#include "bo/random.h"
#include "bo/session.h"

namespace advbo::algorithms {

/// The threshold omega of Algorithm 1 line 5 in the form that reproduces the paper's numbers
/// (Blocki et al. 2012): omega = 16 sqrt(r ln(2 / delta)) / epsilon * ln(16 r / delta).
/// E.g. omega(10, e^1.1, 1e-5) = 976.07. Requires r >= 1, epsilon > 0 (finite) and delta in
/// (0, 1), else std::invalid_argument.
double PrivacyThreshold(int r, double epsilon, double delta);

/// X - 1 1^T X / n (Algorithm 1 line 2): x [n, d] with its column means removed. n >= 1, else
/// std::invalid_argument.
Eigen::MatrixXd CenterColumns(const Eigen::MatrixXd& x);

/// The paper's preprocessing (Sec. 4: "normalize the inputs to have a maximal norm of 25"),
/// read as: centre x [n, d], then scale every coordinate by one factor so the largest row norm
/// is max_norm (> 0). Returns [n, d]; a constant x or bad max_norm: std::invalid_argument. The
/// factor is written to *scale when given (lengthscales in x's units multiply by it).
Eigen::MatrixXd NormalizeMaxNorm(const Eigen::MatrixXd& x, double max_norm,
                                 double* scale = nullptr);

/// The smallest of the min(n, d) singular values of x [n, d] (pass a centred matrix for
/// sigma_min of Algorithm 1 line 6). Non-finite entries or an empty matrix:
/// std::invalid_argument.
double SmallestSingularValue(const Eigen::MatrixXd& x);

/// The projection dimensions the paper's Tables 1-12 compare (multiples of 5 up to 50).
std::vector<int> DefaultProjectionDims();

/// Sec. 3.4's guideline: the largest r in `candidates` with omega(r, epsilon, delta) <=
/// sigma_min, so Algorithm 1 takes its "if" branch. Returns 0 when no candidate qualifies.
/// On the 100 x 100 grid normalised to max-norm 25 (sigma_min = 1030.88) with delta = 1e-5 it
/// gives 10 / 15 / 20 for epsilon = e^1.1 / e^1.3 / e^1.5 (the paper's Tables 1-3). Throws
/// std::invalid_argument for empty candidates, a candidate < 1, or bad epsilon / delta.
int ChooseProjectionDim(double sigma_min, double epsilon, double delta,
                        const std::vector<int>& candidates = DefaultProjectionDims());

/// Algorithm 1's inputs.
struct CuratorOptions {
  double epsilon = 3.0;  ///< epsilon of Algorithm 1 (> 0); no DP claim is made (see above)
  double delta = 1e-5;   ///< delta of Algorithm 1, in (0, 1); the paper uses < 1/n
  int r = 10;            ///< projection dimension, >= 1
  /// Throws std::invalid_argument when epsilon, delta or r is out of the ranges above.
  void Validate() const;
};

/// What the curator computes. Only `z` is released.
struct CuratorRelease {
  Eigen::MatrixXd z;     ///< [n, r] released rows, row i the image of record i
  double omega = 0;      ///< threshold of line 5
  double sigma_min = 0;  ///< smallest singular value of the centred records
  bool lifted = false;   ///< the "else" branch (sigma_min < omega): singular values lifted
};

/// Algorithm 1: centre x [n, d] (the caller's records, e.g. normalised to max-norm 25 as in the
/// paper's Sec. 4), draw M [d, r] with i.i.d. N(0, 1) entries from rng (column by column), and
/// return Z = r^{-1/2} X M, or, when sigma_min(X) < omega, Z = r^{-1/2} X~ M with X~ = U sqrt(
/// Sigma^2 + omega^2 I) V^T (line 9; thin SVD, so every one of the min(n, d) singular values is
/// lifted). Throws std::invalid_argument for an empty or non-finite x or bad options.
CuratorRelease ReleaseDataset(const Eigen::MatrixXd& x, const CuratorOptions& options,
                              bo::Rng& rng);

/// The reconstruction that voids the privacy argument: Algorithm 1's output is affine in each
/// record, z = x B + c (B [d, r], c [r]), so d + 1 records known_x [k, d] in general position
/// with their released rows known_z [k, r] (k >= d + 1) determine B and c by least squares, and
/// every other released row hidden_z [m, r] gives its record x = (z - c) B^+ when r >= d.
/// Returns the reconstructed records [m, d]. Throws std::invalid_argument when k < d + 1,
/// r < d, the sizes disagree, or the known records are affinely dependent.
Eigen::MatrixXd ReconstructRecords(const Eigen::MatrixXd& known_x, const Eigen::MatrixXd& known_z,
                                   const Eigen::MatrixXd& hidden_z);

/// Salt of the curator's engine (the projection M), derived from a run's seed (CLI).
inline constexpr uint64_t kPoGpUcbSeedSalt = 0x706f6770ULL;

/// Algorithm 2's settings on top of the loop options.
struct ModelerOptions {
  /// delta' of beta_t = 2 ln(n t^2 pi^2 / (6 delta')) (line 3), in (0, 1); the paper's
  /// delta_ucb / 2 = 0.025.
  double delta_prime = 0.025;
  /// Throws std::invalid_argument when delta_prime is not in (0, 1).
  void Validate() const;
};

/// The loop options of Algorithm 2 on the released rows z [n, r]: GP-UCB (the paper maximises;
/// base.goal is kept, so a minimisation runs GP-LCB) with
/// beta_t of line 3 (|D| = n), an isotropic kernel (the released rows preserve distances, not
/// coordinates) and the finite domain z, from `base` (budget, kernel family, noise, initial
/// points, fitting; initial_points 0 becomes 3 random rows). The box is the cube [min z, max z]^r
/// so the loop's unit scaling is the same along every axis and distances stay comparable. Throws
/// std::invalid_argument for an empty z or delta' outside (0, 1).
bo::BoLoopOptions ModelerLoopOptions(const Eigen::MatrixXd& z, const bo::BoLoopOptions& base,
                                     const ModelerOptions& options);

/// The cube [min z, max z]^r of ModelerLoopOptions as (lb, ub), each [r]; a constant z gets a
/// unit-wide cube.
std::pair<Eigen::VectorXd, Eigen::VectorXd> ModelerBox(const Eigen::MatrixXd& z);

/// Runs Algorithm 2: each proposal is a row i of z (step.candidate_index) and the curator's
/// answer is y = evaluate(i), the noisy output at the preimage x_i. `loop` comes from
/// ModelerLoopOptions (or any finite-domain options over z). Returns the session's result;
/// each step's extra holds {"index": i}. Exceptions from evaluate mark the step failed (the
/// loop's on_error decides what follows).
bo::BoResult RunPoGpUcb(const Eigen::MatrixXd& z, const std::function<double(int)>& evaluate,
                        const bo::BoLoopOptions& loop, bo::Rng& rng,
                        const bo::StepCallback& callback = {});

}  // namespace advbo::algorithms
