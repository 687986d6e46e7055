#include "bo/optimize.h"

#include <LBFGSB.h>

#include <cmath>
#include <limits>
#include <stdexcept>

namespace advbo::bo {

BoxedResult MinimizeBoxed(const GradObjective& f, const Eigen::VectorXd& x0,
                          const Eigen::VectorXd& lb, const Eigen::VectorXd& ub,
                          int max_iterations) {
  if (x0.size() != lb.size() || x0.size() != ub.size())
    throw std::invalid_argument("MinimizeBoxed: x0, lb and ub must have the same size");
  if ((lb.array() > ub.array()).any())
    throw std::invalid_argument("MinimizeBoxed: lower bound above upper bound");
  BoxedResult best{x0.cwiseMax(lb).cwiseMin(ub), std::numeric_limits<double>::infinity(), 0};
  auto wrapped = [&](const Eigen::VectorXd& x, Eigen::VectorXd& g) -> double {
    double v = f(x, &g);
    ++best.evaluations;
    if (!std::isfinite(v) || !g.allFinite()) {
      g.setZero();
      return 1e300;
    }
    if (v < best.f) {
      best.f = v;
      best.x = x;
    }
    return v;
  };
  LBFGSpp::LBFGSBParam<double> param;
  param.max_iterations = max_iterations;
  param.max_linesearch = 20;
  param.epsilon = 1e-6;
  param.epsilon_rel = 1e-6;
  LBFGSpp::LBFGSBSolver<double> solver(param);
  Eigen::VectorXd x = best.x;
  double fx = 0.0;
  try {
    solver.minimize(wrapped, x, fx, lb, ub);
  } catch (const std::exception&) {
    // Line-search failure or a non-descent direction: keep the best point evaluated.
  }
  if (best.evaluations == 0) {
    Eigen::VectorXd g(x0.size());
    wrapped(best.x, g);
  }
  return best;
}

}  // namespace advbo::bo
