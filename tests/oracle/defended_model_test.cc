// The defense chain as model wrappers (oracle/defended_model.h): each stage
// acts in its place in the chain (a detector sees the images as sent, an input stage a copy,
// an output stage the classifier's log-probabilities, a refusal is flat and never a
// success, a learner gets every answer scored for the goal), and the referee (Referee)
// takes only a chain that ends in its own classifier.
#include "oracle/defended_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <stdexcept>
#include <vector>

#include "oracle/oracle.h"

namespace advbo::oracle {
namespace {

// Three classes over 4-pixel images: logits (0, 10 * mean, 5); class 1 wins for a mean above
// 0.5, class 2 below. Records every batch it scores.
class MeanBackend : public ScoreBackend {
 public:
  explicit MeanBackend(std::vector<std::vector<float>>* seen) : seen_(seen) {}
  Eigen::MatrixXd Scores(const float* x, int n, int, int, int, const QueryContext*) const override {
    seen_->emplace_back(x, x + 4 * n);
    Eigen::MatrixXd m(n, 3);
    for (int i = 0; i < n; ++i) {
      double s = 0;
      for (int p = 0; p < 4; ++p) s += x[4 * i + p];
      m.row(i) << 0, 10 * s / 4, 5;
    }
    return m;
  }
  std::string name() const override { return "fake://mean"; }

 private:
  std::vector<std::vector<float>>* seen_;
};

std::unique_ptr<Classifier> MeanModel(std::vector<std::vector<float>>* seen) {
  ClassifierOptions o;
  o.channels = 1;
  o.height = o.width = 2;
  o.output = OutputKind::kLogits;
  o.probe = false;
  o.classes = 3;
  return Classifier::FromBackend(std::make_unique<MeanBackend>(seen), o);
}

// A back end with a defense of its own (a served detector): it refuses image 0 of every
// batch and flags both.
class RefusingBackend : public MeanBackend {
 public:
  using MeanBackend::MeanBackend;
  BackendAnswer Answer(const float* x, int n, int c, int h, int w,
                       const QueryContext* ctx) const override {
    BackendAnswer a{Scores(x, n, c, h, w, ctx), std::vector<bool>(n, true),
                    std::vector<bool>(n, false)};
    a.refused[0] = true;
    return a;
  }
};

// A served detector's verdicts reach the chain as a local detector's: the refused row is
// flat and marked, the detections counted (first at image 1); a local rejecting detector in
// front keeps the inner refusal and adds its own.
TEST(DefendedModel, AServedDetectorsRefusalsAreHandedOnLikeALocalOnes) {
  std::vector<std::vector<float>> seen;
  ClassifierOptions o;
  o.channels = 1;
  o.height = o.width = 2;
  o.output = OutputKind::kLogits;
  o.probe = false;
  o.classes = 3;
  auto model = Classifier::FromBackend(std::make_unique<RefusingBackend>(&seen), o);
  const std::vector<float> x = {0.9f, 0.9f, 0.9f, 0.9f, 0.1f, 0.1f, 0.1f, 0.1f};
  auto plain = Undefended(*model);
  const DefendedAnswer a = plain->Evaluate(x.data(), 2, nullptr);
  EXPECT_EQ(a.refused, std::vector<bool>({true, false}));
  for (int c = 0; c < 3; ++c) EXPECT_DOUBLE_EQ(a.log_probs(0, c), -std::log(3.0));
  EXPECT_TRUE(plain->detector().monitored);
  EXPECT_EQ(plain->detector().detections, 2);
  EXPECT_EQ(plain->detector().first_detection, 1);
  auto both = WithDetector(
      Undefended(*model),
      [](const float*, int) {
        return std::vector<bool>{false, true};
      },
      /*reject=*/true);
  EXPECT_EQ(both->Evaluate(x.data(), 2, nullptr).refused, std::vector<bool>({true, true}));
  EXPECT_THROW(model->LogProbabilities(x.data(), 2), RefusedError);
}

TEST(DefendedModel, StagesActInChainOrderAndLeaveTheAttackersImagesAlone) {
  std::vector<std::vector<float>> seen;
  auto model = MeanModel(&seen);
  std::vector<std::vector<float>> monitored;
  std::vector<QueryResult> learned;
  auto chain = WithLearner(
      WithDetector(
          WithOutputStage(WithInputStage(Undefended(*model),
                                         [](float* x, int n) {
                                           for (int i = 0; i < 4 * n; ++i) x[i] = 1.0f - x[i];
                                         }),
                          [](Eigen::MatrixXd* lp) { lp->col(0).array() += 100; }),
          [&](const float* x, int n) {
            monitored.emplace_back(x, x + 4 * n);
            return std::vector<bool>{false, true};
          },
          /*reject=*/true),
      [&](const QueryResult& r) { learned.push_back(r); }, /*true_class=*/2, /*target=*/-1);
  const std::vector<float> x = {0.9f, 0.9f, 0.9f, 0.9f, 0.1f, 0.1f, 0.1f, 0.1f};
  const DefendedAnswer a = chain->Evaluate(x.data(), 2, nullptr);
  // The detector saw the images as sent; the classifier their inverted copy.
  ASSERT_EQ(monitored.size(), 1u);
  EXPECT_EQ(monitored[0], x);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_NEAR(seen[0][0], 0.1f, 1e-7);
  EXPECT_NEAR(seen[0][4], 0.9f, 1e-7);
  EXPECT_EQ(x[0], 0.9f);  // the caller's images are untouched
  // Row 0: the output stage made class 0 win; row 1 refused: flat.
  Eigen::Index arg;
  a.log_probs.row(0).maxCoeff(&arg);
  EXPECT_EQ(arg, 0);
  for (int c = 0; c < 3; ++c) EXPECT_DOUBLE_EQ(a.log_probs(1, c), -std::log(3.0));
  ASSERT_EQ(a.refused.size(), 2u);
  EXPECT_FALSE(a.refused[0]);
  EXPECT_TRUE(a.refused[1]);
  // The learner scored the answers the attacker gets, for the goal (true class 2).
  ASSERT_EQ(learned.size(), 1u);
  EXPECT_TRUE(learned[0].success[0]);
  EXPECT_NEAR(learned[0].objective(1), 0.0, 1e-12);  // flat: no margin either way
  const DetectorCounts counts = chain->detector();
  EXPECT_TRUE(counts.monitored);
  EXPECT_EQ(counts.detections, 1);
  EXPECT_EQ(counts.first_detection, 2);
  EXPECT_EQ(&chain->classifier(), model.get());
}

TEST(DefendedModel, TheRefereeCountsRefusalsAndTakesOnlyItsOwnClassifiersChain) {
  std::vector<std::vector<float>> seen, other_seen;
  auto model = MeanModel(&seen);
  auto other = MeanModel(&other_seen);
  const std::vector<float> clean = {0.2f, 0.2f, 0.2f, 0.2f};  // class 2
  Referee orc(*model, clean.data(), 2, -1, 1.0, 10);
  EXPECT_THROW(orc.set_defense(Undefended(*other)), std::invalid_argument);
  EXPECT_THROW(orc.set_defense(nullptr), std::invalid_argument);
  EXPECT_FALSE(orc.detector().monitored);
  long calls = 0;
  orc.set_defense(WithDetector(
      Undefended(*model), [&](const float*, int n) { return std::vector<bool>(n, ++calls == 1); },
      true));
  std::vector<float> bright = {0.9f, 0.9f, 0.9f, 0.9f};
  QueryResult r = orc.Query(bright.data(), 1);  // refused: flat, no success
  EXPECT_TRUE(r.rejected[0]);
  EXPECT_FALSE(r.success[0]);
  EXPECT_FALSE(orc.succeeded());
  r = orc.Query(bright.data(), 1);  // answered: class 1, a success at query 2
  EXPECT_TRUE(r.rejected.empty() || !r.rejected[0]);
  EXPECT_TRUE(r.success[0]);
  EXPECT_EQ(orc.first_success_query(), 2);
  EXPECT_EQ(orc.detector().detections, 1);
  EXPECT_EQ(orc.detector().first_detection, 1);
  EXPECT_THROW(orc.set_defense(Undefended(*model)), std::logic_error);  // after a query
  EXPECT_TRUE(other_seen.empty());
}

}  // namespace
}  // namespace advbo::oracle
