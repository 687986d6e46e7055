// Initial designs (space-filling point sets) over a box [lb, ub]: uniform random, Latin
// hypercube (McKay et al. 1979) and scrambled Sobol (Boost.Random's Sobol sequence with a
// random digital shift, so the seed changes the points but not their low discrepancy).
#pragma once

#include <Eigen/Dense>
#include <string>

#include "bo/random.h"

namespace advbo::bo {

/// Which point set.
enum class DesignKind { kUniform, kLatinHypercube, kSobol };

/// Parses "uniform", "lhs", "sobol"; throws std::invalid_argument listing them otherwise.
DesignKind ParseDesign(const std::string& name);
std::string DesignName(DesignKind kind);

/// n points in the box [lb, ub] (each [d], lb <= ub): returns [n, d]. Sobol supports
/// d <= 3667 (Boost's table). Throws std::invalid_argument on n < 0, mismatched or
/// inverted bounds, or an unsupported dimension.
Eigen::MatrixXd MakeDesign(DesignKind kind, int n, const Eigen::VectorXd& lb,
                           const Eigen::VectorXd& ub, Rng& rng);

}  // namespace advbo::bo
