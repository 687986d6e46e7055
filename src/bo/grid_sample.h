// Exact draws of a GP on a product grid, for synthetic studies (R2-B2 games, Dai 2021 thesis
// Sec. 8.4.1; plankton-style fields of epsilon-Macro-BO, Kharkovskii 2020 thesis Ch. 4).
#pragma once

#include <Eigen/Dense>

#include "bo/random.h"

namespace advbo::bo {

/// One draw of a zero-mean GP with the SE kernel k(x, x') = variance * exp(-||x - x'||^2 /
/// (2 lengthscale^2)) on the product grid axis1 x axis2 (axes [K1] and [K2], any units).
/// Exact: the SE kernel factorises over coordinates, so F = L1 Z L2^T with L1, L2 the
/// (jittered) Cholesky factors of variance * K(axis1) and K(axis2) and Z [K1, K2] standard
/// normal, filled column by column from rng. Returns F [K1, K2] (row = axis1 index).
/// Throws std::invalid_argument on an empty axis or lengthscale / variance <= 0.
Eigen::MatrixXd SampleGpOnGrid(const Eigen::VectorXd& axis1, const Eigen::VectorXd& axis2,
                               double lengthscale, double variance, Rng& rng);

/// As above with one lengthscale per axis (lengthscale1 along axis1, lengthscale2 along
/// axis2; the thesis' road and corridor fields, Kharkovskii 2020 Sec. 4.4). Equal lengthscales
/// give exactly the isotropic draw for the same rng state.
Eigen::MatrixXd SampleGpOnGrid(const Eigen::VectorXd& axis1, const Eigen::VectorXd& axis2,
                               double lengthscale1, double lengthscale2, double variance, Rng& rng);

}  // namespace advbo::bo
