// The Blacklight-style stateful detector (Li et al. 2022) and the attacker's OARS-style
// resampling against it: fingerprints, detection of replayed and near-duplicate queries,
// refusal through the oracle (counted, flat, never a success) and resampled retries.
#include "defenses/stateful_detector.h"

#include <gtest/gtest.h>

#include <algorithm>
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

std::vector<float> GridImage(int size, uint32_t seed) {
  std::mt19937 g(seed);
  std::uniform_int_distribution<int> u(0, 255);
  std::vector<float> v(size);
  for (auto& x : v) x = u(g) / 255.0f;
  return v;
}

TEST(Blacklight, FingerprintsAreTheLargestDistinctWindowHashes) {
  StatefulDetector det({});
  const auto x = GridImage(3072, 1);
  const auto fp = det.Fingerprint(x.data(), 3072);
  ASSERT_EQ(fp.size(), 50u);
  for (size_t i = 1; i < fp.size(); ++i) EXPECT_GT(fp[i - 1], fp[i]);  // distinct, largest first
  EXPECT_EQ(det.Fingerprint(x.data(), 3072), fp);                      // deterministic
  // Pixels inside one quantisation step change nothing: 0..49 all map to bin 0.
  std::vector<float> a(100, 0.0f), b(100, 49 / 255.0f);
  EXPECT_EQ(det.Fingerprint(a.data(), 100), det.Fingerprint(b.data(), 100));
  EXPECT_EQ(det.Fingerprint(a.data(), 10).size(), 0u);  // fewer pixels than one window
  // A periodic image (period 3 in the bins) has exactly 3 distinct windows, however long.
  std::vector<float> periodic(3072);
  for (int i = 0; i < 3072; ++i) periodic[i] = (i % 3) * 60 / 255.0f;
  EXPECT_EQ(det.Fingerprint(periodic.data(), 3072).size(), 3u);
  // Windows are hashed by content wherever they lie: two images that share every window
  // (the same pixels shifted by one period) have the same fingerprint.
  std::vector<float> shifted(periodic.begin() + 3, periodic.end());
  shifted.insert(shifted.end(), periodic.begin(), periodic.begin() + 3);
  EXPECT_EQ(det.Fingerprint(shifted.data(), 3072), det.Fingerprint(periodic.data(), 3072));
}

TEST(Blacklight, FlagsAReplayedQueryAndNearDuplicatesButNotFreshImages) {
  StatefulDetector det({});
  const auto x = GridImage(3072, 2);
  EXPECT_FALSE(det.Observe(x.data(), 3072));
  EXPECT_TRUE(det.Observe(x.data(), 3072));  // the same query again
  // A square-attack-like step: 5x5 pixels of one channel moved by 8/255.
  auto y = x;
  for (int r = 0; r < 5; ++r)
    for (int c = 0; c < 5; ++c) y[r * 32 + c] = std::min(1.0f, y[r * 32 + c] + 8 / 255.0f);
  EXPECT_TRUE(det.Observe(y.data(), 3072));
  for (uint32_t s = 10; s < 20; ++s) {
    const auto z = GridImage(3072, s);
    EXPECT_FALSE(det.Observe(z.data(), 3072)) << s;
  }
  EXPECT_EQ(det.observed(), 13);
  EXPECT_EQ(det.detections(), 2);
  EXPECT_EQ(det.first_detection(), 2);
}

// The verdicts equal Sec. 4.2's definition computed by brute force -- detected iff some
// earlier query shares >= threshold fingerprint hashes -- on a stream of fresh images and
// mutations of them of every size, so shared counts fall on both sides of the threshold (the
// detector checks candidates from a few hashes' lists only).
TEST(Blacklight, VerdictsEqualTheBruteForceDefinition) {
  BlacklightOptions o;
  o.window = 5;
  o.hashes = 20;
  o.threshold = 10;
  StatefulDetector det(o);
  std::mt19937 g(5);
  std::vector<std::vector<float>> bases;
  std::vector<std::vector<uint64_t>> fps;
  int detected = 0, missed = 0;
  for (int t = 0; t < 400; ++t) {
    std::vector<float> x;
    if (bases.empty() || g() % 4 == 0) {
      x = GridImage(300, 100 + t);
      bases.push_back(x);
    } else {
      x = bases[g() % bases.size()];
      const int changed = static_cast<int>(g() % 120);
      for (int k = 0; k < changed; ++k) x[g() % 300] = (g() % 256) / 255.0f;
    }
    const auto fp = det.Fingerprint(x.data(), 300);
    int best = 0;
    for (const auto& other : fps) {
      int shared = 0;
      for (uint64_t h : fp) shared += std::count(other.begin(), other.end(), h);
      best = std::max(best, shared);
    }
    fps.push_back(fp);
    const bool want = best >= o.threshold;
    EXPECT_EQ(det.Observe(x.data(), 300), want) << "query " << t << ", best " << best;
    (want ? detected : missed)++;
  }
  EXPECT_GT(detected, 50);  // both verdicts occur often
  EXPECT_GT(missed, 50);
}

TEST(Blacklight, SpecsDefaultsAndErrors) {
  EXPECT_EQ(ParseDefense("blacklight").Spec(),
            "blacklight:quantization=50,window=20,hashes=50,threshold=25,action=reject");
  EXPECT_EQ(ParseDefense("blacklight:action=flag,threshold=10").Spec(),
            "blacklight:quantization=50,window=20,hashes=50,threshold=10,action=flag");
  EXPECT_EQ(ParseDefense("jpeg+blacklight").AdaptiveAttack("square"),
            "oars:quantization=50/square");
  // Every stage at once: aaa-adaptive corrects each sample, eot averages them, oars resends
  // whole queries -- the order in which the wrappers' views stack on the referee, which
  // MakeAttack accepts (and refuses the other way round).
  const std::string all = ParseDefense("noise:sigma=0.02+aaa+blacklight").AdaptiveAttack("square");
  EXPECT_EQ(all, "aaa-adaptive:interval=4,reverse=1/eot:k=10/oars:quantization=50/square");
  EXPECT_EQ(attacks::MakeAttack(all, {})->name(), all);
  EXPECT_THROW(attacks::MakeAttack("oars:quantization=50/eot:k=10/square", {}),
               std::invalid_argument);
  for (const char* bad :
       {"blacklight:action=drop", "blacklight:threshold=60", "blacklight:quantization=0",
        "blacklight:window=x", "blacklight:foo=1", "blacklight+blacklight"})
    EXPECT_THROW(ParseDefense(bad), std::invalid_argument) << bad;
}

// A detector that can never fire on the model's images is refused with the reason:
// a fingerprint holds at most values - window + 1 window hashes.
TEST(Blacklight, SettingsThatCanNeverFireOnTheImagesAreRefused) {
  auto message = [](const std::string& spec, int values) {
    try {
      ParseDefense(spec).detector()->ValidateFor(values);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(message("blacklight", 784), "");  // MNIST: 765 windows
  EXPECT_EQ(message("blacklight:window=765,threshold=20,hashes=20", 784), "");  // 20 windows
  EXPECT_NE(
      message("blacklight:window=1000", 784).find("window 1000 is longer than the image's 784"),
      std::string::npos);
  EXPECT_NE(message("blacklight:hashes=10000,threshold=10000", 784)
                .find("threshold 10000 exceeds the 765 window hashes"),
            std::string::npos);
  EXPECT_NE(message("blacklight:window=780,threshold=6", 784).find("use threshold <= 5"),
            std::string::npos);
  EXPECT_EQ(message("blacklight:hashes=10000,threshold=3000", 3072), "");  // CIFAR-10: 3053
}

// A model whose logits favour class 0 unless the image is bright: [0.5 - m, m, 0].
class BrightnessBackend : public oracle::ScoreBackend {
 public:
  explicit BrightnessBackend(long* calls) : calls_(calls) {}
  Eigen::MatrixXd Scores(const float* x, int n, int c, int h, int w,
                         const oracle::QueryContext*) const override {
    const int d = c * h * w;
    Eigen::MatrixXd out(n, 3);
    for (int b = 0; b < n; ++b) {
      double m = 0;
      for (int p = 0; p < d; ++p) m += x[b * d + p];
      m /= d;
      out.row(b) << 0.5 - m, m, 0;
    }
    *calls_ += n;
    return out;
  }
  std::string name() const override { return "brightness"; }

 private:
  long* calls_;
};

TEST(Blacklight, TheOracleRefusesDetectedQueriesAndResamplingGetsThrough) {
  long calls = 0;
  oracle::ClassifierOptions o;
  o.channels = 3;
  o.height = o.width = 32;
  o.output = oracle::OutputKind::kLogits;
  o.probe = false;
  o.classes = 3;
  auto model = oracle::Classifier::FromBackend(std::make_unique<BrightnessBackend>(&calls), o);
  const auto clean = GridImage(3072, 3);
  auto install = [&](oracle::Referee& orc, const std::string& spec) {
    auto det = std::make_shared<StatefulDetector>(*ParseDefense(spec).detector());
    orc.set_defense(oracle::WithDetector(
        oracle::Undefended(*model),
        [det](const float* x, int n) {
          std::vector<bool> v(n);
          for (int b = 0; b < n; ++b) v[b] = det->Observe(x + b * 3072, 3072);
          return v;
        },
        ParseDefense(spec).detector()->reject));
  };
  // Untargeted against class 0 with a textured image of mean ~0.5 (class 1): a success,
  // unless refused. (A flat image would have a one-hash fingerprint, never detected.)
  const std::vector<float> bright = GridImage(3072, 99);
  {
    oracle::Referee orc(*model, clean.data(), 0, -1, 1.0, 10);
    install(orc, "blacklight");
    auto q = bright;
    EXPECT_TRUE(orc.Query(q.data(), 1).success[0]);
    q = bright;
    const oracle::QueryResult r = orc.Query(q.data(), 1);  // replayed: refused
    ASSERT_EQ(r.rejected.size(), 1u);
    EXPECT_TRUE(r.rejected[0]);
    EXPECT_FALSE(r.success[0]);
    for (int c = 0; c < 3; ++c) EXPECT_NEAR(r.log_probs(0, c), -std::log(3.0), 1e-12);
    EXPECT_EQ(orc.queries(), 2);  // a refused query still counts
    EXPECT_EQ(orc.detector().detections, 1);
    EXPECT_EQ(orc.detector().first_detection, 2);
  }
  {  // flag: answered as usual, only counted
    oracle::Referee orc(*model, clean.data(), 0, -1, 1.0, 10);
    install(orc, "blacklight:action=flag");
    auto q = bright;
    orc.Query(q.data(), 1);
    q = bright;
    EXPECT_TRUE(orc.Query(q.data(), 1).success[0]);
    EXPECT_EQ(orc.detector().detections, 1);
  }
  {  // resampling: the replay is resent with noise until it passes; every try counted
    oracle::Referee orc(*model, clean.data(), 0, -1, 0.5, 30);
    install(orc, "blacklight");
    attacks::ResamplingOracle view(orc, 0.01, 10, 5);
    calls = 0;
    auto q = bright;
    view.Query(q.data(), 1);
    q = bright;
    const oracle::QueryResult r = view.Query(q.data(), 1);
    EXPECT_FALSE(r.rejected[0]);
    EXPECT_GT(view.resampled(), 0);
    EXPECT_EQ(orc.queries(), 2 + view.resampled());
    EXPECT_EQ(calls, orc.queries());
    EXPECT_EQ(orc.detector().detections, view.resampled());  // every resent try followed a refusal
  }
  {  // targeted resampling: only pixels near a quantisation boundary move, just across it
    oracle::Referee orc(*model, clean.data(), 0, -1, 1.0, 30);  // the ball is [0, 1]
    install(orc, "blacklight");
    attacks::ResamplingOracle view(orc, 0.05, 10, 5, 50);  // amplitude 0.05 * 1 = 12.75 levels
    auto q = bright;
    view.Query(q.data(), 1);
    int moved = 0;
    for (int i = 0; i < 3072; ++i) {
      const double before = bright[i] * 255.0, after = q[i] * 255.0;
      if (std::abs(after - before) < 1e-3) continue;
      ++moved;
      const double b = std::round(before / 50) * 50;  // the boundary crossed
      EXPECT_LE(std::abs(before - b), 12.75 + 1e-6) << i;
      EXPECT_TRUE(std::abs(after - b) < 1e-3 || std::abs(after - (b - 1)) < 1e-3)
          << i << ": " << before << " -> " << after;
      EXPECT_NE(std::floor(std::round(before) / 50), std::floor(std::round(after) / 50)) << i;
    }
    EXPECT_GT(moved, 300);  // about half of the ~51 % of pixels within 12.75 of a boundary
  }
  EXPECT_EQ(attacks::MakeAttack("oars/square", {})->name(), "oars/square");
  EXPECT_EQ(attacks::MakeAttack("oars:scale=0.1,tries=3/random", {})->name(),
            "oars:scale=0.1,tries=3/random");
  EXPECT_THROW(attacks::MakeAttack("oars:scale=2/square", {}), std::invalid_argument);
}

}  // namespace
}  // namespace advbo::defenses
