// BOS^2 on the shipped MNIST model: invariants of the oracle contract, reproducibility,
// and the stopping ablation.
#include "attacks/bos2/bos2.h"

#include <gtest/gtest.h>

#include <cmath>

#include "attacks/bos2/latent.h"
#include "data/datasets.h"
#include "oracle/classifier.h"

namespace advbo::attacks {
namespace {

const std::string kRoot = ADVBO_SOURCE_DIR;

class Bos2OnMnist : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    model_ = oracle::Classifier::Load(kRoot + "/models/mnist_cw.pt").release();
    data_ = new data::ImageSet(data::ReadMnist(kRoot + "/data/mnist/t10k-images-idx3-ubyte.gz",
                                               kRoot + "/data/mnist/t10k-labels-idx1-ubyte.gz", 20));
  }
  static void TearDownTestSuite() {
    delete model_;
    delete data_;
  }
  static oracle::Classifier* model_;
  static data::ImageSet* data_;
};
oracle::Classifier* Bos2OnMnist::model_ = nullptr;
data::ImageSet* Bos2OnMnist::data_ = nullptr;

TEST(Latent, UpsamplingIsBilinearAndStaysInRange) {
  Eigen::VectorXd z(2 * 2 * 1);
  z << -1, 1, 1, -1;
  std::vector<float> up = UpsampleLatent(z, 1, 2, 4, 4);
  ASSERT_EQ(up.size(), 16u);
  for (float v : up) EXPECT_LE(std::abs(v), 1.0f + 1e-6f);
  EXPECT_FLOAT_EQ(up[0], -1.0f);                // corner keeps its value
  EXPECT_FLOAT_EQ(up[1], -0.5f);                // 3/4 * -1 + 1/4 * 1
  Eigen::VectorXd c(3 * 3 * 2);
  for (int i = 0; i < c.size(); ++i) c(i) = i < 9 ? 0.25 : -0.5;  // constant per channel
  std::vector<float> up2 = UpsampleLatent(c, 2, 3, 5, 7);
  for (int i = 0; i < 35; ++i) EXPECT_FLOAT_EQ(up2[i], 0.25f);
  for (int i = 35; i < 70; ++i) EXPECT_FLOAT_EQ(up2[i], -0.5f);
  Eigen::VectorXd down = ResizeLatent(c, 2, 3, 6);
  EXPECT_EQ(down.size(), 72);
  EXPECT_NEAR(down(0), 0.25, 1e-6);
  EXPECT_NEAR(down(71), -0.5, 1e-6);
}

TEST_F(Bos2OnMnist, EveryQueryInsideTheBallAndBudgetRespected) {
  const int idx = 0;  // a 7
  const double eps = 0.3;
  const long budget = 120;
  oracle::QueryOracle o(*model_, data_->image(idx), data_->labels[idx], 1, eps, budget);
  long count = 0;
  double worst = 0;
  o.set_observer([&](const float* img, long) {
    ++count;
    for (size_t i = 0; i < data_->image_size(); ++i) {
      worst = std::max(worst, std::abs(double(img[i]) - data_->image(idx)[i]));
      ASSERT_TRUE(img[i] >= 0.0f && img[i] <= 1.0f);
    }
  });
  bo::Rng rng(11);
  Bos2Options opt;
  opt.bos.num_paths = 20000;
  Bos2Result r = RunBos2(o, opt, rng);
  EXPECT_LE(worst, eps + 1e-7);
  EXPECT_LE(count, budget);
  EXPECT_EQ(count, o.queries());
  long loop_queries = 30;
  for (const auto& l : r.loops) loop_queries += l.queries;
  EXPECT_EQ(loop_queries, o.queries());
  if (r.success) {
    EXPECT_EQ(r.queries, o.first_success_query());
  } else {
    EXPECT_EQ(o.queries(), budget);
    EXPECT_EQ(r.queries, budget);
  }
}

TEST_F(Bos2OnMnist, FindsTargetedAdversarialsWithFewQueries) {
  // Image 0 (a "7") against three targets, with the seeds `advbo attack --seed 0` gives
  // these instances (instance k = target index among the 9 targets): all succeed within
  // 300 queries (the README benchmark needed 47, 32 and 40), and the adversarial image
  // really is classified as the target by the model.
  const int idx = 0;
  for (int target : {0, 2, 9}) {
    const int k = target < data_->labels[idx] ? target : target - 1;
    oracle::QueryOracle o(*model_, data_->image(idx), data_->labels[idx], target, 0.3, 300);
    bo::Rng rng(bo::DeriveSeed(0, k));
    Bos2Result r = RunBos2(o, Bos2Options{}, rng);
    ASSERT_TRUE(r.success) << "target " << target << " best y " << r.best_objective;
    Eigen::MatrixXd lp = model_->LogProbabilities(r.adversarial.data(), 1);
    Eigen::Index arg;
    lp.row(0).maxCoeff(&arg);
    EXPECT_EQ(arg, target);
    double linf = 0;
    for (size_t i = 0; i < r.adversarial.size(); ++i)
      linf = std::max(linf, std::abs(double(r.adversarial[i]) - data_->image(idx)[i]));
    EXPECT_LE(linf, 0.3 + 1e-7);
  }
}

TEST_F(Bos2OnMnist, SameSeedSameRunAndStoppingAblation) {
  const int idx = 4;  // a 4
  auto run = [&](uint64_t seed, bool stopping) {
    oracle::QueryOracle o(*model_, data_->image(idx), data_->labels[idx], 9 == data_->labels[idx] ? 8 : 9,
                          0.3, 150);
    bo::Rng rng(seed);
    Bos2Options opt;
    opt.stopping = stopping;
    opt.bos.num_paths = 20000;
    return RunBos2(o, opt, rng);
  };
  Bos2Result a = run(3, true), b = run(3, true);
  EXPECT_EQ(a.queries, b.queries);
  EXPECT_EQ(a.best_objective, b.best_objective);
  EXPECT_EQ(a.adversarial, b.adversarial);
  ASSERT_EQ(a.loops.size(), b.loops.size());
  for (size_t i = 0; i < a.loops.size(); ++i) {
    EXPECT_EQ(a.loops[i].side, b.loops[i].side);
    EXPECT_EQ(a.loops[i].queries, b.loops[i].queries);
  }
  Bos2Result c = run(3, false);
  for (const auto& l : c.loops) EXPECT_FALSE(l.stopped_early);
}

}  // namespace
}  // namespace advbo::attacks
