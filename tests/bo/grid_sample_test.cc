// SampleGpOnGrid: the empirical covariance of many draws matches the SE kernel on the
// product grid (the Kronecker factorisation is exact), and one seed gives one draw.
#include "bo/grid_sample.h"

#include <gtest/gtest.h>

#include <cmath>

namespace advbo::bo {
namespace {

TEST(SampleGpOnGrid, CovarianceIsTheSeKernelOnTheProductGrid) {
  const Eigen::Vector2d a1(0.0, 0.3);
  const Eigen::Vector3d a2(0.0, 0.2, 0.5);
  const double ls = 0.25, s2 = 2.0;
  Rng rng(4);
  const int n = 40000;
  Eigen::MatrixXd draws(n, 6);  // cells in column-major order of [2, 3]
  for (int i = 0; i < n; ++i) {
    const Eigen::MatrixXd f = SampleGpOnGrid(a1, a2, ls, s2, rng);
    draws.row(i) = Eigen::Map<const Eigen::RowVectorXd>(f.data(), 6);
  }
  const Eigen::MatrixXd cov = draws.transpose() * draws / n;  // zero mean
  for (int p = 0; p < 6; ++p)
    for (int q = 0; q < 6; ++q) {
      const double dx = a1(p % 2) - a1(q % 2), dy = a2(p / 2) - a2(q / 2);
      const double k = s2 * std::exp(-(dx * dx + dy * dy) / (2 * ls * ls));
      EXPECT_NEAR(cov(p, q), k, 0.05 * s2) << p << "," << q;
    }
  Rng r1(9), r2(9);
  EXPECT_EQ(SampleGpOnGrid(a1, a2, ls, s2, r1), SampleGpOnGrid(a1, a2, ls, s2, r2));
  EXPECT_THROW(SampleGpOnGrid(a1, a2, 0.0, s2, r1), std::invalid_argument);
  EXPECT_THROW(SampleGpOnGrid(Eigen::VectorXd(), a2, ls, s2, r1), std::invalid_argument);
}

}  // namespace
}  // namespace advbo::bo
