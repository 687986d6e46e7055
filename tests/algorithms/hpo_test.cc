// HPO tasks on the shipped MNIST test set: the data split, the search-space maps, the logistic
// regression's SGD step against a hand-computed full-batch gradient step, the LS-SVM's
// conjugate-gradient training against a direct solve of its KKT system, determinism, early
// stopping through the callback, and clear errors for bad names, data and points.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <vector>

#include "algorithms/hpo/hpo_task.h"

namespace advbo::hpo {
namespace {

TaskOptions Shipped(int examples, int offset = 0) {
  TaskOptions o;
  o.mnist_dir = std::string(ADVBO_SOURCE_DIR) + "/data/mnist";
  o.cifar10_dir = std::string(ADVBO_SOURCE_DIR) + "/data/cifar10";
  o.examples = examples;
  o.offset = offset;
  return o;
}

double ErrorOf(const Eigen::MatrixXd& scores, const std::vector<int>& y) {
  int wrong = 0;
  for (Eigen::Index i = 0; i < scores.rows(); ++i) {
    Eigen::Index a;
    scores.row(i).maxCoeff(&a);
    wrong += a != y[i];
  }
  return double(wrong) / scores.rows();
}

TEST(HpoTask, SplitsPoolsEightyTwentyAndCutsDisjointChunks) {
  const TaskData a = LoadTaskData("mnist", Shipped(1000));
  EXPECT_EQ(a.train.x.rows(), 800);
  EXPECT_EQ(a.val.x.rows(), 200);
  EXPECT_EQ(a.train.x.cols(), 784);
  const TaskData again = LoadTaskData("mnist", Shipped(1000));
  EXPECT_TRUE(a.train.x == again.train.x);  // fixed permutation
  const TaskData b = LoadTaskData("mnist", Shipped(1000, 1000));
  EXPECT_GT((a.train.x - b.train.x).cwiseAbs().sum(), 1000.0f);
  TaskOptions inv = Shipped(1000);
  inv.transform = "invert-noise";
  const TaskData c = LoadTaskData("mnist", inv);
  EXPECT_GT(c.train.x.mean(), 0.6f);  // mostly white after inversion
  EXPECT_LT(a.train.x.mean(), 0.2f);
  EXPECT_EQ(c.train.y, a.train.y);
  TaskOptions grey = Shipped(200);
  grey.transform = "grey";
  const TaskData g = LoadTaskData("cifar10", grey);
  EXPECT_EQ(g.train.x.cols(), 1024);
  EXPECT_EQ(g.train.channels, 1);
}

TEST(HpoTask, SearchSpaceIsLogScaledWithIntegersRounded) {
  const auto task = MakeTask("mnist-lr", Shipped(200));
  EXPECT_NEAR(task->SearchLower()(1), -6.0, 1e-12);
  EXPECT_NEAR(task->SearchUpper()(2), -1.0, 1e-12);
  const Eigen::VectorXd x = task->ToNatural(Eigen::Vector3d(std::log10(99.6), -3.0, -2.0));
  EXPECT_EQ(x(0), 100.0);
  EXPECT_NEAR(x(1), 1e-3, 1e-15);
  EXPECT_TRUE(task->ToSearch(Eigen::Vector3d(100, 1e-3, 1e-2))
                  .isApprox(Eigen::Vector3d(2.0, -3.0, -2.0), 1e-12));
  EXPECT_THROW(task->Evaluate(Eigen::Vector3d(10, 1e-3, 1e-2), 1), std::invalid_argument);
  EXPECT_THROW(task->Evaluate(Eigen::Vector2d(100, 1e-3), 1), std::invalid_argument);
  EXPECT_THROW(task->Evaluate(Eigen::Vector3d(100, 1e-3, 1e-2), 0), std::invalid_argument);
}

TEST(HpoTask, LogisticRegressionEpochIsTheFullBatchGradientStep) {
  // 600 examples -> 480 training images; batch 480 = full-batch gradient descent, so one
  // epoch from W = 0, b = 0 is W = -lr X^T (P - Y) / n with P uniform (1/10), b likewise.
  const TaskData data = LoadTaskData("mnist", Shipped(600));
  const auto task = MakeTask("mnist-lr", Shipped(600));
  const double lr = 0.05;
  const auto curve = task->Evaluate(Eigen::Vector3d(480, 1e-6, lr), 1);
  ASSERT_EQ(curve.size(), 1u);
  const Eigen::MatrixXd x = data.train.x.cast<double>();
  Eigen::MatrixXd g = Eigen::MatrixXd::Constant(x.rows(), 10, 0.1);
  for (Eigen::Index i = 0; i < x.rows(); ++i) g(i, data.train.y[i]) -= 1.0;
  g /= double(x.rows());
  const Eigen::MatrixXd w = -lr * x.transpose() * g;
  const Eigen::RowVectorXd b = -lr * g.colwise().sum();
  Eigen::MatrixXd scores = data.val.x.cast<double>() * w;
  scores.rowwise() += b;
  EXPECT_NEAR(curve[0], ErrorOf(scores, data.val.y), 1.0 / 120 + 1e-12);  // <= 1 tie flip
}

TEST(HpoTask, LogisticRegressionLearnsIsDeterministicAndStopsOnRequest) {
  const auto task = MakeTask("mnist-lr", Shipped(2000));
  const Eigen::Vector3d good(50, 1e-5, 0.05), bad(20, 1.0, 0.1);
  const auto c1 = task->Evaluate(good, 4);
  EXPECT_EQ(c1, task->Evaluate(good, 4));
  EXPECT_LT(c1.back(), 0.2);
  EXPECT_LT(c1.back(), task->Evaluate(bad, 4).back());
  int seen = 0;
  const auto short_curve = task->Evaluate(good, 10, [&](int epoch, double e) {
    EXPECT_EQ(epoch, ++seen);
    EXPECT_GE(e, 0.0);
    EXPECT_LE(e, 1.0);
    return epoch < 2;
  });
  EXPECT_EQ(short_curve.size(), 2u);
  EXPECT_EQ(short_curve[1], c1[1]);  // a stopped run is a prefix of the full one
  TaskOptions other = Shipped(2000);
  other.seed = 1;
  EXPECT_NE(MakeTask("mnist-lr", other)->Evaluate(good, 4), c1);  // the seed matters
}

TEST(HpoTask, LsSvmConjugateGradientsConvergeToTheKktSolution) {
  const TaskOptions o = Shipped(250);  // 200 train / 50 validation
  const TaskData data = LoadTaskData("mnist", o);
  const auto task = MakeTask("mnist-lssvm", o);
  const double c = 10.0, ell = 6.0;
  const auto curve = task->Evaluate(Eigen::Vector2d(c, ell), 200);
  // Direct solve of [0 1^T; 1 K + I/C][b; a] = [0; y_k] for every class.
  const Eigen::MatrixXd xt = data.train.x.cast<double>(), xv = data.val.x.cast<double>();
  const int n = static_cast<int>(xt.rows());
  auto kernel = [&](const Eigen::MatrixXd& a, const Eigen::MatrixXd& bm) {
    Eigen::MatrixXd k(a.rows(), bm.rows());
    for (Eigen::Index i = 0; i < a.rows(); ++i)
      for (Eigen::Index j = 0; j < bm.rows(); ++j)
        k(i, j) = std::exp(-(a.row(i) - bm.row(j)).squaredNorm() / (2 * ell * ell));
    return k;
  };
  Eigen::MatrixXd kkt = Eigen::MatrixXd::Zero(n + 1, n + 1);
  kkt.block(1, 1, n, n) = kernel(xt, xt) + Eigen::MatrixXd::Identity(n, n) / c;
  kkt.block(0, 1, 1, n).setOnes();
  kkt.block(1, 0, n, 1).setOnes();
  Eigen::MatrixXd rhs = -Eigen::MatrixXd::Ones(n + 1, 10);
  rhs.row(0).setZero();
  for (int i = 0; i < n; ++i) rhs(1 + i, data.train.y[i]) = 1.0;
  const Eigen::MatrixXd sol = kkt.fullPivLu().solve(rhs);
  Eigen::MatrixXd scores = kernel(xv, xt) * sol.bottomRows(n);
  scores.rowwise() += sol.row(0);
  EXPECT_DOUBLE_EQ(curve.back(), ErrorOf(scores, data.val.y));
  EXPECT_LT(curve.back(), 0.3);
  EXPECT_GT(curve.front(), curve.back());  // training improves over the iterations
}

TEST(HpoTask, CnnTrainsDeterministically) {
  const auto task = MakeTask("mnist-cnn", Shipped(400));
  const Eigen::Vector4d x(32, 0.05, 1e-5, 8);
  const auto c = task->Evaluate(x, 2);
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c, task->Evaluate(x, 2));
  EXPECT_LT(c.back(), 0.9);  // better than chance after two epochs on 320 images
}

TEST(HpoTask, ClearErrorsForUnknownTasksAndMissingData) {
  EXPECT_THROW(MakeTask("mnist-xgboost", Shipped(100)), std::invalid_argument);
  TaskOptions o = Shipped(100);
  o.mnist_dir = "/nonexistent/mnist";
  try {
    MakeTask("mnist-lr", o);
    FAIL() << "no error for a missing folder";
  } catch (const TaskDataError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/mnist"), std::string::npos);
  }
  o = Shipped(100, 20000);  // offset past the 10,000 shipped images
  EXPECT_THROW(MakeTask("mnist-lr", o), TaskDataError);
  o = Shipped(100);
  o.transform = "blur";
  EXPECT_THROW(MakeTask("mnist-lr", o), std::invalid_argument);
}

}  // namespace
}  // namespace advbo::hpo
namespace advbo::hpo {
namespace {

// near C = 1e3 the LS-SVM's validation error after 50 iterations jumped between
// 0.07 and 0.73 for lengthscales 1e-6 apart (float32 kernel; bias from a ratio of two
// unconverged sums), larger than the differences HPO results report. Double-precision
// kernel and projected CG: close points give close errors, none near chance. (Unconverged
// CG on this ill-conditioned system still amplifies rounding: the spread is 0.006-0.05 in
// the release build and up to 0.098 in the sanitizer build, whose arithmetic differs; the
// old code gave 0.45-0.66 at these lengthscales.)
TEST(HpoTask, LsSvmErrorIsStableUnderTinyChangesNearC1000) {
  const auto task = MakeTask("mnist-lssvm", Shipped(0));  // 2,000 train / 500 validation
#ifdef ADVBO_SANITIZED
  // Each evaluation (a 2,000-point LS-SVM solve) takes ~12 s under ASan + UBSan: there one
  // lengthscale and two perturbations check the same memory-safety paths.
  const std::vector<double> lengthscales{12.0}, perturbations{0.0, 1e-6};
#else
  const std::vector<double> lengthscales{12.0, 16.0, 25.0}, perturbations{0.0, 1e-6, 2e-6, 3e-6};
#endif
  for (double ell : lengthscales) {
    double lo = 1, hi = 0;
    for (double d : perturbations) {
      const double err = task->Evaluate(Eigen::Vector2d(1e3, ell + d), 50).back();
      lo = std::min(lo, err);
      hi = std::max(hi, err);
    }
    EXPECT_LT(hi - lo, 0.15) << "lengthscale " << ell;  // was 0.66, 0.45, 0.47
    EXPECT_LT(hi, 0.3) << "lengthscale " << ell;        // was 0.73, 0.64, 0.81
  }
}

}  // namespace
}  // namespace advbo::hpo
