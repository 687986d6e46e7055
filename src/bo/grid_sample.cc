#include "bo/grid_sample.h"

#include <random>
#include <stdexcept>

#include "bo/gp.h"
#include "bo/kernel.h"

namespace advbo::bo {

Eigen::MatrixXd SampleGpOnGrid(const Eigen::VectorXd& axis1, const Eigen::VectorXd& axis2,
                               double lengthscale, double variance, Rng& rng) {
  return SampleGpOnGrid(axis1, axis2, lengthscale, lengthscale, variance, rng);
}

Eigen::MatrixXd SampleGpOnGrid(const Eigen::VectorXd& axis1, const Eigen::VectorXd& axis2,
                               double lengthscale1, double lengthscale2, double variance,
                               Rng& rng) {
  if (axis1.size() < 1 || axis2.size() < 1 || !(lengthscale1 > 0) || !(lengthscale2 > 0) ||
      !(variance > 0))
    throw std::invalid_argument(
        "SampleGpOnGrid: need non-empty axes, lengthscales and variance > 0");
  auto factor = [&](const Eigen::VectorXd& axis, double lengthscale, double s2) {
    const StationaryKernel k(KernelFamily::kSquaredExponential, 1, false, {}, lengthscale, s2);
    double jitter = 0;
    return CholeskyWithJitter(k.Eval(axis, axis), &jitter);
  };
  const Eigen::MatrixXd l1 = factor(axis1, lengthscale1, variance),
                        l2 = factor(axis2, lengthscale2, 1.0);
  std::normal_distribution<double> normal(0.0, 1.0);
  Eigen::MatrixXd z(axis1.size(), axis2.size());
  for (Eigen::Index c = 0; c < z.cols(); ++c)
    for (Eigen::Index r = 0; r < z.rows(); ++r) z(r, c) = normal(rng);
  return l1 * z * l2.transpose();
}

}  // namespace advbo::bo
