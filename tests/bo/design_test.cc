// Initial designs and acquisition optimisers.
#include "bo/design.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "bo/acquisition_optimizer.h"

namespace advbo::bo {
namespace {

TEST(Design, AllPointsInTheBoxAndLhsIsStratified) {
  Rng rng(1);
  Eigen::VectorXd lb(3), ub(3);
  lb << -1, 0, 5;
  ub << 1, 2, 5.5;
  for (auto kind : {DesignKind::kUniform, DesignKind::kLatinHypercube, DesignKind::kSobol}) {
    Eigen::MatrixXd x = MakeDesign(kind, 64, lb, ub, rng);
    ASSERT_EQ(x.rows(), 64);
    for (int j = 0; j < 3; ++j) {
      EXPECT_GE(x.col(j).minCoeff(), lb(j));
      EXPECT_LE(x.col(j).maxCoeff(), ub(j));
    }
    if (kind == DesignKind::kUniform) continue;
    // LHS and Sobol (n = 2^6): exactly one point per 1/64 slice of every coordinate.
    for (int j = 0; j < 3; ++j) {
      std::set<int> cells;
      for (int i = 0; i < 64; ++i)
        cells.insert(static_cast<int>(std::floor((x(i, j) - lb(j)) / (ub(j) - lb(j)) * 64)));
      EXPECT_EQ(cells.size(), 64u) << DesignName(kind) << " coordinate " << j;
    }
  }
  EXPECT_EQ(ParseDesign("lhs"), DesignKind::kLatinHypercube);
  EXPECT_THROW(ParseDesign("grid"), std::invalid_argument);
  EXPECT_THROW(MakeDesign(DesignKind::kSobol, 4, ub, lb, rng), std::invalid_argument);
}

TEST(Design, SobolDependsOnTheSeedButStaysBalanced) {
  Eigen::VectorXd lb = Eigen::VectorXd::Zero(2), ub = Eigen::VectorXd::Ones(2);
  Rng a(1), b(2);
  EXPECT_NE(MakeDesign(DesignKind::kSobol, 8, lb, ub, a),
            MakeDesign(DesignKind::kSobol, 8, lb, ub, b));
}

// A smooth test acquisition with known maximiser: a(x) = -|x - c|^2 + bump.
class Quadratic final : public Acquisition {
 public:
  explicit Quadratic(Eigen::VectorXd c) : c_(std::move(c)) {}
  int dim() const override { return static_cast<int>(c_.size()); }
  Eigen::VectorXd Evaluate(const Eigen::MatrixXd& x) const override {
    Eigen::VectorXd v(x.rows());
    for (int i = 0; i < x.rows(); ++i) v(i) = ValueAndGradient(x.row(i).transpose(), nullptr);
    return v;
  }
  double ValueAndGradient(const Eigen::VectorXd& x, Eigen::VectorXd* g) const override {
    if (g) *g = -2 * (x - c_);
    return -(x - c_).squaredNorm();
  }

 private:
  Eigen::VectorXd c_;
};

TEST(AcquisitionOptimizers, FindTheKnownMaximum) {
  Rng rng(3);
  Eigen::VectorXd c(4);
  c << 0.3, -0.6, 0.9, 0.05;
  Quadratic q(c);
  const Eigen::VectorXd lb = Eigen::VectorXd::Constant(4, -1), ub = Eigen::VectorXd::Ones(4);
  AcquisitionMax m = MaximizeAcquisition(q, lb, ub, {}, rng);
  EXPECT_LT((m.x - c).norm(), 1e-5);
  AcquisitionMax d = MaximizeDirect(q, lb, ub, 2000);
  EXPECT_LT((d.x - c).norm(), 2e-2);
  EXPECT_LE(d.evaluations, 2000 + 10);
  // Constrained: the maximiser of a centre outside the box is the nearest box point.
  Eigen::VectorXd out(4);
  out << 2.0, -0.6, 0.9, -3.0;
  Quadratic q2(out);
  AcquisitionMax m2 = MaximizeAcquisition(q2, lb, ub, {}, rng);
  Eigen::VectorXd proj = out.cwiseMax(lb).cwiseMin(ub);
  EXPECT_LT((m2.x - proj).norm(), 1e-6);
  // Finite set.
  Eigen::MatrixXd set(3, 4);
  set << 0, 0, 0, 0, 0.3, -0.5, 0.9, 0, 1, 1, 1, 1;
  int idx = -1;
  MaximizeOverSet(q, set, &idx);
  EXPECT_EQ(idx, 1);
}

TEST(AcquisitionOptimizers, BlockAcquisitionOptimisesOnlyItsCoordinates) {
  Rng rng(4);
  Eigen::VectorXd c(3);
  c << 0.2, 0.4, 0.6;
  Quadratic q(c);
  Eigen::VectorXd base(3);
  base << -0.5, 0.0, 0.5;
  BlockAcquisition blk(q, {0, 2}, base);
  EXPECT_EQ(blk.dim(), 2);
  AcquisitionMax m =
      MaximizeAcquisition(blk, Eigen::Vector2d(-1, -1), Eigen::Vector2d(1, 1), {}, rng);
  EXPECT_NEAR(m.x(0), 0.2, 1e-5);
  EXPECT_NEAR(m.x(1), 0.6, 1e-5);
  Eigen::VectorXd full = blk.Embed(m.x);
  EXPECT_DOUBLE_EQ(full(1), 0.0);
  EXPECT_THROW(BlockAcquisition(q, {0, 0}, base), std::invalid_argument);
  EXPECT_THROW(MaximizeAcquisition(q, Eigen::Vector2d(0, 0), Eigen::Vector2d(1, 1), {}, rng),
               std::invalid_argument);
}

}  // namespace
}  // namespace advbo::bo
