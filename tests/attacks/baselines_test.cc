// The baseline attacks on the shipped MNIST model: each succeeds on an easy instance within
// its default budget, and every query of every attack respects the oracle contract (inside
// the eps-ball and [0, 1], never more than the budget, every evaluated image counted).
#include <gtest/gtest.h>

#include <cmath>

#include "attacks/attack.h"
#include "attacks/square/square.h"
#include "data/datasets.h"
#include "oracle/classifier.h"

namespace advbo::attacks {
namespace {

const std::string kRoot = ADVBO_SOURCE_DIR;

class BaselinesOnMnist : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    model_ = oracle::Classifier::Load(kRoot + "/models/mnist_cw.pt").release();
    data_ =
        new data::ImageSet(data::ReadMnist(kRoot + "/data/mnist/t10k-images-idx3-ubyte.gz",
                                           kRoot + "/data/mnist/t10k-labels-idx1-ubyte.gz", 2000));
  }
  static void TearDownTestSuite() {
    delete model_;
    delete data_;
  }
  static AttackContext Mnist() { return AttackContext{}; }
  static oracle::Classifier* model_;
  static data::ImageSet* data_;
};
oracle::Classifier* BaselinesOnMnist::model_ = nullptr;
data::ImageSet* BaselinesOnMnist::data_ = nullptr;

// Test image 1621 (a 0) is correctly classified with the smallest margin of the first 2,000
// (log p_0 - log p_6 = 0.046): targeting its runner-up class 6 is an easy instance.
TEST_F(BaselinesOnMnist, EachSucceedsOnAnEasyInstanceWithinTheDefaultBudget) {
  for (const std::string name : {"bayesopt", "bayesopt-learnd", "square", "genattack", "zoo",
                                 "autozoom", "parsimonious", "random"}) {
    const bool untargeted = name == "random";  // the floor: untargeted on test image 0
    const int idx = untargeted ? 0 : 1621;
    oracle::QueryOracle o(*model_, data_->image(idx), data_->labels[idx], untargeted ? -1 : 6, 0.3,
                          900);
    bo::Rng rng(0);
    AttackResult r = MakeAttack(name, Mnist())->Run(o, rng, nullptr);
    EXPECT_TRUE(r.success) << name;
    EXPECT_LE(r.queries, 900) << name;
    EXPECT_EQ(r.queries, o.first_success_query()) << name;
    // The reported image is classified as the goal.
    Eigen::MatrixXd lp = model_->LogProbabilities(r.adversarial.data(), 1);
    Eigen::Index arg;
    lp.row(0).maxCoeff(&arg);
    if (untargeted)
      EXPECT_NE(arg, data_->labels[idx]) << name;
    else
      EXPECT_EQ(arg, 6) << name;
  }
}

TEST_F(BaselinesOnMnist, EveryQueryOfEveryAttackRespectsTheOracleContract) {
  const int idx = 0;  // a 7, targeted at 1: hard, so every attack spends its whole budget
  const double eps = 0.3;
#ifdef ADVBO_SANITIZED
  const long budget = 60;  // the same contract, checked 5x faster under ASan + UBSan
#else
  const long budget = 300;
#endif
  for (const std::string& name : AttackNames()) {
    for (int target : {1, -1}) {
      oracle::QueryOracle o(*model_, data_->image(idx), data_->labels[idx], target, eps, budget);
      long seen = 0;
      double worst = 0;
      const std::vector<float>& x0 = o.clean();
      o.set_observer([&](const float* img, long index) {
        ++seen;
        EXPECT_EQ(index, seen);
        for (size_t k = 0; k < x0.size(); ++k) {
          worst = std::max(worst, std::abs(static_cast<double>(img[k]) - x0[k]));
          ASSERT_TRUE(img[k] >= 0.0f && img[k] <= 1.0f) << name;
        }
      });
      bo::Rng rng(1);
      AttackResult r = MakeAttack(name, Mnist())->Run(o, rng, nullptr);
      EXPECT_LE(worst, eps + 1e-6) << name;
      EXPECT_LE(o.queries(), budget) << name;
      EXPECT_EQ(seen, o.queries()) << name;
      EXPECT_LE(r.queries, budget) << name;
      if (!r.success) EXPECT_EQ(r.queries, o.queries()) << name;
      EXPECT_GE(r.model_seconds, 0.0);
      EXPECT_GE(r.seconds, r.model_seconds - 1e-9);
    }
  }
}

TEST(SquareSchedule, HalvesAtThePapersIterationsRescaledToTheBudget) {
  EXPECT_DOUBLE_EQ(SquareSchedule(0.8, 0, 10000), 0.8);
  EXPECT_DOUBLE_EQ(SquareSchedule(0.8, 11, 10000), 0.4);
  EXPECT_DOUBLE_EQ(SquareSchedule(0.8, 201, 10000), 0.1);
  EXPECT_DOUBLE_EQ(SquareSchedule(0.8, 9000, 10000), 0.8 / 512);
  // Budget 1,000: iteration 2 is the full-length run's iteration 20.
  EXPECT_DOUBLE_EQ(SquareSchedule(0.8, 2, 1000), 0.4);
}

TEST(MakeAttack, KnowsEveryNameAndRejectsOthers) {
  for (const auto& n : AttackNames()) EXPECT_EQ(MakeAttack(n, AttackContext{})->name(), n);
  EXPECT_THROW(MakeAttack("fgsm", AttackContext{}), std::invalid_argument);
}

}  // namespace
}  // namespace advbo::attacks
