// Synthetic objectives for benchmarking BO, all stated as MINIMISATION problems with their
// standard domains and known global minima (Surjanovic & Bingham's Virtual Library of
// Simulation Experiments; Cosines from Azimi et al. 2012 Table 1, negated), plus functions
// drawn from a GP prior (random Fourier features of an SE kernel) whose minimum is
// estimated numerically.
#pragma once

#include <Eigen/Dense>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace advbo::bo {

/// A test function f: [lb, ub] -> R to be minimised.
struct TestFunction {
  /// Name as `advbo bo -f` takes it.
  std::string name;
  /// Input dimension.
  int dim = 0;
  /// Box [lb, ub], [dim] each.
  ///@{
  Eigen::VectorXd lb, ub;  ///< box [dim] each
  ///@}
  /// The function.
  std::function<double(const Eigen::VectorXd&)> f;
  double minimum = std::numeric_limits<double>::quiet_NaN();  ///< f* (NaN if unknown)
  bool minimum_estimated = false;  ///< f* found numerically (GP samples) rather than known
};

/// Names accepted by MakeTestFunction.
std::vector<std::string> TestFunctionNames();

/// Builds a test function by name: "branin" (2-D), "hartmann3", "hartmann6", "shekel10"
/// (4-D), "cosines" (2-D), "h1" (2-D on [-100, 100]^2, -h1 of Ha et al., f* = -2), the
/// any-dimension "ackley", "rosenbrock", "michalewicz", "deceptive" (on [0, 1]^n, f* = -1;
/// Ha et al. use n = 3) (dim defaults to 2; Michalewicz's f* is known for d = 2, 5, 10
/// only), or "gp-sample"
/// (dim default 2, domain [0, 1]^d, SE kernel with the given lengthscale, 1024 random Fourier
/// features, weights drawn from `seed`; f* estimated by Sobol + multi-start L-BFGS-B).
/// dim = 0 picks the default; a fixed-dimension function given another dim, or an unknown
/// name, throws std::invalid_argument naming the accepted values.
TestFunction MakeTestFunction(const std::string& name, int dim = 0, uint64_t seed = 0,
                              double lengthscale = 0.2);

}  // namespace advbo::bo
