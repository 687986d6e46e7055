// Trust region of TuRBO-1 (Eriksson, Pearce, Gardner, Turner, Poloczek, "Scalable Global
// Optimization via Local Bayesian Optimization", NeurIPS 2019, Sec. 2): a hyper-rectangle
// around the incumbent whose side length L doubles after tau_succ consecutive improvements,
// halves after tau_fail consecutive non-improvements, and restarts at L_init below L_min.
// Used by BOS^2's perturbation loop (`bos2:tr=1`).
#pragma once

#include <Eigen/Dense>
#include <vector>

#include "bo/random.h"

namespace advbo::bo {

/// TuRBO's trust-region settings (paper Sec. 2 defaults). Lengths are in units of the
/// domain's width: the box of a coordinate with weight w is center +- L * w / 2 of that width.
struct TrustRegionOptions {
  double length_init = 0.8;       ///< L_init
  double length_min = 0.0078125;  ///< L_min = 2^-7 (below it the region restarts)
  double length_max = 1.6;        ///< L_max
  int success_tolerance = 3;      ///< tau_succ, consecutive improvements that double L
  /// tau_fail, consecutive non-improvements that halve L; 0 = TuRBO's ceil(max(4/q, d/q))
  /// for batch size q and dimension d (TrustRegion::failure_tolerance).
  int failure_tolerance = 0;
  /// An observation y improves on the region's best y* when y > y* + improvement * |y*|
  /// (TuRBO's 1e-3 relative margin).
  double improvement = 1e-3;

  /// Throws std::invalid_argument naming the setting unless 0 < length_min <= length_init
  /// <= length_max (all finite), success_tolerance >= 1, failure_tolerance >= 0 and
  /// improvement >= 0 (finite).
  void Validate() const;
};

/// The state of one trust region: its side length L and its success / failure counters.
class TrustRegion {
 public:
  /// Starts at L = options.length_init with zero counters; validates `options`.
  explicit TrustRegion(const TrustRegionOptions& options = {});

  /// TuRBO's per-coordinate weights from GP lengthscales `lengthscales` [D] (> 0):
  /// w_i = l_i / (prod_k l_k)^(1/D), so the box's volume is L^D whatever the lengthscales.
  /// Throws std::invalid_argument on an empty vector or a non-positive / non-finite entry.
  static Eigen::VectorXd Weights(const Eigen::VectorXd& lengthscales);

  /// The box around `center` [D] inside the domain [lb, ub] (each [D], lb < ub): per
  /// coordinate center_i +- L * w_i * (ub_i - lb_i) / 2, clipped to the domain; written to
  /// *box_lb, *box_ub. Throws std::invalid_argument on mismatched sizes.
  void Box(const Eigen::VectorXd& center, const Eigen::VectorXd& weights, const Eigen::VectorXd& lb,
           const Eigen::VectorXd& ub, Eigen::VectorXd* box_lb, Eigen::VectorXd* box_ub) const;

  /// Records a batch's best objective `y` against the region's best `best_so_far` (the
  /// incumbent's objective before the batch), with batch size q >= 1 and dimension d >= 1
  /// (for the automatic tau_fail). Updates the counters and L (Sec. 2: expand / shrink);
  /// when L falls below L_min the region restarts at L_init and restarts() grows.
  /// Returns whether the batch was an improvement.
  bool Update(double y, double best_so_far, int q, int d);

  /// tau_fail for batch size q and dimension d: options.failure_tolerance, or TuRBO's
  /// ceil(max(4/q, d/q)) when it is 0.
  int failure_tolerance(int q, int d) const;
  /// Current side length L (units of the box's width).
  double length() const { return length_; }
  /// Restarts so far (L fell below L_min).
  int restarts() const { return restarts_; }
  /// The region's settings.
  const TrustRegionOptions& options() const { return opt_; }

 private:
  TrustRegionOptions opt_;
  double length_;
  int successes_ = 0, failures_ = 0, restarts_ = 0;
};

/// Carries a uniform sample along when its box moves, redrawing as few points as the law
/// allows (advbo; maximal coupling, Lindvall, "Lectures on the Coupling Method", 1992, I.5).
/// On entry the rows of *z [M, d] are M independent uniform points of the box B = [lb_old,
/// ub_old]; on return they are M independent uniform points of B' = [lb_new, ub_new] (each
/// bound [d], lb < ub per coordinate). Row c is kept when it lies in I = B n B' and (when
/// |B'| > |B|) a U(0, 1) draw is below |B| / |B'|; otherwise it is redrawn from the coupling's
/// residual law, |I| (1/|B'| - 1/|B|)+ on I and 1/|B'| on B' \ I (normalised), sampled
/// exactly coordinate by coordinate. So a shifted box of the same volume keeps every row in
/// the overlap, and the expected number of redrawn rows is M (1 - |I| / max(|B|, |B'|)).
/// Returns the redrawn rows' indices (increasing). Draws from rng in row order: a redrawn row
/// takes one U(0, 1) per coordinate, as a fresh draw, plus at most two for the choices.
/// Throws std::invalid_argument on mismatched sizes or a bound pair with lb >= ub.
std::vector<int> MoveUniformSample(Eigen::MatrixXd* z, const Eigen::VectorXd& lb_old,
                                   const Eigen::VectorXd& ub_old, const Eigen::VectorXd& lb_new,
                                   const Eigen::VectorXd& ub_new, Rng& rng);

}  // namespace advbo::bo
