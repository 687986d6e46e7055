// The baseline attacks on the shipped MNIST model: each succeeds on an easy instance within
// its default budget, and every query of every attack respects the oracle contract (inside
// the eps-ball and [0, 1], never more than the budget, every evaluated image counted).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

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
                                 "autozoom", "parsimonious", "random", "signhunter"}) {
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

// Under every threat model an attack declares (its norms, its feedback), for both goals it
// supports: every query in [0, 1] and, with score feedback, inside the ball of its norm;
// never more than the budget; every evaluated image counted.
TEST_F(BaselinesOnMnist, EveryQueryOfEveryAttackRespectsTheOracleContract) {
  const int idx = 0;  // a 7, targeted at 1: hard, so every attack spends its whole budget
#ifdef ADVBO_SANITIZED
  const long budget = 60;  // the same contract, checked 5x faster under ASan + UBSan
#else
  const long budget = 300;
#endif
  std::vector<std::string> names = AttackNames();
  names.push_back("square:resample=3");  // the noise-aware variant re-queries its incumbent
  for (const std::string& name : names) {
    const auto attack = MakeAttack(name, Mnist());
    for (oracle::Norm norm : attack->norms()) {
      const double eps = norm == oracle::Norm::kL2 ? 2.0 : 0.3;
      const bool label = attack->feedback() == oracle::Feedback::kLabel;
      for (int target : {1, -1}) {
        if ((target < 0 && !attack->supports_untargeted()) ||
            (target >= 0 && !attack->supports_targeted()))
          continue;
        const std::string what =
            name + " " + oracle::NormName(norm) + " target " + std::to_string(target);
        oracle::QueryOracle o(*model_, data_->image(idx), data_->labels[idx], target, eps, budget);
        o.set_norm(norm);
        o.set_feedback_type(attack->feedback());
        long seen = 0;
        double worst = 0;
        const std::vector<float>& x0 = o.clean();
        o.set_observer([&](const float* img, long index) {
          ++seen;
          EXPECT_EQ(index, seen);
          worst = std::max(worst, oracle::Distance(norm, img, x0.data(), x0.size()));
          for (size_t k = 0; k < x0.size(); ++k)
            ASSERT_TRUE(img[k] >= 0.0f && img[k] <= 1.0f) << what;
        });
        bo::Rng rng(1);
        AttackResult r = attack->Run(o, rng, nullptr);
        if (!label) EXPECT_LE(worst, eps + 1e-6) << what;
        EXPECT_LE(o.queries(), budget) << what;
        EXPECT_EQ(seen, o.queries()) << what;
        EXPECT_LE(r.queries, budget) << what;
        if (!r.success) EXPECT_EQ(r.queries, o.queries()) << what;
        if (r.success) EXPECT_LE(o.DistanceToClean(r.adversarial.data()), eps) << what;
        EXPECT_GE(r.model_seconds, 0.0);
        EXPECT_GE(r.seconds, r.model_seconds - 1e-9);
      }
    }
  }
}

// The hard-label attacks, untargeted on the easy instance (test image 1621, eps 0.3): each
// finds an adversarial image inside the ball from labels alone, and the closest adversarial
// query the oracle recorded is what the run reports.
TEST_F(BaselinesOnMnist, HardLabelAttacksSucceedOnAnEasyInstance) {
  for (const std::string& name : AttackNames()) {
    const auto attack = MakeAttack(name, Mnist());
    if (attack->feedback() != oracle::Feedback::kLabel) continue;
    const int idx = 1621;
    oracle::QueryOracle o(*model_, data_->image(idx), data_->labels[idx], -1, 0.3, 900);
    o.set_feedback_type(oracle::Feedback::kLabel);
    bo::Rng rng(0);
    AttackResult r = attack->Run(o, rng, nullptr);
    ASSERT_TRUE(r.success) << name;
    EXPECT_LE(o.DistanceToClean(r.adversarial.data()), 0.3) << name;
    EXPECT_EQ(r.best_objective, -o.best_distance()) << name;
    Eigen::MatrixXd lp = model_->LogProbabilities(r.adversarial.data(), 1);
    Eigen::Index arg;
    lp.row(0).maxCoeff(&arg);
    EXPECT_NE(arg, data_->labels[idx]) << name;
  }
}

// With a ball too small to reach (L_inf 0.01, L2 0.1) the hard-label attacks walk the whole
// budget towards the clean image: the closest adversarial query keeps improving (the oracle's
// distance trace falls strictly) and ends well below the first adversarial query's distance.
TEST_F(BaselinesOnMnist, HardLabelAttacksWalkTowardsTheCleanImage) {
  for (const std::string& name : AttackNames()) {
    const auto attack = MakeAttack(name, Mnist());
    if (attack->feedback() != oracle::Feedback::kLabel) continue;
    for (oracle::Norm norm : attack->norms()) {
      const std::string what = name + " " + oracle::NormName(norm);
      const double eps = norm == oracle::Norm::kL2 ? 0.1 : 0.01;
      oracle::QueryOracle o(*model_, data_->image(0), data_->labels[0], -1, eps, 300);
      o.set_norm(norm);
      o.set_feedback_type(oracle::Feedback::kLabel);
      bo::Rng rng(2);
      AttackResult r = attack->Run(o, rng, nullptr);
      EXPECT_FALSE(r.success) << what;
      EXPECT_EQ(o.queries(), 300) << what;
      const auto& trace = o.distance_trace();
      ASSERT_GE(trace.size(), 2u) << what;
      for (size_t k = 1; k < trace.size(); ++k) {
        EXPECT_GT(trace[k].first, trace[k - 1].first) << what;
        EXPECT_LT(trace[k].second, trace[k - 1].second) << what;
      }
      EXPECT_LT(trace.back().second, 0.7 * trace.front().second) << what;
      EXPECT_EQ(o.DistanceToClean(r.adversarial.data()), trace.back().second) << what;
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
  // Square's settings: the whole spec is the name in records; bad settings are errors.
  EXPECT_EQ(MakeAttack("square:p_init=0.3,resample=4", AttackContext{})->name(),
            "square:p_init=0.3,resample=4");
  for (const char* bad : {"square:resample=0", "square:resample=1.5", "square:p_init=0",
                          "square:p_init=2", "square:steps=3", "square:resample", "zoo:x=1"})
    EXPECT_THROW(MakeAttack(bad, AttackContext{}), std::invalid_argument) << bad;
}

// square:resample=R re-queries the incumbent after each candidate until it has R
// evaluations (its loss is their mean): on a hard instance the query sequence is stripes,
// candidate, stripes again, candidate, stripes again (R = 3), then candidates only while no
// candidate is accepted. R = 1 (the paper's Square) never repeats an image this way.
TEST_F(BaselinesOnMnist, SquareResampleReQueriesTheIncumbentUpToRTimes) {
  for (int r : {1, 3}) {
    oracle::QueryOracle o(*model_, data_->image(0), data_->labels[0], 1, 0.05, 12);
    std::vector<std::vector<float>> seen;
    const size_t d = o.clean().size();
    o.set_observer([&](const float* img, long) { seen.emplace_back(img, img + d); });
    bo::Rng rng(4);
    MakeAttack("square:resample=" + std::to_string(r), Mnist())->Run(o, rng, nullptr);
    ASSERT_EQ(seen.size(), 12u);
    ASSERT_FALSE(o.succeeded());  // eps 0.05 on a 7 targeted at 1: nothing succeeds
    int repeats_of_first = 0;
    for (size_t q = 1; q < seen.size(); ++q) repeats_of_first += seen[q] == seen[0];
    if (r == 1) {
      EXPECT_EQ(repeats_of_first, 0);
    } else {
      EXPECT_EQ(seen[2], seen[0]);
      EXPECT_NE(seen[1], seen[0]);
      // The stripes are evaluated R = 3 times in all while they stay the incumbent, never
      // more; once a candidate replaces them they are never queried again.
      EXPECT_LE(repeats_of_first, r - 1);
      EXPECT_GE(repeats_of_first, 1);
    }
  }
}

}  // namespace
}  // namespace advbo::attacks
