// The baseline attacks on the shipped MNIST model: each succeeds on an easy instance within
// its default budget, and every query of every attack respects the oracle contract (inside
// the eps-ball and [0, 1], never more than the budget, every evaluated image counted).
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "attacks/attack.h"
#include "attacks/bo_hard_label/bo_hard_label.h"
#include "attacks/common/dct.h"
#include "attacks/common/window_refine.h"
#include "attacks/geoda/geoda.h"
#include "attacks/rays/rays.h"
#include "attacks/signhunter/signhunter.h"
#include "attacks/simba/simba.h"
#include "attacks/square/square.h"
#include "attacks/square/square_l2.h"
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
  for (const std::string name :
       {"bayesopt", "bayesopt-learnd", "square", "genattack", "zoo", "autozoom", "parsimonious",
        "random", "signhunter", "nes", "bandits"}) {
    const bool untargeted = name == "random";  // the floor: untargeted on test image 0
    const int idx = untargeted ? 0 : 1621;
    oracle::Referee o(*model_, data_->image(idx), data_->labels[idx], untargeted ? -1 : 6, 0.3,
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
        oracle::Referee o(*model_, data_->image(idx), data_->labels[idx], target, eps, budget);
        o.set_norm(norm);
        o.set_feedback_type(attack->feedback());
        if (label && target >= 0) {  // targeted hard-label: start from a 1 (test image 2)
          ASSERT_EQ(data_->labels[2], target);
          o.set_start_image(std::vector<float>(data_->image(2), data_->image(2) + 784));
        }
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
        EXPECT_EQ(r.wait_seconds, 0.0);  // no lockstep here: nothing to wait for
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
    oracle::Referee o(*model_, data_->image(idx), data_->labels[idx], -1, 0.3, 900);
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
// budget towards the clean image: the closest adversarial query ends well below the first
// adversarial query's distance; the answer is the clean image (the closest query lies outside
// the ball), the closest query is kept beside it. (The oracle's
// trace holds only improvements, so its monotonicity is not the attack's to show.)
TEST_F(BaselinesOnMnist, HardLabelAttacksWalkTowardsTheCleanImage) {
  for (const std::string& name : AttackNames()) {
    const auto attack = MakeAttack(name, Mnist());
    if (attack->feedback() != oracle::Feedback::kLabel) continue;
    for (oracle::Norm norm : attack->norms()) {
      const std::string what = name + " " + oracle::NormName(norm);
      const double eps = norm == oracle::Norm::kL2 ? 0.1 : 0.01;
      oracle::Referee o(*model_, data_->image(0), data_->labels[0], -1, eps, 300);
      o.set_norm(norm);
      o.set_feedback_type(oracle::Feedback::kLabel);
      bo::Rng rng(2);
      AttackResult r = attack->Run(o, rng, nullptr);
      EXPECT_FALSE(r.success) << what;
      EXPECT_EQ(o.queries(), 300) << what;
      const auto& trace = o.distance_trace();
      ASSERT_GE(trace.size(), 2u) << what;
      EXPECT_LT(trace.back().second, 0.7 * trace.front().second) << what;
      // A failed run answers with the clean image and keeps the closest query apart (#59).
      EXPECT_EQ(r.adversarial, o.clean()) << what;
      ASSERT_EQ(r.closest_adversarial.size(), o.clean().size()) << what;
      EXPECT_EQ(o.DistanceToClean(r.closest_adversarial.data()), trace.back().second) << what;
    }
  }
}

// Targeted hard-label attacks (HopSkipJump and Sign-OPT, Sec. 4 of each paper)
// start from the oracle's image of the target class: its first query is that image, every
// adversarial query is put in the target class by the model, and 300 queries bring the closest
// one below 0.8 of the start's distance (measured: 0.70 HopSkipJump). Without a start image a
// targeted run is refused; RayS, GeoDA and bo-hl, whose papers are untargeted, say so.
TEST_F(BaselinesOnMnist, TargetedHardLabelAttacksWalkFromAnImageOfTheTargetClass) {
  const int idx = 0, target = 3, start = 18;  // test image 18 is a correctly classified 3
  ASSERT_EQ(data_->labels[start], target);
  const std::vector<float> xt(data_->image(start), data_->image(start) + 784);
  for (const std::string name : {"hsja", "sign-opt"}) {
    const auto attack = MakeAttack(name, Mnist());
    ASSERT_TRUE(attack->supports_targeted()) << name;
    oracle::Referee o(*model_, data_->image(idx), data_->labels[idx], target, 0.01, 300);
    o.set_norm(oracle::Norm::kL2);
    o.set_feedback_type(oracle::Feedback::kLabel);
    bo::Rng rng(3);
    EXPECT_THROW(attack->Run(o, rng, nullptr), std::invalid_argument) << name;
    o.set_start_image(xt);
    std::vector<float> first;
    o.set_observer([&](const float* img, long q) {
      if (q == 1) first.assign(img, img + 784);
    });
    const AttackResult r = attack->Run(o, rng, nullptr);
    ASSERT_EQ(first.size(), 784u) << name;
    for (int k = 0; k < 784; ++k) ASSERT_NEAR(first[k], xt[k], 1e-5) << name << " pixel " << k;
    ASSERT_EQ(r.closest_adversarial.size(), 784u) << name;
    Eigen::Index arg;
    model_->LogProbabilities(r.closest_adversarial.data(), 1).row(0).maxCoeff(&arg);
    EXPECT_EQ(arg, target) << name;
    EXPECT_LT(o.best_distance(), 0.8 * o.DistanceToClean(xt.data())) << name;
  }
  for (const std::string name : {"rays", "geoda", "bo-hl"})
    EXPECT_FALSE(MakeAttack(name, Mnist())->supports_targeted()) << name;
}

// RayS' search with patience P returns once P queries in a row have not shrunk its radius
// (well before the budget on this unreachable eps), and bo-hl then hands over to
// HopSkipJump, whose steps move the closest adversarial query nearer than RayS got.
TEST_F(BaselinesOnMnist, RaysPatienceStopsOnAPlateauAndBoHlHandsOverToHsja) {
  {
    oracle::Referee o(*model_, data_->image(0), data_->labels[0], -1, 0.01, 3000);
    o.set_feedback_type(oracle::Feedback::kLabel);
    RaySearch search(o, 1e-3);
    std::vector<float> d(o.clean().size(), 1.0f);
    double best = search.Search(d, std::numeric_limits<double>::infinity());
    best = search.Hierarchical(&d, best, nullptr, 50);
    ASSERT_TRUE(std::isfinite(best));
    ASSERT_LT(o.queries(), 3000);  // stopped by the patience, not by the budget
    const long since = o.queries() - o.distance_trace().back().first;
    EXPECT_GE(since, 50);
    EXPECT_LT(since, 50 + 12);  // the last candidate's search is at most ~log2(255) queries
  }
  oracle::Referee o(*model_, data_->image(0), data_->labels[0], -1, 0.01, 700);
  o.set_feedback_type(oracle::Feedback::kLabel);
  bo::Rng rng(4);
  const AttackResult r = MakeAttack("bo-hl:patience=50", Mnist())->Run(o, rng, nullptr);
  ASSERT_TRUE(r.details.contains("bo_hl_hsja_from"));
  ASSERT_TRUE(r.details["bo_hl_hsja_from"].is_number());
  const long from = r.details["bo_hl_hsja_from"].get<long>();
  EXPECT_GT(from, 0);
  EXPECT_LT(from, 700);
  EXPECT_EQ(o.queries(), 700);
  const auto& trace = o.distance_trace();
  double before = std::numeric_limits<double>::infinity();
  for (const auto& [index, dist] : trace)
    if (index <= from) before = dist;
  EXPECT_LT(trace.back().second, before);  // HopSkipJump got closer than RayS' plateau
}

// The score-based L2 attacks on test image 0 (a 7) targeted at 3 in an L2 ball of 2.0 (float
// queries: SimBA-DCT needs about 70 queries, Square-L2 about 160): each succeeds, and the
// reported image lies in the ball and is classified as the target.
TEST_F(BaselinesOnMnist, L2AttacksSucceedOnATargetedInstance) {
  for (const std::string name : {"simba-dct", "square-l2"}) {
    oracle::Referee o(*model_, data_->image(0), data_->labels[0], 3, 2.0, 900);
    o.set_norm(oracle::Norm::kL2);
    bo::Rng rng(0);
    AttackResult r = MakeAttack(name, Mnist())->Run(o, rng, nullptr);
    ASSERT_TRUE(r.success) << name;
    EXPECT_LE(oracle::Distance(oracle::Norm::kL2, r.adversarial.data(), o.clean().data(), 784), 2.0)
        << name;
    Eigen::MatrixXd lp = model_->LogProbabilities(r.adversarial.data(), 1);
    Eigen::Index arg;
    lp.row(0).maxCoeff(&arg);
    EXPECT_EQ(arg, 3) << name;
    EXPECT_GT(r.queries, 10) << name;  // not a trivial instance
  }
}

// The DCT basis is orthonormal (the closed form of DCT-II), and SimBA's order visits every
// coefficient once, the initial low-frequency block first.
TEST(SimbaDct, BasisIsOrthonormalAndTheOrderCoversItLowFrequenciesFirst) {
  std::vector<std::vector<float>> basis;
  for (int u = 0; u < 6; ++u)
    for (int v = 0; v < 5; ++v) {
      basis.emplace_back();
      DctBasis(2, 6, 5, (u + v) % 2, u, v, &basis.back());
    }
  for (size_t a = 0; a < basis.size(); ++a)
    for (size_t b = 0; b < basis.size(); ++b) {
      double dot = 0;
      for (size_t k = 0; k < basis[a].size(); ++k) dot += double(basis[a][k]) * basis[b][k];
      EXPECT_NEAR(dot, a == b ? 1.0 : 0.0, 1e-5) << a << " " << b;
    }
  bo::Rng rng(3);
  const auto order = SimbaOrder(3, 8, 8, 2, 3, rng);
  ASSERT_EQ(order.size(), 3u * 8 * 8);
  std::set<std::array<int, 3>> seen(order.begin(), order.end());
  EXPECT_EQ(seen.size(), order.size());
  for (size_t k = 0; k < order.size(); ++k) {
    const int band = std::max(order[k][1], order[k][2]);
    EXPECT_EQ(band < 2, k < 3u * 4) << k;  // the 2 x 2 block of 3 channels comes first
  }
}

// GeoDA's probes: the separable inverse DCT of a low-frequency block equals the sum of the
// DCT basis images weighted by the coefficients (non-square image, mh != mw).
TEST(Dct, InverseLowFrequencyIsTheWeightedSumOfBasisImages) {
  const int c = 2, h = 7, w = 6, mh = 3, mw = 4;
  bo::Rng rng(5);
  std::normal_distribution<double> g(0.0, 1.0);
  std::vector<Eigen::MatrixXd> coef(c, Eigen::MatrixXd(mh, mw));
  std::vector<double> sum(static_cast<size_t>(c) * h * w, 0.0), fast;
  std::vector<float> basis;
  for (int ch = 0; ch < c; ++ch)
    for (int u = 0; u < mh; ++u)
      for (int v = 0; v < mw; ++v) {
        coef[ch](u, v) = g(rng);
        DctBasis(c, h, w, ch, u, v, &basis);
        for (size_t k = 0; k < sum.size(); ++k) sum[k] += coef[ch](u, v) * basis[k];
      }
  InverseDctLowFrequency(coef, DctRows(h, mh), DctRows(w, mw), &fast);
  ASSERT_EQ(fast.size(), sum.size());
  for (size_t k = 0; k < sum.size(); ++k) EXPECT_NEAR(fast[k], sum[k], 1e-5) << k;
}

// Square-L2's meta-pattern: unit L2 norm, the lower half the negated upper bump (for even s),
// peaks at the bumps' centres, and `transpose` transposes it.
TEST(SquareL2, MetaPatternIsTwoOppositeUnitBumps) {
  for (int s : {3, 6, 7}) {
    const std::vector<float> p = SquareL2MetaPattern(s, false), t = SquareL2MetaPattern(s, true);
    double n = 0;
    for (float v : p) n += double(v) * v;
    EXPECT_NEAR(n, 1.0, 1e-6);
    for (int i = 0; i < s; ++i)
      for (int j = 0; j < s; ++j) EXPECT_EQ(t[i * s + j], p[j * s + i]);
    const int top = s / 2;
    EXPECT_GT(p[(top / 2) * s + s / 2], 0.0f);
    EXPECT_LT(p[(top + (s - top) / 2) * s + s / 2], 0.0f);
    if (s % 2 == 0)
      for (int i = 0; i < top; ++i)
        for (int j = 0; j < s; ++j) EXPECT_FLOAT_EQ(p[(top + i) * s + j], -p[i * s + j]);
  }
}

TEST(SignHunter, ChunksHalveLevelByLevelAndTileThePixels) {
  EXPECT_EQ(SignHunterChunk(10, 0, 0), std::make_pair(size_t{0}, size_t{10}));
  EXPECT_EQ(SignHunterChunk(10, 1, 1), std::make_pair(size_t{5}, size_t{10}));
  EXPECT_EQ(SignHunterChunk(10, 2, 3), std::make_pair(size_t{9}, size_t{10}));  // ceil(10/4) = 3
  for (int h = 0; h < 4; ++h) {
    size_t covered = 0;
    for (long i = 0; i < (1L << h); ++i) {
      const auto [b, e] = SignHunterChunk(13, h, i);
      EXPECT_EQ(b, std::min<size_t>(covered, 13));
      covered = e;
    }
    EXPECT_EQ(covered, 13u);
  }
}

// bo-hl's directions: one sign per tile of each channel, tiles of H / side rows and W / side
// columns (the last ones larger when side does not divide the image).
TEST(BoHardLabel, UpsampleSignsGivesOneSignPerTile) {
  Eigen::VectorXd z(2 * 3 * 3);
  for (int k = 0; k < z.size(); ++k) z(k) = k % 2 ? 1.0 : -1.0;
  const std::vector<float> d = UpsampleSigns(z, 2, 7, 6, 3);
  ASSERT_EQ(d.size(), 2u * 7 * 6);
  for (int c = 0; c < 2; ++c)
    for (int i = 0; i < 7; ++i)
      for (int j = 0; j < 6; ++j)
        EXPECT_EQ(d[(c * 7 + i) * 6 + j], z((c * 3 + i * 3 / 7) * 3 + j / 2)) << c << i << j;
}

// GeoDA's query allocation (Sec. 5): increasing by lambda^(-2/3) per iteration, each >= 1,
// never more than the total.
TEST(Geoda, AllocationGrowsGeometricallyWithinTheTotal) {
  const std::vector<long> n = GeodaAllocation(1000, 10, 0.6);
  ASSERT_EQ(n.size(), 10u);
  long sum = 0;
  for (size_t t = 0; t < n.size(); ++t) {
    sum += n[t];
    if (t > 0) EXPECT_NEAR(double(n[t]) / n[t - 1], std::pow(0.6, -2.0 / 3.0), 0.1) << t;
  }
  EXPECT_LE(sum, 1000);
  EXPECT_GE(sum, 990);
  for (long v : GeodaAllocation(3, 10, 0.6)) EXPECT_GE(v, 1);
}

TEST(SquareSchedule, HalvesAtThePapersIterationsRescaledToTheBudget) {
  EXPECT_DOUBLE_EQ(SquareSchedule(0.8, 0, 10000), 0.8);
  EXPECT_DOUBLE_EQ(SquareSchedule(0.8, 11, 10000), 0.4);
  EXPECT_DOUBLE_EQ(SquareSchedule(0.8, 201, 10000), 0.1);
  EXPECT_DOUBLE_EQ(SquareSchedule(0.8, 9000, 10000), 0.8 / 512);
  // Budget 1,000: iteration 2 is the full-length run's iteration 20.
  EXPECT_DOUBLE_EQ(SquareSchedule(0.8, 2, 1000), 0.4);
}

// Square's initialisation (Algorithm 1 line 2): each column of each channel moves by one
// signed radius, clipped to [0, 1]; both signs occur; the seed decides the pattern.
TEST(SquareStripes, EveryColumnOfEveryChannelMovesByOneSignedRadiusClipped) {
  const int c = 2, h = 5, w = 40;
  const float r = 0.3f;
  std::vector<float> x0(static_cast<size_t>(c) * h * w);
  std::mt19937 gen(3);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  for (float& v : x0) v = u(gen);
  bo::Rng rng(7), rng_same(7), rng_other(8);
  const std::vector<float> s = SquareStripes(x0, c, h, w, r, rng);
  ASSERT_EQ(s.size(), x0.size());
  int ups = 0;
  for (int ch = 0; ch < c; ++ch)
    for (int col = 0; col < w; ++col) {
      const size_t k0 = static_cast<size_t>(ch) * h * w + col;
      const bool up = s[k0] == std::clamp(x0[k0] + r, 0.0f, 1.0f) &&
                      s[k0] != std::clamp(x0[k0] - r, 0.0f, 1.0f);
      ups += up;
      for (int row = 0; row < h; ++row) {
        const size_t k = (static_cast<size_t>(ch) * h + row) * w + col;
        EXPECT_EQ(s[k], std::clamp(x0[k] + (up ? r : -r), 0.0f, 1.0f)) << ch << " " << col;
      }
    }
  EXPECT_GT(ups, 10);  // 80 columns, about half up
  EXPECT_LT(ups, 70);
  EXPECT_EQ(SquareStripes(x0, c, h, w, r, rng_same), s);
  EXPECT_NE(SquareStripes(x0, c, h, w, r, rng_other), s);
}

TEST(MakeAttack, KnowsEveryNameAndRejectsOthers) {
  for (const auto& n : AttackNames()) EXPECT_EQ(MakeAttack(n, AttackContext{})->name(), n);
  EXPECT_THROW(MakeAttack("fgsm", AttackContext{}), std::invalid_argument);
  // Square's settings: the whole spec is the name in records; bad settings are errors.
  EXPECT_EQ(MakeAttack("square:p_init=0.3,resample=4", AttackContext{})->name(),
            "square:p_init=0.3,resample=4");
  // Every spec with settings parses to itself (each attack family's settings are wired).
  for (const char* spec : {"nes:samples=10", "bandits:tile=2", "simba-dct:step=0.1",
                           "square-l2:p_init=0.2", "rays:tolerance=0.01", "hsja:gamma=2",
                           "sign-opt:probes=50", "geoda:iterations=5", "bo-hl:side=3"})
    EXPECT_EQ(MakeAttack(spec, AttackContext{})->name(), spec);
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
    oracle::Referee o(*model_, data_->image(0), data_->labels[0], 1, 0.05, 12);
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
