// CGBA and CGBA-H (Reza, Rahmati, Wu & Dai, "CGBA: Curvature-aware Geometric Black-box
// Attack", ICCV 2023), L2, untargeted and targeted: hard-label attacks that, like GeoDA,
// estimate the boundary's normal at a boundary point from random low-frequency probes, but then
// search for the next boundary point along a semicircle in the plane of that normal and the
// current perturbation, so a boundary point is found whatever the boundary's curvature.
//   start: untargeted, Gaussian noise x0 + 0.02 k N(0, I), k = 1, 2, ..., until adversarial
//          (the authors' code release); targeted, the oracle's image of the target class.
//          Then a binary search on the line towards x0 gives the boundary point x_b.
//   iteration t = 1, 2, ...: N0 sqrt(t) probes x_b + eta, eta Gaussian on the lowest DCT
//          frequencies (block side = image side / dim_reduction); the normal estimate is
//          sum_i z_i eta_i, z_i = +1 for an adversarial probe, -1 otherwise.
//          In the plane of v = (x_b - x0) / r, r = |x_b - x0|_2, and the normal's component w
//          orthogonal to v, the semicircle of diameter [x0, x_b] is P(omega) = x0 + r cos(omega)
//          (cos(omega) v + sin(omega) w), omega in [0, pi/2]: P(0) = x_b is adversarial, P(pi/2)
//          = x0 is not. On a linear boundary with the true normal, the projection of x0 onto the
//          boundary lies on it, at omega = the angle between v and the normal.
//     CGBA:   omega_k = (pi/2)(1 - 2^-k), k = 1, 2, ... until P(omega_k) is not adversarial,
//             then a bisection of the angle between the last adversarial and that clean point
//             (the semicircular boundary search) to the boundary;
//     CGBA-H: (for the high curvature of targeted attacks) omega_k = theta / 2^k, theta the
//             angle between v and the normal, k = 1, 2, ... until P(omega_k) is adversarial,
//             then a binary search on the line from x0 to it.
// This project's choices where the code release differs or is silent: the bisection starts
// from the last adversarial point of the angle sweep, not from x_b again (fewer queries, the
// same boundary point); probes are batched; the run stops at the first adversarial query
// inside the eps-ball (or spends the budget under the min-distance goal); 8-bit queries keep a
// per-pixel probe standard deviation of at least 1/255 (as GeoDA here) and stop searches at one
// grid step.
#pragma once

#include <string>
#include <vector>

#include "attacks/attack.h"

namespace advbo::attacks {

/// CGBA / CGBA-H settings (the authors' code release defaults).
struct CgbaOptions {
  bool high_curvature = false;  ///< CGBA-H's step (true) or CGBA's semicircular search
  int initial_probes = 30;      ///< N0: iteration t spends N0 sqrt(t) probes, >= 1
  /// DCT block side = image side / this (at least min(side, 4): a tiny image keeps some
  /// frequencies), in [1, 64]
  double dim_reduction = 4;
  double sigma = 0.0002;    ///< probe coefficient standard deviation, in (0, 1]
  double tolerance = 1e-4;  ///< L2 width at which a binary search stops, in (0, 1]
  int max_search = 40;      ///< angles tried per step before giving up, in [1, 1000]
  /// Throws std::invalid_argument naming the field and `name` (the attack spec).
  void Validate(const std::string& name) const;
};

/// CGBA's semicircle of diameter [x0, x_b] in the plane of x_b - x0 and a normal estimate,
/// built once per step (each angle then costs one pass over the image): with
/// v = (x_b - x0) / r, r = |x_b - x0|_2, and w the unit component of the normal orthogonal to
/// v, P(omega) = x0 + r cos(omega) (cos(omega) v + sin(omega) w), omega in [0, pi/2] (0 gives
/// x_b, pi/2 gives x0).
class Semicircle {
 public:
  /// x0, `xb` (x_b) and `normal` (any length) [D]. valid() is false when the plane is
  /// degenerate: x_b = x0 or the normal parallel to v (or zero). Throws std::invalid_argument
  /// on mismatched sizes.
  Semicircle(const std::vector<float>& x0, const std::vector<float>& xb,
             const std::vector<double>& normal);
  /// Whether a boundary point was found (false: the search never reached the boundary).
  bool valid() const { return valid_; }
  /// Writes P(omega) [D] to *out (resized). Requires valid().
  void Point(double omega, std::vector<float>* out) const;

 private:
  const std::vector<float>& x0_;
  std::vector<double> v_, w_;  // unit vectors of the plane
  double r_ = 0;
  bool valid_ = false;
};

/// One point P(omega) [D] of the Semicircle through x0 and x_b (`xb`) [D] in the plane of
/// x_b - x0 and `normal` [D]. Returns false (and leaves *out alone) when the plane is
/// degenerate. Throws std::invalid_argument on mismatched sizes.
bool SemicirclePoint(const std::vector<float>& x0, const std::vector<float>& xb,
                     const std::vector<double>& normal, double omega, std::vector<float>* out);

/// The angle theta in [0, pi] between x_b - x0 and `normal` [D]; NaN when either is zero.
double SemicircleAngle(const std::vector<float>& x0, const std::vector<float>& xb,
                       const std::vector<double>& normal);

/// CGBA's iterations (normal estimate, then the semicircular or CGBA-H step, repeated) from an
/// adversarial image x [C * H * W] (pixels in [0, 1]; e.g. bo-hl's best boundary point under
/// L2): first the line search from x0 to x, then until success or the budget is spent -- or,
/// with `patience` > 0, until the boundary point's distance fell by less than 1 % over the
/// last `patience` queries (a stall: bo-hl then hands over to HopSkipJump). Used by
/// CgbaAttack::Run after its start and by bo-hl's L2 mode. Returns the iterations run and, when
/// `boundary` is given, writes the last boundary point [C * H * W] there; throws
/// std::invalid_argument when x has the wrong size.
int CgbaIterate(oracle::QueryOracle& oracle, const CgbaOptions& options, std::vector<float> x,
                bo::Rng& rng, const AttackProgress& progress, long patience = 0,
                std::vector<float>* boundary = nullptr);

/// CGBA; spec "cgba" or "cgba-h" with settings initial_probes, dim_reduction, sigma,
/// tolerance, max_search. Label feedback, L2, untargeted and targeted.
class CgbaAttack final : public LabelAttack {
 public:
  /// An attack with `options`, reported under `name` (cgba or cgba-h).
  explicit CgbaAttack(CgbaOptions options = {}, std::string name = "cgba");
  /// Runs until an adversarial query lies inside the eps-ball or the budget is spent.
  /// details: cgba_iterations, cgba_start (query index of the boundary start, null when none).
  AttackResult Run(oracle::QueryOracle& oracle, bo::Rng& rng,
                   const AttackProgress& progress) const override;

 private:
  CgbaOptions options_;
};

}  // namespace advbo::attacks
