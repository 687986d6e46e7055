// Box-constrained local minimisation through LBFGS++'s L-BFGS-B (the library optimiser
// docs/design.md prescribes), hardened for BO use: never throws on line-search failures and
// returns the best point it evaluated.
#pragma once

#include <Eigen/Dense>
#include <functional>

namespace advbo::bo {

/// f(x, grad) returns the objective at x [n] and writes its gradient [n] into grad.
using GradObjective = std::function<double(const Eigen::VectorXd& x, Eigen::VectorXd* grad)>;

/// Result of MinimizeBoxed.
struct BoxedResult {
  Eigen::VectorXd x;  ///< best point evaluated, inside [lb, ub]
  double f;           ///< objective at x (+inf if every evaluation was non-finite)
  int evaluations;    ///< number of objective evaluations
};

/// Minimises f over the box [lb, ub] from x0 (projected into the box) with L-BFGS-B,
/// at most max_iterations iterations. Non-finite objective values are treated as +inf
/// for the line search; a failed line search ends the run with the best point so far.
/// Throws std::invalid_argument if the sizes of x0, lb, ub differ or lb > ub.
BoxedResult MinimizeBoxed(const GradObjective& f, const Eigen::VectorXd& x0,
                          const Eigen::VectorXd& lb, const Eigen::VectorXd& ub, int max_iterations);

}  // namespace advbo::bo
