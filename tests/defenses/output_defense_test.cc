// Output post-processing defenses (round, topk, AAA-linear), the adaptive attacks' oracle
// side (EOT samples, AAA inversion) and their specs.
#include "defenses/output_defense.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "attacks/adaptive/adaptive.h"
#include "attacks/attack.h"
#include "defenses/defense.h"
#include "oracle/classifier.h"
#include "oracle/oracle.h"

namespace advbo::defenses {
namespace {

// Rows of random log-probabilities [n, classes] (logits of spread `scale`).
Eigen::MatrixXd RandomLogProbs(int n, int classes, double scale, uint32_t seed) {
  std::mt19937 g(seed);
  std::normal_distribution<double> z(0, scale);
  Eigen::MatrixXd lp(n, classes);
  for (int i = 0; i < n; ++i) {
    for (int c = 0; c < classes; ++c) lp(i, c) = z(g);
    const double mx = lp.row(i).maxCoeff();
    lp.row(i).array() -= mx + std::log((lp.row(i).array() - mx).exp().sum());
  }
  return lp;
}

// Top-1 and top-2 classes of a row.
std::pair<Eigen::Index, Eigen::Index> Top2(const Eigen::RowVectorXd& r) {
  Eigen::Index a = 0;
  r.maxCoeff(&a);
  Eigen::Index b = a == 0 ? 1 : 0;
  for (Eigen::Index c = 0; c < r.size(); ++c)
    if (c != a && r(c) > r(b)) b = c;
  return {a, b};
}

Eigen::MatrixXd Apply(const std::string& spec, Eigen::MatrixXd lp) {
  bo::Rng rng(0);
  ParseDefense(spec).ApplyOutput(&lp, rng);
  return lp;
}

TEST(OutputDefense, SpecsDefaultsAndErrors) {
  EXPECT_EQ(ParseDefense("round").Spec(), "round:decimals=2");
  EXPECT_EQ(ParseDefense("topk").Spec(), "topk:k=1");
  EXPECT_EQ(ParseDefense("aaa").Spec(), "aaa:interval=4,reverse=1,temperature=1");
  // Output stages run after the input stages wherever they stand.
  EXPECT_EQ(ParseDefense("aaa:interval=2+jpeg").Spec(),
            "jpeg:quality=75+aaa:interval=2,reverse=1,temperature=1");
  EXPECT_TRUE(ParseDefense("round").has_output());
  EXPECT_FALSE(ParseDefense("round").has_input());
  for (const char* bad : {"round:decimals=0", "round:decimals=9", "round:decimals=1.5", "topk:k=0",
                          "aaa:interval=0", "aaa:reverse=1.5", "aaa:reverse=-1",
                          "aaa:temperature=0", "aaa:foo=1", "round:k=2", "topk:k=x"})
    EXPECT_THROW(ParseDefense(bad), std::invalid_argument) << bad;
}

TEST(OutputDefense, RoundReportsRoundedProbabilitiesAndKeepsTheArgmax) {
  const Eigen::MatrixXd lp = RandomLogProbs(50, 10, 3.0, 1);
  const Eigen::MatrixXd out = Apply("round:decimals=2", lp);
  for (int i = 0; i < lp.rows(); ++i) {
    ASSERT_NEAR(out.row(i).array().exp().sum(), 1.0, 1e-12);
    // Reported ratios are those of the rounded probabilities (zeros at half a step).
    Eigen::RowVectorXd want = lp.row(i).array().exp();
    for (int c = 0; c < 10; ++c) want(c) = std::max(std::round(want(c) * 100) / 100, 0.005);
    want /= want.sum();
    for (int c = 0; c < 10; ++c) EXPECT_NEAR(std::exp(out(i, c)), want(c), 1e-12);
    EXPECT_EQ(Top2(out.row(i)).first, Top2(lp.row(i)).first) << i;
  }
}

TEST(OutputDefense, TopKKeepsTheTopKExactlyAndFlattensTheRest) {
  const Eigen::MatrixXd lp = RandomLogProbs(50, 10, 2.0, 2);
  const Eigen::MatrixXd out = Apply("topk:k=3", lp);
  for (int i = 0; i < lp.rows(); ++i) {
    std::vector<int> order(10);
    for (int c = 0; c < 10; ++c) order[c] = c;
    std::sort(order.begin(), order.end(), [&](int a, int b) { return lp(i, a) > lp(i, b); });
    double top = 0;
    for (int r = 0; r < 3; ++r) top += std::exp(lp(i, order[r]));
    for (int r = 0; r < 3; ++r) EXPECT_NEAR(out(i, order[r]), lp(i, order[r]), 1e-12);
    for (int r = 3; r < 10; ++r) EXPECT_NEAR(std::exp(out(i, order[r])), (1 - top) / 7, 1e-12);
  }
}

// AAA-linear (Chen et al. 2022): the reported top-2 margin is the attractor map of the
// model's, the top-1 probability is the calibrated one, and the prediction never changes.
TEST(OutputDefense, AaaReportsTheAttractorMarginWithTheCalibratedTopProbability) {
  const Eigen::MatrixXd lp = RandomLogProbs(200, 10, 4.0, 3);
  const Eigen::MatrixXd out = Apply("aaa:interval=3,reverse=1,temperature=1", lp);
  int feasible = 0;
  for (int i = 0; i < lp.rows(); ++i) {
    const auto [a, b] = Top2(lp.row(i));
    const auto [a2, b2] = Top2(out.row(i));
    ASSERT_EQ(a2, a) << "prediction changed in row " << i;
    const double m = lp(i, a) - lp(i, b);
    // AAA-linear's target margin (Chen et al. 2022, Sec. 4.2) in closed form: the attractor
    // at the centre of m's interval of width 3, m's offset from it reversed (alpha = 1).
    const double attractor = 3 * (std::floor(m / 3) + 0.5);
    const double t = attractor - (m - attractor);
    EXPECT_NEAR(AaaTargetMargin(m, 3, 1), t, 1e-12) << i;
    EXPECT_NEAR(out(i, a2) - out(i, b2), t, 1e-9) << i;
    EXPECT_TRUE(out.row(i).allFinite());
    EXPECT_NEAR(out.row(i).array().exp().sum(), 1.0, 1e-9);
    // With margin t the top-1 probability can be anything in (e^t / (e^t + 9),
    // e^t / (e^t + 1)) (the other nine logits at the runner-up's, or far below it); inside
    // that range it is the model's own (temperature 1), at its ends the nearest end.
    const double p_star = std::exp(lp(i, a));
    const double lo = std::exp(t) / (std::exp(t) + 9), hi = std::exp(t) / (std::exp(t) + 1);
    const double p_out = std::exp(out(i, a));
    EXPECT_GE(p_out, lo - 1e-9) << i;
    EXPECT_LE(p_out, hi + 1e-9) << i;
    if (p_star > lo + 1e-3 && p_star < hi - 1e-3) {
      EXPECT_NEAR(p_out, p_star, 1e-6) << i;
      ++feasible;
    }
  }
  EXPECT_GT(feasible, 40);  // the test exercises the calibrated case too
  // Inside each interval the trend is reversed: a larger margin is reported smaller.
  EXPECT_GT(AaaTargetMargin(0.5, 3, 1), AaaTargetMargin(2.5, 3, 1));
  EXPECT_NEAR(AaaTargetMargin(1.5, 3, 1), 1.5, 1e-12);  // the attractor is a fixed point
  EXPECT_NEAR(AaaTargetMargin(0.0, 3, 1), 3.0, 1e-12);
}

TEST(OutputDefense, AaaAdaptiveInversionRecoversTheModelsMargin) {
  for (double alpha : {1.0, 0.5, 0.2})
    for (double tau : {4.0, 0.7})
      for (double m = 0.013; m < 20; m += 0.0917) {
        const double t = AaaTargetMargin(m, tau, alpha);
        ASSERT_GT(t, 0);
        EXPECT_NEAR(attacks::AaaTrueMargin(t, tau, alpha), m, 1e-9)
            << "m " << m << " tau " << tau << " alpha " << alpha;
      }
  EXPECT_THROW(attacks::AaaTrueMargin(1, 4, 0), std::invalid_argument);
}

// A model whose logits are a fixed linear map of the image mean: deterministic, so EOT
// over a randomised defense can be checked against the mean of independent samples.
class MeanBackend : public oracle::ScoreBackend {
 public:
  explicit MeanBackend(long* calls) : calls_(calls) {}
  Eigen::MatrixXd Scores(const float* x, int n, int c, int h, int w,
                         const oracle::QueryContext*) const override {
    const int d = c * h * w;
    Eigen::MatrixXd out(n, 3);
    for (int b = 0; b < n; ++b) {
      double s = 0;
      for (int p = 0; p < d; ++p) s += x[b * d + p];
      s /= d;
      out.row(b) << 4 * s, 2 - 4 * s, 0.5;
    }
    *calls_ += n;
    return out;
  }
  std::string name() const override { return "mean"; }

 private:
  long* calls_;
};

std::unique_ptr<oracle::Classifier> MeanModel(long* calls) {
  oracle::ClassifierOptions o;
  o.channels = 1;
  o.height = o.width = 4;
  o.output = oracle::OutputKind::kLogits;
  o.probe = false;
  o.classes = 3;
  return oracle::Classifier::FromBackend(std::make_unique<MeanBackend>(calls), o);
}

TEST(Eot, EveryQueryIsKCountedSamplesAveragedInProbability) {
  long calls = 0;
  auto model = MeanModel(&calls);
  std::vector<float> clean(16, 0.5f);
  const DefensePipeline noise = ParseDefense("noise:sigma=0.3");
  auto run = [&](int k, std::vector<float> x, bo::Rng* defense_rng) {
    oracle::Referee orc(*model, clean.data(), 0, -1, 0.3, 20);
    orc.set_defense(oracle::WithInputStage(oracle::Undefended(*model), [&](float* im, int n) {
      noise.Apply(im, n, 1, 4, 4, *defense_rng);
    }));
    attacks::EotOracle view(orc, k);
    EXPECT_EQ(view.budget(), 20 / k);
    EXPECT_EQ(view.stride(), k);
    const oracle::QueryResult r = view.Query(x.data(), 1);
    EXPECT_EQ(view.queries(), 1);
    EXPECT_EQ(orc.model_queries(), k);
    return r;
  };
  std::vector<float> x(16, 0.6f);
  calls = 0;
  bo::Rng r1(7);
  const oracle::QueryResult eot = run(5, x, &r1);
  EXPECT_EQ(calls, 5);  // every sample reached the model
  // The same 5 noise draws, one query each, averaged by hand.
  bo::Rng r2(7);
  Eigen::RowVectorXd mean = Eigen::RowVectorXd::Zero(3);
  for (int s = 0; s < 5; ++s) mean += run(1, x, &r2).log_probs.row(0).array().exp().matrix();
  mean /= 5;
  for (int c = 0; c < 3; ++c) EXPECT_NEAR(std::exp(eot.log_probs(0, c)), mean(c), 1e-12);
  // Budget: 20 model evaluations = 4 EOT queries of 5; a fifth is refused whole.
  oracle::Referee orc(*model, clean.data(), 0, -1, 0.3, 20);
  attacks::EotOracle five(orc, 5);
  std::vector<float> four(64, 0.6f);
  calls = 0;
  five.Query(four.data(), 4);
  EXPECT_EQ(calls, 20);
  EXPECT_THROW(five.Query(x.data(), 1), oracle::BudgetExhausted);
  EXPECT_EQ(calls, 20);
  oracle::Referee small(*model, clean.data(), 0, -1, 0.3, 3);
  EXPECT_THROW(attacks::EotOracle(small, 4), std::invalid_argument);  // k > budget
  // Nested: 2 x 3 samples per query, the mean of the means of the same 6 draws.
  bo::Rng r3(7);
  oracle::Referee nested(*model, clean.data(), 0, -1, 0.3, 60);
  nested.set_defense(oracle::WithInputStage(
      oracle::Undefended(*model), [&](float* im, int n) { noise.Apply(im, n, 1, 4, 4, r3); }));
  attacks::EotOracle outer(nested, 2);
  attacks::EotOracle inner(outer, 3);
  EXPECT_EQ(inner.stride(), 6);
  EXPECT_EQ(inner.budget(), 10);
  std::vector<float> y = x;
  const oracle::QueryResult six = inner.Query(y.data(), 1);
  EXPECT_EQ(nested.model_queries(), 6);
  EXPECT_EQ(inner.queries(), 1);
  bo::Rng r4(7);
  Eigen::RowVectorXd mean6 = Eigen::RowVectorXd::Zero(3);
  for (int s = 0; s < 6; ++s) mean6 += run(1, x, &r4).log_probs.row(0).array().exp().matrix();
  mean6 /= 6;
  for (int c = 0; c < 3; ++c) EXPECT_NEAR(std::exp(six.log_probs(0, c)), mean6(c), 1e-12);
}

TEST(Eot, WrapperSpecsParseAndCountEverySampleInTheAttacksView) {
  const attacks::AttackContext ctx;
  EXPECT_EQ(attacks::MakeAttack("eot:k=4/square", ctx)->name(), "eot:k=4/square");
  EXPECT_EQ(attacks::MakeAttack("eot:k=2/aaa-adaptive:interval=4,reverse=1/random", ctx)->name(),
            "eot:k=2/aaa-adaptive:interval=4,reverse=1/random");
  // Query-level wrappers (oars, confirm) come after the evaluation-level ones.
  EXPECT_EQ(attacks::MakeAttack("eot:k=2/oars/confirm/square", ctx)->name(),
            "eot:k=2/oars/confirm/square");
  try {
    attacks::MakeAttack("oars/eot:k=2/confirm/aaa-adaptive:interval=4/square", ctx);
    ADD_FAILURE() << "a query-level wrapper outside eot was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(
        std::string(e.what()).find("write 'eot:k=2/aaa-adaptive:interval=4/oars/confirm/square'"),
        std::string::npos)
        << e.what();
  }
  for (const char* bad : {"eot:k=0/square", "eot:k=2", "eot:k=2/", "eot:j=2/square",
                          "aaa-adaptive:reverse=0/square", "eot:k=2/nosuch", "eot:k=1.5/square"})
    EXPECT_THROW(attacks::MakeAttack(bad, ctx), std::invalid_argument) << bad;
  // Random search through EOT with k = 3 on a budget of 30 model evaluations: 10 queries.
  long calls = 0;
  auto model = MeanModel(&calls);
  std::vector<float> clean(16, 0.5f);
  oracle::Referee orc(*model, clean.data(), 0, -1, 0.05, 30);  // never fooled
  bo::Rng rng(1);
  const auto atk = attacks::MakeAttack("eot:k=3/random", ctx);
  const attacks::AttackResult r = atk->Run(orc, rng, nullptr);
  EXPECT_EQ(orc.queries(), 30);  // the referee counts model evaluations
  EXPECT_EQ(r.queries, 30);      // and so does the result, in the units of the oracle given
  EXPECT_EQ(calls, 30);
  EXPECT_EQ(r.details["eot_samples"], 3);
}

// confirm:n=N (attacks::ConfirmingOracle, a view of the referee): a success counts only after N
// more counted queries of the same image all succeed; a refuted one is no success, and the attack
// is told the mean objective of the evaluations.
TEST(Confirm, ASuccessCountsOnlyWhenNFreshDrawsConfirmIt) {
  long calls = 0;
  auto model = MeanModel(&calls);
  std::vector<float> clean(16, 0.5f);
  const std::vector<float> adv(16, 0.2f);  // mean 0.2: class 1 (logit 1.2) beats class 0 (0.8)
  {  // A deterministic model: confirmed, the success is the last confirming query.
    oracle::Referee orc(*model, clean.data(), 0, -1, 0.3, 10);
    attacks::ConfirmingOracle view(orc, 2);
    std::vector<float> x = adv;
    calls = 0;
    const oracle::QueryResult r = view.Query(x.data(), 1);
    EXPECT_TRUE(r.success[0]);
    EXPECT_EQ(calls, 3);
    EXPECT_EQ(orc.queries(), 3);
    EXPECT_EQ(view.queries(), 3);  // a view counts in the referee's units
    EXPECT_EQ(orc.first_success_query(), 3);
    EXPECT_EQ(view.confirmation_queries(), 2);
    EXPECT_EQ(orc.success_image(), adv);
    // Nested: the outer confirmation asks the inner view, which claims only when asked for
    // real: 1 + 2 (inner) and then 2 more queries each confirmed twice.
    oracle::Referee twice(*model, clean.data(), 0, -1, 0.3, 20);
    attacks::ConfirmingOracle inner(twice, 2);
    attacks::ConfirmingOracle outer(inner, 1);
    std::vector<float> z = adv;
    EXPECT_TRUE(outer.Query(z.data(), 1).success[0]);
    EXPECT_EQ(twice.queries(), 6);
    EXPECT_EQ(twice.first_success_query(), 6);
  }
  {  // A defense whose every second answer is clean-looking: the success is refuted.
    oracle::Referee orc(*model, clean.data(), 0, -1, 0.3, 10);
    long seen = 0;
    orc.set_defense(oracle::WithInputStage(oracle::Undefended(*model), [&](float* im, int n) {
      for (int b = 0; b < n; ++b, ++seen)
        if (seen % 2 == 1)
          for (int p = 0; p < 16; ++p) im[b * 16 + p] += 0.3f;  // mean 0.5: class 0
    }));
    attacks::ConfirmingOracle view(orc, 2);
    std::vector<float> x = adv;
    const oracle::QueryResult r = view.Query(x.data(), 1);
    EXPECT_FALSE(r.success[0]);
    EXPECT_FALSE(orc.succeeded());
    EXPECT_EQ(orc.queries(), 2);  // stopped at the first failed confirmation
    EXPECT_EQ(view.refuted_successes(), 1);
    // Objectives max_{c != 0} z_c - z_0: s = 0.2: 1.2 - 0.8 = 0.4; s = 0.5: 0.5 - 2 = -1.5.
    EXPECT_NEAR(r.objective(0), (0.4 - 1.5) / 2, 1e-6);
    // Without confirmations the first lucky draw is the success.
    oracle::Referee plain(*model, clean.data(), 0, -1, 0.3, 10);
    std::vector<float> y = adv;
    EXPECT_TRUE(plain.Query(y.data(), 1).success[0]);
    EXPECT_EQ(plain.first_success_query(), 1);
  }
  oracle::Referee orc(*model, clean.data(), 0, -1, 0.3, 10);
  EXPECT_THROW(attacks::ConfirmingOracle(orc, 0), std::invalid_argument);
  {  // Label feedback: a refuted success is not adversarial to the attack either.
    oracle::Referee label(*model, clean.data(), 0, -1, 0.3, 10);
    label.set_feedback_type(oracle::Feedback::kLabel);
    long seen = 0;
    label.set_defense(oracle::WithInputStage(oracle::Undefended(*model), [&](float* im, int n) {
      for (int b = 0; b < n; ++b, ++seen)
        if (seen % 2 == 1)
          for (int p = 0; p < 16; ++p) im[b * 16 + p] += 0.3f;
    }));
    attacks::ConfirmingOracle view(label, 2);
    std::vector<float> x = adv;
    const oracle::QueryResult r = view.Query(x.data(), 1);
    EXPECT_FALSE(r.success[0]);
    EXPECT_FALSE(r.adversarial[0]);
    EXPECT_EQ(view.refuted_successes(), 1);
    EXPECT_NO_THROW(attacks::ResamplingOracle(label, 0.1, 3, 0));
  }
  const attacks::AttackContext ctx;
  EXPECT_EQ(attacks::MakeAttack("confirm:n=3/square", ctx)->name(), "confirm:n=3/square");
  EXPECT_EQ(attacks::MakeAttack("confirm/square", ctx)->name(), "confirm/square");
  for (const char* bad : {"confirm:n=0/square", "confirm:k=2/square", "confirm:n=2"})
    EXPECT_THROW(attacks::MakeAttack(bad, ctx), std::invalid_argument) << bad;
}

// Under label feedback an EOT query is answered with the majority label of its k samples
//: here 2 of 3 draws are class 1 while the mean probability vector still favours
// the true class 0, so the vote and the mean disagree.
TEST(Eot, LabelFeedbackAnswersWithTheMajorityLabelOfTheSamples) {
  long calls = 0;
  auto model = MeanModel(&calls);
  std::vector<float> clean(16, 0.5f);
  const std::vector<float> adv(16, 0.2f);  // class 1; with the stage's +0.3: class 0
  for (const oracle::Feedback feedback : {oracle::Feedback::kScores, oracle::Feedback::kLabel}) {
    oracle::Referee orc(*model, clean.data(), 0, -1, 0.3, 30);
    orc.set_feedback_type(feedback);
    long seen = 0;
    orc.set_defense(oracle::WithInputStage(oracle::Undefended(*model), [&](float* im, int n) {
      for (int b = 0; b < n; ++b, ++seen)
        if (seen % 3 == 0)
          for (int p = 0; p < 16; ++p) im[b * 16 + p] += 0.3f;
    }));
    attacks::EotOracle view(orc, 3);
    std::vector<float> x = adv;
    const oracle::QueryResult r = view.Query(x.data(), 1);
    EXPECT_EQ(orc.model_queries(), 3);
    if (feedback == oracle::Feedback::kLabel) {
      EXPECT_EQ(r.predicted[0], 1);  // the vote: 2 of 3
      EXPECT_TRUE(r.adversarial[0]);
      EXPECT_EQ(r.log_probs.cols(), 0);  // the label, nothing more
    } else {
      // Mean probabilities: class 0 (0.74 + 2 x 0.32) / 3 = 0.46 > class 1 (0.10 + 2 x 0.48) / 3.
      EXPECT_EQ(r.predicted[0], 0);
      EXPECT_FALSE(r.success[0]);
    }
  }
}

// A wrapper runs under its inner attack's threat model (they forwarded only the name
// and untargeted support, so "eot:k=2/square-l2 --norm l2" was refused as an L_inf attack).
TEST(Wrappers, RunUnderTheirInnerAttacksThreatModel) {
  const attacks::AttackContext ctx;
  const struct {
    const char* spec;
    const char* inner;
    oracle::Norm norm;
    oracle::Feedback feedback;
  } cases[] = {
      {"eot:k=2/square-l2", "square-l2", oracle::Norm::kL2, oracle::Feedback::kScores},
      {"confirm/simba-dct", "simba-dct", oracle::Norm::kL2, oracle::Feedback::kScores},
      {"eot:k=2/oars/confirm/square-l2", "square-l2", oracle::Norm::kL2, oracle::Feedback::kScores},
      {"eot:k=10/rays", "rays", oracle::Norm::kLinf, oracle::Feedback::kLabel},
      {"aaa-adaptive:interval=4,reverse=1/eot:k=2/hsja", "hsja", oracle::Norm::kL2,
       oracle::Feedback::kLabel},
      {"oars:quantization=50/bo-hl", "bo-hl", oracle::Norm::kLinf, oracle::Feedback::kLabel},
  };
  for (const auto& c : cases) {
    const auto wrapped = attacks::MakeAttack(c.spec, ctx);
    const auto inner = attacks::MakeAttack(c.inner, ctx);
    EXPECT_EQ(wrapped->norms(), inner->norms()) << c.spec;
    EXPECT_EQ(wrapped->feedback(), inner->feedback()) << c.spec;
    EXPECT_EQ(wrapped->supports_targeted(), inner->supports_targeted()) << c.spec;
    EXPECT_EQ(wrapped->supports_untargeted(), inner->supports_untargeted()) << c.spec;
    EXPECT_EQ(attacks::ThreatModelMismatch(*wrapped, c.spec, c.norm, c.feedback), "") << c.spec;
    // ... and is refused where its inner attack is.
    const oracle::Feedback other = c.feedback == oracle::Feedback::kLabel
                                       ? oracle::Feedback::kScores
                                       : oracle::Feedback::kLabel;
    EXPECT_NE(attacks::ThreatModelMismatch(*wrapped, c.spec, c.norm, other), "") << c.spec;
  }
}

// Nesting is bounded before anything is built (6,000 nested wrappers crashed with a
// stack overflow; eot k's multiplied past 2^32 samples per query).
TEST(Wrappers, NestingDepthAndEotSamplesPerQueryAreBounded) {
  const attacks::AttackContext ctx;
  auto nested = [](const std::string& wrapper, int depth) {
    std::string s;
    for (int i = 0; i < depth; ++i) s += wrapper + "/";
    return s + "square";
  };
  EXPECT_NO_THROW(attacks::MakeAttack(nested("oars", attacks::kMaxWrapperDepth), ctx));
  for (const std::string& spec : {nested("oars", attacks::kMaxWrapperDepth + 1),
                                  nested("eot:k=1", 16000), nested("oars", 26000)}) {
    try {
      attacks::MakeAttack(spec, ctx);
      ADD_FAILURE() << "nesting " << spec.size() << " characters deep was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("nested adaptive wrappers (the limit)"),
                std::string::npos)
          << e.what();
    }
  }
  EXPECT_NO_THROW(attacks::MakeAttack("eot:k=10/eot:k=100/square", ctx));  // 1,000 samples
  for (const char* spec : {"eot:k=163/eot:k=643/eot:k=953/eot:k=43/square",
                           "eot:k=2/eot:k=1000/square", "eot/eot/eot/eot/square"}) {
    try {
      attacks::MakeAttack(spec, ctx);
      ADD_FAILURE() << spec << " was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("samples per query"), std::string::npos) << e.what();
    }
  }
}

// AAA with reverse = 0 reports the attractor itself, flat inside each interval: nothing for an
// attacker to invert, so its adaptive attack is the plain one (evaluate built
// "aaa-adaptive:reverse=0/..." and died on it).
TEST(Wrappers, AaaWithoutReversalHasNoAdaptiveWrapper) {
  EXPECT_EQ(ParseDefense("aaa").AdaptiveAttack("square"),
            "aaa-adaptive:interval=4,reverse=1/square");
  EXPECT_EQ(ParseDefense("aaa:reverse=0.5,interval=2").AdaptiveAttack("square"),
            "aaa-adaptive:interval=2,reverse=0.5/square");
  EXPECT_EQ(ParseDefense("aaa:reverse=0").AdaptiveAttack("square"), "square");
  EXPECT_EQ(ParseDefense("noise:sigma=0.1+aaa:reverse=0").AdaptiveAttack("bos2"), "eot:k=10/bos2");
  const attacks::AttackContext ctx;
  EXPECT_NO_THROW(attacks::MakeAttack(ParseDefense("aaa").AdaptiveAttack("square"), ctx));
}

}  // namespace
}  // namespace advbo::defenses
