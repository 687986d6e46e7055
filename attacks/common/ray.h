// Queries along rays from the clean image, shared by the hard-label attacks that search a
// continuous direction: Sign-OPT (Cheng et al., ICLR 2020: g(theta) by a binary search along
// theta) and GeoDA (Rahmati et al., CVPR 2020: the boundary point along a direction). RayS'
// sign-direction search with its censoring (attacks/rays) and HopSkipJump's bisection between
// the clean image and a boundary point (attacks/hsja) keep their own.
#pragma once

#include <vector>

#include "oracle/oracle.h"

namespace advbo::attacks {

/// Adversarial checks of x0 + (r / scale) v for a direction v [D] (pixels in [0, 1] per unit
/// radius), a radius r >= 0 and the direction's length `scale` > 0 in the unit r is measured
/// in (1 when v is already unit). The oracle clips (and, in 8-bit mode, rounds) each query and
/// counts it; it must outlive the probe.
class RayProbe {
 public:
  /// Probes rays from the clean image of `oracle` (hard-label: one query per probe).
  explicit RayProbe(oracle::QueryOracle& oracle);
  /// The budget is spent or a query succeeded (adversarial inside the ball).
  bool done() const { return oracle_.remaining() <= 0 || oracle_.succeeded(); }
  /// Whether x0 + (r / scale) v is adversarial: one query; false without one once the budget
  /// is spent.
  bool Adversarial(const std::vector<double>& v, double r, double scale = 1.0);
  /// Bisection for the smallest adversarial radius in (lo, hi], given x0 + hi v adversarial
  /// and x0 + lo v not: halves [lo, hi] until it is at most `tol` wide (or done()); returns hi.
  double Bisect(const std::vector<double>& v, double lo, double hi, double tol, double scale = 1.0);

 private:
  oracle::QueryOracle& oracle_;
  const std::vector<float>& x0_;
  std::vector<float> x_;
};

}  // namespace advbo::attacks
