// Input-transformation defenses: spec parsing, each transformation's defining property, and
// that the oracle feeds the defended model while the attacker's images stay untouched.
#include "defenses/defense.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "oracle/classifier.h"
#include "oracle/oracle.h"

namespace advbo::defenses {
namespace {

std::vector<float> RandomImages(int n, int c, int h, int w, uint32_t seed) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> u(0, 1);
  std::vector<float> v(static_cast<size_t>(n) * c * h * w);
  for (auto& x : v) x = u(g);
  return v;
}

double MaxAbsDiff(const std::vector<float>& a, const std::vector<float>& b) {
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::abs(double(a[i]) - b[i]));
  return m;
}

double MeanAbsDiff(const std::vector<float>& a, const std::vector<float>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += std::abs(double(a[i]) - b[i]);
  return s / a.size();
}

TEST(ParseDefense, SpecsDefaultsAndErrors) {
  EXPECT_TRUE(ParseDefense("none").empty());
  EXPECT_TRUE(ParseDefense("").empty());
  EXPECT_EQ(ParseDefense("jpeg").Spec(), "jpeg:quality=75");
  EXPECT_EQ(ParseDefense("median:size=5+noise:sigma=0.05").Spec(),
            "median:size=5+noise:sigma=0.05");
  EXPECT_EQ(ParseDefense("bits").Spec(), "bits:depth=4");
  EXPECT_TRUE(ParseDefense("resize").randomized());
  EXPECT_FALSE(ParseDefense("blur:sigma=0.5").randomized());
  for (const char* bad : {"gzip", "jpeg:quality=0", "jpeg:quality=101", "jpeg:q=50", "bits:depth=9",
                          "median:size=4", "median:size=7", "blur:sigma=-1", "noise:sigma=abc",
                          "resize:ratio=2", "jpeg:quality", "jpeg:quality=7.5"})
    EXPECT_THROW(ParseDefense(bad), std::invalid_argument) << bad;
}

TEST(Defenses, BitDepthQuantisesToItsLevels) {
  auto img = RandomImages(2, 3, 8, 8, 1);
  bo::Rng rng(0);
  ParseDefense("bits:depth=2").Apply(img.data(), 2, 3, 8, 8, rng);
  for (float x : img) {
    const float k = x * 3.0f;
    EXPECT_NEAR(k, std::round(k), 1e-5);
  }
  // depth 8 leaves 8-bit images unchanged.
  std::vector<float> q(64);
  for (int i = 0; i < 64; ++i) q[i] = static_cast<float>(i * 4) / 255.0f;
  auto q0 = q;
  ParseDefense("bits:depth=8").Apply(q.data(), 1, 1, 8, 8, rng);
  EXPECT_LT(MaxAbsDiff(q, q0), 1e-6);
}

TEST(Defenses, JpegErrorGrowsAsQualityDropsAndColoursSurvive) {
  // A smooth colour image (JPEG's target): error at quality 95 < quality 10.
  const int c = 3, h = 32, w = 32;
  std::vector<float> img(c * h * w);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      img[(0 * h + y) * w + x] = 0.8f;              // red
      img[(1 * h + y) * w + x] = 0.1f + 0.02f * x;  // green ramp
      img[(2 * h + y) * w + x] = 0.2f;              // blue
    }
  bo::Rng rng(0);
  auto hi = img, lo = img;
  ParseDefense("jpeg:quality=95").Apply(hi.data(), 1, c, h, w, rng);
  ParseDefense("jpeg:quality=10").Apply(lo.data(), 1, c, h, w, rng);
  EXPECT_LT(MeanAbsDiff(hi, img), 0.02);
  EXPECT_LT(MeanAbsDiff(hi, img), MeanAbsDiff(lo, img));
  // Channel order is kept (a red image stays red, not blue).
  EXPECT_NEAR(hi[(0 * h + 5) * w + 5], 0.8f, 0.05);
  EXPECT_NEAR(hi[(2 * h + 5) * w + 5], 0.2f, 0.05);
  for (float x : lo) EXPECT_TRUE(x >= 0.0f && x <= 1.0f);
}

TEST(Defenses, MedianRemovesAnIsolatedPixelAndKeepsConstants) {
  std::vector<float> img(1 * 9 * 9, 0.25f);
  img[4 * 9 + 4] = 1.0f;
  bo::Rng rng(0);
  ParseDefense("median:size=3").Apply(img.data(), 1, 1, 9, 9, rng);
  for (float x : img) EXPECT_NEAR(x, 0.25f, 1e-6);
}

TEST(Defenses, BlurSmoothsButPreservesConstantsAndMean) {
  std::vector<float> flat(3 * 16 * 16, 0.4f);
  bo::Rng rng(0);
  auto f = flat;
  ParseDefense("blur:sigma=1.5").Apply(f.data(), 1, 3, 16, 16, rng);
  EXPECT_LT(MaxAbsDiff(f, flat), 1e-5);
  auto img = RandomImages(1, 1, 16, 16, 3);
  auto b = img;
  ParseDefense("blur:sigma=1").Apply(b.data(), 1, 1, 16, 16, rng);
  double m0 = 0, m1 = 0, v0 = 0, v1 = 0;
  for (size_t i = 0; i < img.size(); ++i) {
    m0 += img[i];
    m1 += b[i];
  }
  m0 /= img.size();
  m1 /= img.size();
  for (size_t i = 0; i < img.size(); ++i) {
    v0 += (img[i] - m0) * (img[i] - m0);
    v1 += (b[i] - m1) * (b[i] - m1);
  }
  EXPECT_NEAR(m0, m1, 0.02);
  EXPECT_LT(v1, 0.3 * v0);
}

TEST(Defenses, NoiseHasTheRequestedSpreadAndDiffersPerCall) {
  std::vector<float> img(20000, 0.5f);
  auto a = img, b = img;
  bo::Rng rng(5);
  const DefensePipeline d = ParseDefense("noise:sigma=0.05");
  d.Apply(a.data(), 1, 1, 100, 200, rng);
  d.Apply(b.data(), 1, 1, 100, 200, rng);
  double s = 0, s2 = 0;
  for (float x : a) {
    s += x - 0.5;
    s2 += (x - 0.5) * (x - 0.5);
  }
  EXPECT_NEAR(s / a.size(), 0.0, 0.002);
  EXPECT_NEAR(std::sqrt(s2 / a.size()), 0.05, 0.002);
  EXPECT_GT(MaxAbsDiff(a, b), 0.01);
}

TEST(Defenses, ResizePadKeepsShapeAndRangeAndIsRandom) {
  auto img = RandomImages(4, 1, 28, 28, 9);
  auto a = img, b = img;
  bo::Rng rng(2);
  const DefensePipeline d = ParseDefense("resize:ratio=0.2");
  d.Apply(a.data(), 4, 1, 28, 28, rng);
  d.Apply(b.data(), 4, 1, 28, 28, rng);
  for (float x : a) EXPECT_TRUE(x >= 0.0f && x <= 1.0f);
  EXPECT_GT(MaxAbsDiff(a, b), 0.01);
  EXPECT_GT(MeanAbsDiff(a, img), 0.01);
}

// The shipped MNIST model behind bits:depth=1: the model sees binarised images, the
// attacker's (projected) images are not modified by the defense, and queries still count.
TEST(DefendedOracle, ModelSeesTheTransformedCopyOnly) {
  auto model = oracle::Classifier::Load(std::string(ADVBO_SOURCE_DIR) + "/models/mnist_cw.pt");
  auto clean = RandomImages(1, 1, 28, 28, 4);
  oracle::Referee plain(*model, clean.data(), 3, -1, 0.3, 10);
  oracle::Referee defended(*model, clean.data(), 3, -1, 0.3, 10);
  const DefensePipeline bits = ParseDefense("bits:depth=1");
  bo::Rng rng(0);
  int calls = 0;
  defended.set_defense(oracle::WithInputStage(oracle::Undefended(*model), [&](float* x, int n) {
    ++calls;
    bits.Apply(x, n, 1, 28, 28, rng);
  }));
  auto q = RandomImages(2, 1, 28, 28, 6);
  auto q_copy = q;
  const auto r = defended.Query(q.data(), 2);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(defended.queries(), 2);
  // The caller's images are projected but not binarised.
  plain.Project(q_copy.data(), 2);
  EXPECT_EQ(MaxAbsDiff(q, q_copy), 0.0);
  // Same scores as querying the binarised images without a defense.
  auto binarised = q_copy;
  bits.Apply(binarised.data(), 2, 1, 28, 28, rng);
  const auto ref = model->LogProbabilities(binarised.data(), 2);
  EXPECT_LT((r.log_probs - ref).cwiseAbs().maxCoeff(), 1e-9);
}

}  // namespace
}  // namespace advbo::defenses
