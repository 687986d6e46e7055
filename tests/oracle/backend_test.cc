// The Classifier's back-end-independent parts, on in-memory back ends with known outputs:
// input normalisation, shape probing, output auto-detection, the log-softmax, and the
// oracle's contract on top of any back end (a failed call is not a query).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <memory>
#include <vector>

#include "oracle/classifier.h"
#include "oracle/oracle.h"

namespace advbo::oracle {
namespace {

// A back end given by a function; records the last input it saw.
class FnBackend : public ScoreBackend {
 public:
  using Fn = std::function<Eigen::MatrixXd(const float*, int, int, int, int)>;
  explicit FnBackend(Fn f, std::vector<float>* seen = nullptr) : f_(std::move(f)), seen_(seen) {}
  Eigen::MatrixXd Scores(const float* x, int n, int c, int h, int w,
                         const QueryContext*) const override {
    if (seen_) seen_->assign(x, x + static_cast<size_t>(n) * c * h * w);
    return f_(x, n, c, h, w);
  }
  std::string name() const override { return "fn://test"; }

 private:
  Fn f_;
  std::vector<float>* seen_;
};

// Logits of 3 classes: (sum of pixels, mean pixel, 0) per image; accepts only [1, 2, 2].
Eigen::MatrixXd Sums(const float* x, int n, int c, int h, int w) {
  if (c != 1 || h != 2 || w != 2) throw ModelError("fn://test: wants [N, 1, 2, 2]");
  Eigen::MatrixXd m(n, 3);
  for (int i = 0; i < n; ++i) {
    double s = 0;
    for (int p = 0; p < 4; ++p) s += x[i * 4 + p];
    m.row(i) << s, s / 4, 0;
  }
  return m;
}

ClassifierOptions Shape1x2x2() {
  ClassifierOptions o;
  o.channels = 1;
  o.height = 2;
  o.width = 2;
  return o;
}

TEST(Normalization, ParsesOneOrPerChannelValuesAndRoundTrips) {
  Normalization a = Normalization::Parse("0.1307:0.3081");
  ASSERT_EQ(a.mean.size(), 1u);
  EXPECT_FLOAT_EQ(a.mean[0], 0.1307f);
  EXPECT_FLOAT_EQ(a.std[0], 0.3081f);
  Normalization b = Normalization::Parse("0.4914,0.4822,0.4465:0.247,0.2435,0.2616");
  ASSERT_EQ(b.mean.size(), 3u);
  EXPECT_FLOAT_EQ(b.std[2], 0.2616f);
  Normalization c = Normalization::Parse(b.Spec());
  EXPECT_EQ(c.mean, b.mean);
  EXPECT_EQ(c.std, b.std);
}

TEST(Normalization, RefusesMalformedSpecs) {
  for (const char* bad : {"", "0.5", "0.5:", ":0.5", "0.5:0", "0.5:-1", "a:1", "0.5:1:2",
                          "0.1,0.2:0.3", "0.5:nan", "0.5:1,", "0.5x:1"})
    EXPECT_THROW(Normalization::Parse(bad), std::invalid_argument) << bad;
}

TEST(Classifier, ProbesTheShapeTheBackendAccepts) {
  auto clf = Classifier::FromBackend(std::make_unique<FnBackend>(Sums), Shape1x2x2());
  EXPECT_EQ(clf->num_classes(), 3);
  EXPECT_TRUE(clf->outputs_logits());
  EXPECT_EQ(clf->path(), "fn://test");
  // None of the default probe shapes fits: the message names the back end and the reason.
  try {
    Classifier::FromBackend(std::make_unique<FnBackend>(Sums));
    FAIL();
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("fn://test: the model rejects input"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("wants [N, 1, 2, 2]"), std::string::npos);
  }
}

TEST(Classifier, LogSoftmaxOfLogitsMatchesTheClosedForm) {
  auto clf = Classifier::FromBackend(std::make_unique<FnBackend>(Sums), Shape1x2x2());
  std::vector<float> x = {0.1f, 0.2f, 0.3f, 0.4f};
  Eigen::MatrixXd lp = clf->LogProbabilities(x.data(), 1);
  // logits (sum, mean, 0) of the float pixels, summed in double as Sums does
  const double s = double(x[0]) + x[1] + x[2] + x[3], m = s / 4;
  const double z = std::log(std::exp(s) + std::exp(m) + 1.0);
  EXPECT_NEAR(lp(0, 0), s - z, 1e-12);
  EXPECT_NEAR(lp(0, 1), m - z, 1e-12);
  EXPECT_NEAR(lp(0, 2), -z, 1e-12);
}

TEST(Classifier, DetectsProbabilitiesAndRenormalises) {
  auto probs = [](const float*, int n, int, int, int) {
    Eigen::MatrixXd m(n, 2);
    for (int i = 0; i < n; ++i) m.row(i) << 0.25, 0.75;
    return m;
  };
  auto clf = Classifier::FromBackend(std::make_unique<FnBackend>(probs), Shape1x2x2());
  EXPECT_FALSE(clf->outputs_logits());
  std::vector<float> x(4, 0.5f);
  Eigen::MatrixXd lp = clf->LogProbabilities(x.data(), 1);
  EXPECT_NEAR(lp(0, 0), std::log(0.25), 1e-12);
  EXPECT_NEAR(lp(0, 1), std::log(0.75), 1e-12);
  ClassifierOptions forced = Shape1x2x2();
  forced.output = OutputKind::kLogits;
  EXPECT_TRUE(
      Classifier::FromBackend(std::make_unique<FnBackend>(probs), forced)->outputs_logits());
}

// The output format is reported as detected; probabilities said of a model that returns
// something else are refused (at the probe and at any later negative score), and exact-zero
// probabilities are counted.
TEST(Classifier, ReportsTheOutputFormatAndRefusesFalseProbabilities) {
  EXPECT_EQ(
      Classifier::FromBackend(std::make_unique<FnBackend>(Sums), Shape1x2x2())->output_format(),
      "logits");
  auto log_probs = [](const float*, int n, int, int, int) {
    Eigen::MatrixXd m(n, 2);
    for (int i = 0; i < n; ++i) m.row(i) << std::log(0.25), std::log(0.75);
    return m;
  };
  auto lp_clf = Classifier::FromBackend(std::make_unique<FnBackend>(log_probs), Shape1x2x2());
  EXPECT_EQ(lp_clf->output_format(), "log_probabilities");
  EXPECT_TRUE(lp_clf->outputs_logits());  // log-softmax of log-probabilities is themselves
  std::vector<float> x(4, 0.5f);
  EXPECT_NEAR(lp_clf->LogProbabilities(x.data(), 1)(0, 0), std::log(0.25), 1e-12);
  // --output probs on logits: refused at the probe, naming the option.
  ClassifierOptions probs_opt = Shape1x2x2();
  probs_opt.output = OutputKind::kProbabilities;
  try {
    Classifier::FromBackend(std::make_unique<FnBackend>(Sums), probs_opt);
    FAIL();
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("not (smallest"), std::string::npos) << e.what();
  }
  // A probability model that later answers a negative score, and one with exact zeros.
  int call = 0;
  auto drifting = [&call](const float*, int n, int, int, int) {
    Eigen::MatrixXd m(n, 2);
    for (int i = 0; i < n; ++i)
      if (call == 0)
        m.row(i) << 0.5, 0.5;
      else if (call == 1)
        m.row(i) << 0.0, 1.0;
      else
        m.row(i) << -0.5, 1.5;
    ++call;
    return m;
  };
  auto p_clf = Classifier::FromBackend(std::make_unique<FnBackend>(drifting), probs_opt);
  EXPECT_EQ(p_clf->output_format(), "probabilities");
  EXPECT_EQ(p_clf->zero_probability_rows(), 0);
  p_clf->LogProbabilities(x.data(), 1);
  EXPECT_EQ(p_clf->zero_probability_rows(), 1);
  EXPECT_THROW(p_clf->LogProbabilities(x.data(), 1), ModelError);
}

TEST(Classifier, NormalisationIsAppliedToACopyBeforeTheBackend) {
  std::vector<float> seen;
  ClassifierOptions o;
  o.channels = 3;
  o.height = 1;
  o.width = 2;
  o.normalize = Normalization::Parse("0.5,0.25,0:0.5,0.25,2");
  auto any = [](const float*, int n, int, int, int) { return Eigen::MatrixXd::Zero(n, 2).eval(); };
  auto clf = Classifier::FromBackend(std::make_unique<FnBackend>(any, &seen), o);
  std::vector<float> x = {0.0f, 1.0f, 0.25f, 0.5f, 1.0f, 0.5f};  // [1, 3, 1, 2]
  const std::vector<float> before = x;
  clf->LogProbabilities(x.data(), 1);
  const std::vector<float> want = {-1.0f, 1.0f, 0.0f, 1.0f, 0.5f, 0.25f};
  ASSERT_EQ(seen.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_FLOAT_EQ(seen[i], want[i]) << i;
  EXPECT_EQ(x, before);  // the caller's pixels stay in [0, 1], untouched
  // One value per statistic applies to every channel; 2 values for 3 channels is refused.
  ClassifierOptions bad = o;
  bad.normalize = Normalization::Parse("0.5,0.5:1,1");
  EXPECT_THROW(Classifier::FromBackend(std::make_unique<FnBackend>(any), bad),
               std::invalid_argument);
}

TEST(Classifier, RefusesNonFiniteOrReshapedOutputs) {
  int calls = 0;
  auto flaky = [&calls](const float* x, int n, int c, int h, int w) {
    Eigen::MatrixXd m = Sums(x, n, c, h, w);
    ++calls;
    if (calls == 2) m(0, 0) = NAN;
    if (calls == 3) return Eigen::MatrixXd(m.leftCols(2));
    return m;
  };
  auto clf = Classifier::FromBackend(std::make_unique<FnBackend>(flaky), Shape1x2x2());
  std::vector<float> x(4, 0.5f);
  EXPECT_THROW(clf->LogProbabilities(x.data(), 1), ModelError);  // NaN
  EXPECT_THROW(clf->LogProbabilities(x.data(), 1), ModelError);  // 2 classes instead of 3
  EXPECT_NO_THROW(clf->LogProbabilities(x.data(), 1));
}

TEST(Oracle, AFailedBackendCallIsNotAQuery) {
  bool fail = false;
  auto sometimes = [&fail](const float* x, int n, int c, int h, int w) {
    if (fail) throw TransportError("fn://test: unreachable");
    return Sums(x, n, c, h, w);
  };
  auto clf = Classifier::FromBackend(std::make_unique<FnBackend>(sometimes), Shape1x2x2());
  std::vector<float> clean(4, 0.5f), q(8, 0.6f);
  Referee orc(*clf, clean.data(), 2, 0, 0.3, 10);
  orc.Query(q.data(), 2);
  EXPECT_EQ(orc.queries(), 2);
  fail = true;
  EXPECT_THROW(orc.Query(q.data(), 2), TransportError);
  EXPECT_EQ(orc.queries(), 2);
  EXPECT_EQ(orc.remaining(), 8);
}

TEST(Oracle, ScoreBatchEqualsTheOraclesObjective) {
  auto clf = Classifier::FromBackend(std::make_unique<FnBackend>(Sums), Shape1x2x2());
  std::vector<float> clean(4, 0.2f), q = {0.1f, 0.2f, 0.3f, 0.4f, 0.4f, 0.4f, 0.4f, 0.4f};
  for (int target : {-1, 0, 1}) {
    Referee orc(*clf, clean.data(), 2, target, 0.3, 10);
    std::vector<float> copy = q;
    QueryResult a = orc.Query(copy.data(), 2);
    QueryResult b = ScoreBatch(clf->LogProbabilities(copy.data(), 2), 2, target);
    EXPECT_EQ(a.objective, b.objective);
    EXPECT_EQ(a.predicted, b.predicted);
    EXPECT_EQ(a.success, b.success);
  }
}

}  // namespace
}  // namespace advbo::oracle
