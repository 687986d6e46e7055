// The Carlini-Wagner loss on log-probabilities that ZOO and AutoZOOM minimise (Carlini &
// Wagner 2017 eq. f_6 with log F; Chen et al. 2017 eq. 4/5):
//   targeted:   f = max(max_{i != t} log F_i - log F_t, -kappa)
//   untargeted: f = max(log F_y - max_{i != y} log F_i, -kappa)
// plus c * f + ||x - x0||_2^2 for the attack objective.
#pragma once

#include <Eigen/Dense>
#include <algorithm>
#include <limits>

namespace advbo::attacks {

/// f for every row of log-probabilities lp [n, classes]: [n].
inline Eigen::VectorXd CwLoss(const Eigen::MatrixXd& lp, int true_class, int target, double kappa) {
  Eigen::VectorXd f(lp.rows());
  const int keep = target >= 0 ? target : true_class;
  for (Eigen::Index r = 0; r < lp.rows(); ++r) {
    double other = -std::numeric_limits<double>::infinity();
    for (Eigen::Index c = 0; c < lp.cols(); ++c)
      if (c != keep) other = std::max(other, lp(r, c));
    const double v = target >= 0 ? other - lp(r, target) : lp(r, true_class) - other;
    f(r) = std::max(v, -kappa);
  }
  return f;
}

}  // namespace advbo::attacks
