// The white-box reference (APGD-CE + APGD-T, FAB-T) against the closed form of a linear
// classifier:
// for logits z = W^T x + b the smallest margin z_y - z_j over the L_inf ball intersected with
// [0, 1] is sum_i min(a_i lo_i, a_i hi_i) + (b_y - b_j), a = w_y - w_j (each pixel at the end
// of its interval that lowers the margin), so an image is breakable iff that minimum is
// negative for some j. The reference must break every breakable image and no other.
#include "whitebox/apgd.h"

#include <gtest/gtest.h>
#include <torch/script.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "data/datasets.h"
#include "oracle/classifier.h"
#include "oracle/oracle.h"
#include "whitebox/fab.h"

namespace advbo::whitebox {
namespace {

namespace fs = std::filesystem;
constexpr int kD = 784, kClasses = 10;

class LinearModel : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("advbo_apgd_test_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    // Two kinds of classes make CE's gradient misleading: classes 0-4 have large biases and
    // small weights (high clean logits that barely move), classes 5-9 small biases and large
    // weights (low clean logits, but the ones a perturbation can lift past the label). The
    // softmax weights CE's gradient towards the first kind, so an image breakable only
    // through the second kind needs the targeted runs (APGD-T), not CE's few steps.
    torch::manual_seed(8);
    w_ = torch::randn({kD, kClasses});
    b_ = torch::zeros({kClasses});
    for (int j = 0; j < kClasses; ++j) {
      const bool loud = j < 5;
      w_.select(1, j).mul_(loud ? 0.002 : 0.03);
      b_[j] = loud ? 1.0 + 0.05 * j : 0.5;
    }
    w_ = w_.contiguous();
    torch::jit::Module m("Linear");
    m.register_parameter("w", w_, false);
    m.register_parameter("b", b_, false);
    m.define(
        "def forward(self, x):\n    return torch.addmm(self.b, torch.flatten(x, 1), self.w)\n");
    m.save((dir_ / "linear.pt").string());
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }

  // Closed-form smallest margin over the ball of radius r (float pixels) around x.
  static double WorstMargin(const float* x, int y, double r) {
    auto w = w_.accessor<float, 2>();
    auto b = b_.accessor<float, 1>();
    double worst = std::numeric_limits<double>::infinity();
    for (int j = 0; j < kClasses; ++j) {
      if (j == y) continue;
      double m = b[y] - b[j];
      for (int i = 0; i < kD; ++i) {
        const double a = static_cast<double>(w[i][y]) - w[i][j];
        const double lo = std::max(0.0, x[i] - r), hi = std::min(1.0, x[i] + r);
        m += std::min(a * lo, a * hi);
      }
      worst = std::min(worst, m);
    }
    return worst;
  }

  // Closed-form minimal L_inf distance (with the [0, 1] box) at which class t overtakes y:
  // the smallest r whose ball holds a point with z_t >= z_y; the largest gain of z_t - z_y
  // over the ball grows with r, so bisection finds it.
  static double MinimalDistance(const float* x, int y, int t) {
    auto w = w_.accessor<float, 2>();
    auto b = b_.accessor<float, 1>();
    auto best_gain = [&](double r) {
      double g = static_cast<double>(b[t]) - b[y];
      for (int i = 0; i < kD; ++i) {
        const double a = static_cast<double>(w[i][t]) - w[i][y];
        const double lo = std::max(0.0, x[i] - r), hi = std::min(1.0, x[i] + r);
        g += std::max(a * lo, a * hi);
      }
      return g;
    };
    double lo = 0, hi = 1;
    if (best_gain(hi) < 0) return std::numeric_limits<double>::infinity();
    for (int k = 0; k < 60; ++k) (best_gain(0.5 * (lo + hi)) >= 0 ? hi : lo) = 0.5 * (lo + hi);
    return hi;
  }

  // The class with the highest clean logit other than y (the first target of APGD-T/FAB-T).
  static int TopOther(const float* x, int y) {
    auto w = w_.accessor<float, 2>();
    auto b = b_.accessor<float, 1>();
    int best = -1;
    double best_z = -std::numeric_limits<double>::infinity();
    for (int j = 0; j < kClasses; ++j) {
      if (j == y) continue;
      double z = b[j];
      for (int i = 0; i < kD; ++i) z += static_cast<double>(w[i][j]) * x[i];
      if (z > best_z) best_z = z, best = j;
    }
    return best;
  }

  static int Predict(const float* x) {
    auto w = w_.accessor<float, 2>();
    auto b = b_.accessor<float, 1>();
    int best = 0;
    double best_z = -std::numeric_limits<double>::infinity();
    for (int j = 0; j < kClasses; ++j) {
      double z = b[j];
      for (int i = 0; i < kD; ++i) z += static_cast<double>(w[i][j]) * x[i];
      if (z > best_z) best_z = z, best = j;
    }
    return best;
  }

  static std::string Path() { return (dir_ / "linear.pt").string(); }
  static fs::path dir_;
  static torch::Tensor w_, b_;
};
fs::path LinearModel::dir_;
torch::Tensor LinearModel::w_, LinearModel::b_;

// Images on the 1/255 grid, labelled with the model's own class (all correctly classified).
void MakeImages(int n, std::vector<float>* x, std::vector<int>* y, std::vector<int>* idx,
                int (*predict)(const float*)) {
  std::mt19937 g(3);
  std::uniform_int_distribution<int> u(0, 255);
  x->resize(static_cast<size_t>(n) * kD);
  for (auto& v : *x) v = static_cast<float>(u(g)) / 255.0f;
  for (int i = 0; i < n; ++i) {
    y->push_back(predict(x->data() + static_cast<size_t>(i) * kD));
    idx->push_back(i);
  }
}

struct Tally {
  int breakable = 0, missed = 0;
};

// Runs the reference at radius eps (float or grid) with options `o` and checks it against
// the closed form (with `strict`, every verdict must match); returns how many images were
// breakable and how many of those it missed.
Tally CheckAgainstClosedForm(double eps, ApgdOptions o, bool strict, const std::string& model,
                             double (*worst)(const float*, int, double),
                             int (*predict)(const float*)) {
  std::vector<float> x;
  std::vector<int> y, idx;
  MakeImages(60, &x, &y, &idx, predict);
  const bool grid = o.grid;
  o.batch = 32;
  const auto res = RunApgdReference(model, std::nullopt, true, x, y, idx, 1, 28, 28, eps, o);
  const double r = grid ? oracle::GridRadius(eps) : eps;
  Tally t;
  int checked = 0;
  for (size_t i = 0; i < res.size(); ++i) {
    const float* xi = x.data() + i * kD;
    const double m = worst(xi, y[i], r);
    // An image within 2 % of the decision boundary's worst case is left out: float rounding
    // may decide it either way.
    if (std::abs(m) < 0.02 * std::abs(worst(xi, y[i], 0))) continue;
    ++checked;
    t.breakable += m < 0;
    t.missed += m < 0 && res[i].robust;
    if (strict) EXPECT_EQ(res[i].robust, m >= 0) << "image " << i << " closed-form margin " << m;
    if (!res[i].robust) {
      EXPECT_LE(res[i].linf, r + 1e-6);
      EXPECT_NE(predict(res[i].adversarial.data()), y[i]) << "image " << i;
      for (int p = 0; p < kD; ++p) {
        EXPECT_GE(res[i].adversarial[p], 0.0f);
        EXPECT_LE(res[i].adversarial[p], 1.0f);
        if (grid) {
          const float k = res[i].adversarial[p] * 255.0f;
          EXPECT_NEAR(k, std::round(k), 1e-3) << "off the grid";
        }
      }
    }
  }
  EXPECT_GE(checked, 50);
  return t;
}

TEST_F(LinearModel, BreaksExactlyTheBreakableImagesInFloat) {
  const Tally t =
      CheckAgainstClosedForm(3.0 / 255, ApgdOptions{}, true, Path(), WorstMargin, Predict);
  // The radius splits the images: both verdicts are exercised.
  EXPECT_GT(t.breakable, 5);
  EXPECT_LT(t.breakable, 55);
  EXPECT_EQ(t.missed, 0);
}

TEST_F(LinearModel, BreaksExactlyTheBreakableImagesOnTheGrid) {
  // 0.0137 is 3.49/255: 8-bit images can move 3/255 per pixel, and only breaks that hold
  // after rounding onto the grid count.
  ApgdOptions o;
  o.grid = true;
  const Tally t = CheckAgainstClosedForm(0.0137, o, true, Path(), WorstMargin, Predict);
  EXPECT_GT(t.breakable, 5);
  EXPECT_LT(t.breakable, 55);
}

TEST_F(LinearModel, TheInstanceDefeatsAWeakAttack) {
  // The same images against a weak attack (3 steps of APGD-CE, no targeted runs): it misses
  // breakable images, so the two tests above can fail.
  ApgdOptions weak;
  weak.iterations = 3;
  weak.target_classes = 0;
  const Tally t = CheckAgainstClosedForm(3.0 / 255, weak, false, Path(), WorstMargin, Predict);
  EXPECT_GT(t.missed, 3) << "of " << t.breakable << " breakable images";
}

// FAB-T alone (no APGD run): the reference's options with only its runs.
ApgdOptions FabOnly(int targets) {
  ApgdOptions o;
  o.restarts = 0;
  o.target_classes = 0;
  o.fab_target_classes = targets;
  return o;
}

TEST_F(LinearModel, FabTFindsTheMinimalLinfPerturbation) {
  // On a linear model FAB's linearisation is exact, so its first step from the clean image
  // is the minimal L_inf point past the hyperplane z_t = z_y (times the overshoot eta), and
  // its later steps come back towards it. With a ball as large as the box every image
  // breaks, and the distance of the kept break is the closed-form minimum for the first
  // target, up to FAB's overshoot and bias (0.5 % here; 1 % allowed).
  std::vector<float> x;
  std::vector<int> y, idx;
  MakeImages(30, &x, &y, &idx, Predict);
  ApgdOptions o = FabOnly(1);
  o.batch = 16;
  const auto res = RunApgdReference(Path(), std::nullopt, true, x, y, idx, 1, 28, 28, 1.0, o);
  int compared = 0;
  for (size_t i = 0; i < res.size(); ++i) {
    const float* xi = x.data() + i * kD;
    const double r = MinimalDistance(xi, y[i], TopOther(xi, y[i]));
    if (!std::isfinite(r)) continue;
    ++compared;
    ASSERT_FALSE(res[i].robust) << "image " << i << " minimal distance " << r;
    EXPECT_EQ(res[i].broken_by, "fab-t");
    EXPECT_NE(Predict(res[i].adversarial.data()), y[i]) << "image " << i;
    EXPECT_GE(res[i].linf, r * (1 - 1e-4)) << "image " << i << ": below the minimum";
    EXPECT_LE(res[i].linf, r * 1.01) << "image " << i << ": the minimum is " << r;
  }
  EXPECT_GE(compared, 25);
}

TEST_F(LinearModel, FabTBreaksExactlyTheBreakableImagesInFloat) {
  // FAB-T alone on all 9 other classes, at the radius of the APGD test: its breaks, checked
  // inside the ball, are exactly the closed form's breakable images.
  const Tally t = CheckAgainstClosedForm(3.0 / 255, FabOnly(9), true, Path(), WorstMargin, Predict);
  EXPECT_GT(t.breakable, 5);
  EXPECT_EQ(t.missed, 0);
}

TEST(FabProjection, MinimalLinfStepOntoTheHyperplaneInTheBox) {
  // Two rows of 4 coordinates. Row 0: w = (1, -2, 0, 1), c = 0.6 from p = (0.5, 0.5, 0.5,
  // 0.95): without the box every moving coordinate would go 0.6 / 4 = 0.15; coordinate 3 has
  // only 0.05 of room (up), so the others share the rest: r = (0.6 - 0.05) / 3 = 0.18333.
  // Row 1: the box cannot reach c = 10, so every moving coordinate goes to its end.
  const torch::Tensor p = torch::tensor({{0.5f, 0.5f, 0.5f, 0.95f}, {0.2f, 0.7f, 0.4f, 0.0f}});
  const torch::Tensor w = torch::tensor({{1.0f, -2.0f, 0.0f, 1.0f}, {1.0f, -1.0f, 0.0f, 1.0f}});
  const torch::Tensor c = torch::tensor({0.6f, 10.0f});
  const torch::Tensor d = ProjectLinfOntoHyperplaneInBox(p, w, c);
  const float r = 0.55f / 3;
  EXPECT_NEAR(d[0][0].item<float>(), r, 1e-6);
  EXPECT_NEAR(d[0][1].item<float>(), -r, 1e-6);
  EXPECT_EQ(d[0][2].item<float>(), 0.0f);
  EXPECT_NEAR(d[0][3].item<float>(), 0.05f, 1e-6);
  EXPECT_NEAR((w[0] * d[0]).sum().item<float>(), 0.6f, 1e-5);
  EXPECT_NEAR(d[1][0].item<float>(), 0.8f, 1e-6);
  EXPECT_NEAR(d[1][1].item<float>(), -0.7f, 1e-6);
  EXPECT_EQ(d[1][2].item<float>(), 0.0f);
  EXPECT_NEAR(d[1][3].item<float>(), 1.0f, 1e-6);
  // The other side: a negative c moves the other way.
  const torch::Tensor back = ProjectLinfOntoHyperplaneInBox(p, w, -c);
  EXPECT_NEAR((w[0] * back[0]).sum().item<float>(), -0.6f, 1e-5);
}

TEST(ApgdCheckpoints, ThePapersSchedule) {
  EXPECT_EQ(ApgdCheckpoints(100), (std::vector<int>{0, 22, 41, 57, 70, 80, 87, 93, 99}));
  EXPECT_EQ(ApgdCheckpoints(1), (std::vector<int>{0, 1}));
}

TEST(ApgdOptions, OutOfRangeIsRefused) {
  ApgdOptions o;
  o.iterations = 0;
  EXPECT_THROW(o.Validate(), std::invalid_argument);
  o = ApgdOptions{};
  o.rho = 1.5;
  EXPECT_THROW(o.Validate(), std::invalid_argument);
  o = ApgdOptions{};
  o.fab_eta = 0.5;
  EXPECT_THROW(o.Validate(), std::invalid_argument);
  o = FabOnly(0);  // no run at all
  EXPECT_THROW(o.Validate(), std::invalid_argument);
}

TEST(RunApgdReference, MissingModelNamesTheFile) {
  try {
    RunApgdReference("/nonexistent/m.pt", std::nullopt, true, std::vector<float>(784, 0.5f), {1},
                     {0}, 1, 28, 28, 0.1, ApgdOptions{});
    ADD_FAILURE();
  } catch (const oracle::ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/m.pt"), std::string::npos);
  }
}

}  // namespace
}  // namespace advbo::whitebox

namespace advbo::whitebox {
namespace {

// The model card's white-box numbers reproduce: the committed per-image reference of
// models/mnist_fgsm_overfit.pt (tools/results/at_reference/mnist_fgsm_overfit_8bit,
// gzip-compressed, made by `advbo evaluate
// --reference-only` on the first 1,000 test images) against a fresh run on its first 24
// images -- the same random starts (seeded per image), so the same verdicts.
TEST(ShippedReference, StressCaseCardReproducesImageByImage) {
  const std::string root = ADVBO_SOURCE_DIR;
  const std::string path =
      root + "/tools/results/at_reference/mnist_fgsm_overfit_8bit/reference.jsonl.gz";
  std::ifstream file(path, std::ios::binary);
  ASSERT_TRUE(file.good()) << path;
  const std::vector<uint8_t> gz((std::istreambuf_iterator<char>(file)),
                                std::istreambuf_iterator<char>());
  const std::vector<uint8_t> text = data::GunzipIfCompressed(gz, path);
  std::istringstream in(std::string(text.begin(), text.end()));
  std::vector<nlohmann::json> committed;
  for (std::string line; std::getline(in, line) && committed.size() < 24;)
    committed.push_back(nlohmann::json::parse(line));
  const data::ImageSet set = data::ReadMnist(root + "/data/mnist/t10k-images-idx3-ubyte.gz",
                                             root + "/data/mnist/t10k-labels-idx1-ubyte.gz");
  std::vector<float> x;
  std::vector<int> y, idx;
  for (const auto& r : committed) {
    const int i = r["image_index"].get<int>();
    x.insert(x.end(), set.image(i), set.image(i) + set.image_size());
    y.push_back(r["true_class"].get<int>());
    idx.push_back(i);
  }
  ApgdOptions o;
  o.grid = true;
  o.threads = 1;
  const auto res = RunApgdReference(root + "/models/mnist_fgsm_overfit.pt", std::nullopt, true, x,
                                    y, idx, 1, 28, 28, 0.3, o);
  int robust = 0, mismatches = 0;
  for (size_t k = 0; k < res.size(); ++k) {
    robust += res[k].robust;
    mismatches += res[k].robust != committed[k]["reference_robust"].get<bool>();
  }
  EXPECT_EQ(mismatches, 0);
  EXPECT_GT(robust, 5);  // both verdicts occur
  EXPECT_LT(robust, 21);
}

}  // namespace
}  // namespace advbo::whitebox
