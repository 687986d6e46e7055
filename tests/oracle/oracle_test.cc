// The classifier loader and the query oracle: budget, threat model, output kinds, bad models.
#include "oracle/oracle.h"

#include <gtest/gtest.h>
#include <torch/script.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>

#include "oracle/classifier.h"

namespace advbo::oracle {
namespace {
namespace fs = std::filesystem;

// Writes small TorchScript models defined from C++ into a temp folder.
class Models : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("advbo_oracle_test_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    torch::manual_seed(0);
    torch::Tensor w = torch::randn({784, 10}) * 0.05, b = torch::randn({10});
    Save("linear", w, b, "return torch.addmm(self.b, torch.flatten(x, 1), self.w)");
    Save("softmax", w, b,
         "return torch.softmax(torch.addmm(self.b, torch.flatten(x, 1), self.w), 1)");
    Save("image_out", w, b, "return x");
    Save("nan_out", w, b,
         "return torch.log(torch.addmm(self.b, torch.flatten(x, 1), self.w) * 0.0 - 1.0)");
    Save("cifar_shape", torch::randn({3072, 10}), b,
         "return torch.addmm(self.b, torch.flatten(x, 1), self.w)");
    std::ofstream(dir_ / "garbage.pt") << "this is not a TorchScript archive";
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }
  static void Save(const std::string& name, torch::Tensor w, torch::Tensor b,
                   const std::string& body) {
    torch::jit::Module m("Net");
    m.register_parameter("w", w, false);
    m.register_parameter("b", b, false);
    m.define("def forward(self, x):\n    " + body + "\n");
    m.save((dir_ / (name + ".pt")).string());
  }
  static std::string Path(const std::string& name) { return (dir_ / (name + ".pt")).string(); }
  static fs::path dir_;
};
fs::path Models::dir_;

std::vector<float> RandomImage(int n, uint32_t seed) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> u(0, 1);
  std::vector<float> v(n * 784);
  for (auto& x : v) x = u(g);
  return v;
}

TEST_F(Models, LoadsInfersShapeAndDetectsOutputKind) {
  auto lin = Classifier::Load(Path("linear"));
  EXPECT_EQ(lin->channels(), 1);
  EXPECT_EQ(lin->height(), 28);
  EXPECT_EQ(lin->num_classes(), 10);
  EXPECT_TRUE(lin->outputs_logits());
  auto sm = Classifier::Load(Path("softmax"));
  EXPECT_FALSE(sm->outputs_logits());
  // Same network as logits or as probabilities gives the same log-probabilities.
  std::vector<float> x = RandomImage(4, 1);
  Eigen::MatrixXd a = lin->LogProbabilities(x.data(), 4), b = sm->LogProbabilities(x.data(), 4);
  EXPECT_LT((a - b).cwiseAbs().maxCoeff(), 1e-5);
  EXPECT_LT(((a.array().exp().rowwise().sum()) - 1.0).abs().maxCoeff(), 1e-9);
  // Forcing the wrong kind changes the result (the flag is honoured).
  ClassifierOptions force;
  force.output = OutputKind::kLogits;
  auto forced = Classifier::Load(Path("softmax"), force);
  EXPECT_GT((forced->LogProbabilities(x.data(), 4) - a).cwiseAbs().maxCoeff(), 1e-3);
}

TEST_F(Models, BadModelsGiveClearErrors) {
  auto expect_error = [](const std::string& path, const std::string& needle,
                         ClassifierOptions opt = {}) {
    try {
      Classifier::Load(path, opt);
      ADD_FAILURE() << "expected ModelError for " << path;
    } catch (const ModelError& e) {
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  expect_error((dir_ / "missing.pt").string(), "not found");
  expect_error(Path("garbage"), "not a loadable TorchScript");
  expect_error(Path("image_out"), "output must be [N, classes]");
  expect_error(Path("nan_out"), "non-finite");
  ClassifierOptions mnist_shape;
  mnist_shape.channels = 1;
  mnist_shape.height = 28;
  mnist_shape.width = 28;
  expect_error(Path("cifar_shape"), "rejects input [N, 1, 28, 28]", mnist_shape);
}

TEST_F(Models, OracleEnforcesBudgetAndThreatModel) {
  auto lin = Classifier::Load(Path("linear"));
  std::vector<float> clean = RandomImage(1, 2);
  Eigen::MatrixXd lp0 = lin->LogProbabilities(clean.data(), 1);
  Eigen::Index truth;
  lp0.row(0).maxCoeff(&truth);
  const int target = (truth + 1) % 10;
  const double eps = 0.1;
  Referee o(*lin, clean.data(), static_cast<int>(truth), target, eps, 7);
  long seen = 0;
  double worst = 0;
  o.set_observer([&](const float* img, long index) {
    EXPECT_EQ(index, ++seen);
    for (int i = 0; i < 784; ++i) {
      worst = std::max(worst, std::abs(static_cast<double>(img[i]) - clean[i]));
      ASSERT_TRUE(img[i] >= 0.0f && img[i] <= 1.0f);
    }
  });
  // Wild queries (far outside the ball and [0,1], NaN) are clipped, not evaluated raw.
  std::vector<float> batch(5 * 784);
  for (size_t i = 0; i < batch.size(); ++i)
    batch[i] = (i % 3 == 0) ? 5.0f : (i % 3 == 1 ? -3.0f : NAN);
  QueryResult r = o.Query(batch.data(), 5);
  EXPECT_EQ(o.queries(), 5);
  EXPECT_LE(worst, eps);
  ASSERT_EQ(r.objective.size(), 5);
  // A batch past the budget is refused whole and nothing is counted.
  EXPECT_THROW(o.Query(batch.data(), 3), BudgetExhausted);
  EXPECT_EQ(o.queries(), 5);
  EXPECT_EQ(seen, 5);
  o.Query(batch.data(), 2);
  EXPECT_EQ(o.remaining(), 0);
  EXPECT_THROW(o.Query(batch.data(), 1), BudgetExhausted);
}

TEST_F(Models, RescaleCompatibilityIsTheDocumentedLooserBall) {
  auto lin = Classifier::Load(Path("linear"));
  std::vector<float> clean = RandomImage(1, 4);
  const double eps = 0.3;
  Referee o(*lin, clean.data(), 0, 1, eps, 10);
  o.set_rescale_compat(true);
  std::vector<float> q(784);
  for (int i = 0; i < 784; ++i) q[i] = clean[i] + (i % 2 ? 1.0f : -1.0f);  // beyond +-eps
  o.Project(q.data(), 1);
  double worst = 0;
  for (int i = 0; i < 784; ++i) {
    const double delta = i % 2 ? eps : -eps;
    EXPECT_NEAR(q[i], (clean[i] + delta + eps) / (1 + 2 * eps), 1e-6);
    worst = std::max(worst, std::abs(double(q[i]) - clean[i]));
  }
  EXPECT_LE(worst, 2 * eps / (1 + 2 * eps) + 1e-6);
}

TEST_F(Models, ObjectiveMatchesEquation53AndRecordsFirstSuccess) {
  auto lin = Classifier::Load(Path("linear"));
  std::vector<float> x = RandomImage(3, 3);
  Eigen::MatrixXd lp = lin->LogProbabilities(x.data(), 3);
  Eigen::Index truth;
  lp.row(0).maxCoeff(&truth);
  // eps = 1 makes every image reachable, so the oracle evaluates x unchanged.
  std::vector<float> clean(784, 0.5f);
  for (int target = 0; target < 10; ++target) {
    if (target == truth) continue;
    Referee o(*lin, clean.data(), static_cast<int>(truth), target, 1.0, 10);
    std::vector<float> q = x;
    QueryResult r = o.Query(q.data(), 3);
    for (int b = 0; b < 3; ++b) {
      const double pt = std::exp(lp(b, target));
      const double expected = std::log(pt) - std::log(1.0 - pt);
      EXPECT_NEAR(r.objective(b), expected, 1e-6);
      Eigen::Index arg;
      lp.row(b).maxCoeff(&arg);
      EXPECT_EQ(r.success[b], arg == target);
    }
    long first = -1;
    for (int b = 0; b < 3 && first < 0; ++b)
      if (r.success[b]) first = b + 1;
    EXPECT_EQ(o.first_success_query(), first);
  }
  // Untargeted: y = max_{c != y} log p_c - log p_y; success iff argmax != y.
  Referee u(*lin, clean.data(), static_cast<int>(truth), -1, 1.0, 10);
  std::vector<float> q = x;
  QueryResult r = u.Query(q.data(), 3);
  for (int b = 0; b < 3; ++b) EXPECT_EQ(r.objective(b) > 0, r.success[b]);
  EXPECT_THROW(Referee(*lin, clean.data(), 0, 0, 0.1, 10), std::invalid_argument);
  EXPECT_THROW(Referee(*lin, clean.data(), 0, 1, 0.1, 0), std::invalid_argument);
}

// An 8-bit clean image (every pixel k/255, as read from IDX/PNG), including 0 and 255.
std::vector<float> GridImage(uint32_t seed) {
  std::mt19937 g(seed);
  std::uniform_int_distribution<int> u(0, 255);
  std::vector<float> v(784);
  for (auto& x : v) x = u(g) / 255.0f;
  v[0] = 0.0f;
  v[1] = 1.0f;
  return v;
}

TEST(PixelGrid, ARadiusJustBelowAGridStepIsWarnedAbout) {
  // 0.031 = 7.905/255 enforces 7/255 with 8-bit queries: warned, with the fraction to type.
  const std::string w = GridStepLossWarning(0.031);
  EXPECT_NE(w.find("7/255 = 0.02745"), std::string::npos) << w;
  EXPECT_NE(w.find("--eps 8/255"), std::string::npos) << w;
  EXPECT_NE(GridStepLossWarning(0.03137).find("--eps 8/255"), std::string::npos);
  EXPECT_NE(GridStepLossWarning(0.0313725).find("--eps 8/255"), std::string::npos);
  // Exact multiples, and radii more than 1e-3 below the next step, are not.
  EXPECT_EQ(GridStepLossWarning(8 / 255.0), "");
  EXPECT_EQ(GridStepLossWarning(0.3), "");  // 76.5/255: 77/255 is 0.00196 away
  EXPECT_EQ(GridStepLossWarning(76 / 255.0), "");
  EXPECT_EQ(GridStepLossWarning(0.0), "");
  EXPECT_EQ(DescribeLinfRadius(8 / 255.0), "8/255 = 0.03137");
  EXPECT_EQ(DescribeLinfRadius(0.3), "0.3 = 76.5/255");
}

TEST(PixelGrid, GridRadiusIsTheLargestStepInsideTheBall) {
  EXPECT_DOUBLE_EQ(GridRadius(0.3), 76 / 255.0);
  EXPECT_DOUBLE_EQ(GridRadius(0.05), 12 / 255.0);
  EXPECT_DOUBLE_EQ(GridRadius(8 / 255.0), 8 / 255.0);  // exact multiples stay
  EXPECT_DOUBLE_EQ(GridRadius(0.003), 0.0);
  EXPECT_EQ(ParsePixelSpace("8bit"), PixelSpace::k8bit);
  EXPECT_EQ(ParsePixelSpace("float"), PixelSpace::kFloat);
  EXPECT_THROW(ParsePixelSpace(""), std::invalid_argument);
  EXPECT_THROW(ParsePixelSpace("8-bit"), std::invalid_argument);
  std::vector<float> g = GridImage(1);
  EXPECT_TRUE(OnPixelGrid(g.data(), g.size()));
  g[5] += 0.001f;
  EXPECT_FALSE(OnPixelGrid(g.data(), g.size()));
}

TEST_F(Models, EightBitQueriesLieOnTheGridInsideTheBall) {
  auto lin = Classifier::Load(Path("linear"));
  for (double eps : {0.3, 0.05, 8 / 255.0}) {
    std::vector<float> clean = GridImage(7);
    Referee o(*lin, clean.data(), 0, 1, eps, 100);
    o.set_pixel_space(PixelSpace::k8bit);
    EXPECT_DOUBLE_EQ(o.query_radius(), GridRadius(eps));
    long evaluated = 0;
    o.set_observer([&](const float* img, long) {
      ++evaluated;
      for (int i = 0; i < 784; ++i) {
        const double k = static_cast<double>(img[i]) * 255.0;
        ASSERT_NEAR(k, std::round(k), 1e-3) << "pixel " << i << " off the grid";
        // Inside the ball, counted in grid steps (GridRange).
        ASSERT_LE(std::abs(std::lround(k) - std::lround(clean[i] * 255.0)),
                  std::lround(GridRadius(eps) * 255.0))
            << "pixel " << i;
        ASSERT_TRUE(img[i] >= 0.0f && img[i] <= 1.0f);
      }
    });
    // Random, wild and NaN queries; after projection each is on the grid in the ball.
    std::mt19937 g(3);
    std::uniform_real_distribution<float> u(-0.6f, 0.6f);
    std::vector<float> batch(20 * 784);
    for (size_t i = 0; i < batch.size(); ++i) batch[i] = clean[i % 784] + u(g);
    batch[3] = NAN;
    batch[784 + 4] = INFINITY;
    o.Query(batch.data(), 20);
    EXPECT_EQ(evaluated, 20);
    EXPECT_EQ(batch[3], clean[3]);
    // The saturated query +-radius reaches the largest grid step of the ball.
    std::vector<float> sat(784), want(784);
    for (int i = 0; i < 784; ++i) {
      sat[i] = clean[i] + static_cast<float>(i % 2 ? o.query_radius() : -o.query_radius());
      const long kc = std::lround(clean[i] * 255.0), r = std::lround(GridRadius(eps) * 255);
      // kc +- r: the ball is counted in grid steps, also where float grid values lie a hair
      // further apart than eps (eps an exact multiple of 1/255).
      const long k = std::clamp(kc + (i % 2 ? r : -r), 0L, 255L);
      want[i] = k == kc ? clean[i] : k / 255.0f;
    }
    o.Project(sat.data(), 1);
    for (int i = 0; i < 784; ++i) ASSERT_EQ(sat[i], want[i]) << "pixel " << i << " eps " << eps;
    // A query already on the grid is unchanged; unperturbed pixels keep the clean bits.
    std::vector<float> same = want;
    o.Project(same.data(), 1);
    EXPECT_EQ(same, want);
    std::vector<float> c2 = clean;
    o.Project(c2.data(), 1);
    EXPECT_EQ(c2, clean);
  }
}

TEST_F(Models, EightBitNeedsGridDataAndOneStep) {
  auto lin = Classifier::Load(Path("linear"));
  std::vector<float> off = RandomImage(1, 5);  // float pixels, not on the grid
  Referee o(*lin, off.data(), 0, 1, 0.3, 10);
  EXPECT_THROW(o.set_pixel_space(PixelSpace::k8bit), std::invalid_argument);
  EXPECT_EQ(o.pixel_space(), PixelSpace::kFloat);
  std::vector<float> clean = GridImage(2);
  Referee tiny(*lin, clean.data(), 0, 1, 0.003, 10);
  EXPECT_THROW(tiny.set_pixel_space(PixelSpace::k8bit), std::invalid_argument);
  // Float mode is the default and identical to an oracle switched back to float.
  Referee a(*lin, clean.data(), 0, 1, 0.1, 10), b(*lin, clean.data(), 0, 1, 0.1, 10);
  b.set_pixel_space(PixelSpace::k8bit);
  b.set_pixel_space(PixelSpace::kFloat);
  std::vector<float> qa = RandomImage(2, 9), qb = qa;
  a.Project(qa.data(), 2);
  b.Project(qb.data(), 2);
  EXPECT_EQ(qa, qb);
  EXPECT_EQ(a.query_radius(), 0.1);
  // Switching after a query is refused.
  a.Query(qa.data(), 1);
  EXPECT_THROW(a.set_pixel_space(PixelSpace::k8bit), std::logic_error);
}

TEST_F(Models, L2QueriesStayInTheBallAndOnTheGrid) {
  auto lin = Classifier::Load(Path("linear"));
  for (PixelSpace space : {PixelSpace::kFloat, PixelSpace::k8bit}) {
    for (double eps : {0.5, 2.0, 3 / 255.0}) {
      std::vector<float> clean = GridImage(11);
      Referee o(*lin, clean.data(), 0, 1, eps, 100);
      o.set_norm(Norm::kL2);
      o.set_pixel_space(space);
      long evaluated = 0;
      o.set_observer([&](const float* img, long) {
        ++evaluated;
        ASSERT_LE(Distance(Norm::kL2, img, clean.data(), 784), eps);
        for (int i = 0; i < 784; ++i) {
          ASSERT_TRUE(img[i] >= 0.0f && img[i] <= 1.0f);
          if (space == PixelSpace::k8bit) {
            const double k = static_cast<double>(img[i]) * 255.0;
            ASSERT_NEAR(k, std::round(k), 1e-3) << "pixel " << i << " off the grid";
          }
        }
      });
      std::mt19937 g(4);
      std::uniform_real_distribution<float> u(-0.3f, 0.3f);
      std::vector<float> batch(20 * 784);
      for (size_t i = 0; i < batch.size(); ++i) batch[i] = clean[i % 784] + u(g) * (i / 784);
      batch[5] = NAN;
      o.Query(batch.data(), 20);
      EXPECT_EQ(evaluated, 20);
      EXPECT_EQ(batch[5], clean[5]);
      // Far outside: the projection lands on the sphere (at 8 bits within one grid step per
      // pixel, sqrt(784) / 255 in all); inside the ball a float query is unchanged.
      std::vector<float> far(784);
      for (int i = 0; i < 784; ++i) far[i] = clean[i] + (i % 2 ? 0.2f : -0.2f);
      o.Project(far.data(), 1);
      const double r = Distance(Norm::kL2, far.data(), clean.data(), 784);
      EXPECT_LE(r, eps);
      EXPECT_GE(r, space == PixelSpace::k8bit ? eps - 28 / 255.0 : eps * (1 - 1e-5));
      if (space == PixelSpace::kFloat) {
        std::vector<float> near = clean;
        near[10] = std::clamp(clean[10] + static_cast<float>(eps / 4), 0.0f, 1.0f);
        std::vector<float> copy = near;
        o.Project(copy.data(), 1);
        EXPECT_EQ(copy, near);
      }
    }
  }
  // The rescale-compat threat model is L_inf only; the norm is set before the first query.
  std::vector<float> clean = GridImage(1);
  Referee rc(*lin, clean.data(), 0, 1, 0.3, 10);
  rc.set_rescale_compat(true);
  EXPECT_THROW(rc.set_norm(Norm::kL2), std::invalid_argument);
  Referee late(*lin, clean.data(), 0, 1, 0.3, 10);
  late.Query(clean.data(), 1);
  EXPECT_THROW(late.set_norm(Norm::kL2), std::logic_error);
  EXPECT_EQ(ParseNorm("l2"), Norm::kL2);
  EXPECT_THROW(ParseNorm("L3"), std::invalid_argument);
}

TEST_F(Models, LabelFeedbackNeverLeaksAScore) {
  auto lin = Classifier::Load(Path("linear"));
  std::vector<float> clean = GridImage(3);
  Eigen::MatrixXd lp0 = lin->LogProbabilities(clean.data(), 1);
  Eigen::Index truth;
  lp0.row(0).maxCoeff(&truth);
  const double eps = 0.05;
  for (PixelSpace space : {PixelSpace::kFloat, PixelSpace::k8bit}) {
    Referee o(*lin, clean.data(), static_cast<int>(truth), -1, eps, 200);
    o.set_pixel_space(space);
    o.set_feedback_type(Feedback::kLabel);
    // Far-away queries are evaluated where they are (clipped to [0, 1] only).
    std::mt19937 g(8);
    std::uniform_real_distribution<float> u(-1.5f, 1.5f);
    std::vector<float> batch(100 * 784);
    for (auto& v : batch) v = u(g);
    std::vector<float> sent = batch;
    double farthest = 0;
    o.set_observer([&](const float* img, long) {
      farthest = std::max(farthest, Distance(Norm::kLinf, img, clean.data(), 784));
    });
    const QueryResult r = o.Query(batch.data(), 100);
    EXPECT_GT(farthest, 0.5);
    EXPECT_EQ(r.log_probs.rows(), 100);
    EXPECT_EQ(r.log_probs.cols(), 0);
    const Eigen::MatrixXd lp = lin->LogProbabilities(batch.data(), 100);
    double closest = INFINITY;
    for (int b = 0; b < 100; ++b) {
      Eigen::Index arg;
      lp.row(b).maxCoeff(&arg);
      EXPECT_EQ(r.predicted[b], arg);
      const bool adv = arg != truth;
      EXPECT_EQ(r.adversarial[b], adv);
      EXPECT_EQ(r.objective(b), adv ? 1.0 : -1.0);  // the label and nothing else
      const double dist = Distance(Norm::kLinf, batch.data() + b * 784, clean.data(), 784);
      EXPECT_EQ(r.success[b], adv && dist <= eps);
      if (adv) closest = std::min(closest, dist);
      for (int i = 0; i < 784; ++i)
        ASSERT_EQ(batch[b * 784 + i], space == PixelSpace::kFloat
                                          ? std::clamp(sent[b * 784 + i], 0.0f, 1.0f)
                                          : batch[b * 784 + i]);
    }
    ASSERT_TRUE(std::isfinite(closest));
    EXPECT_EQ(o.best_distance(), closest);
    EXPECT_EQ(o.best_objective(), -closest);
    EXPECT_EQ(o.best_log_probs().size(), 0);
    ASSERT_FALSE(o.distance_trace().empty());
    EXPECT_EQ(o.distance_trace().back().second, closest);
    EXPECT_FALSE(o.succeeded());  // every adversarial query lies far outside the ball
    // ProjectToBall is the score-feedback projection: inside the L_inf ball.
    std::vector<float> x = batch;
    o.ProjectToBall(x.data(), 1);
    EXPECT_LE(Distance(Norm::kLinf, x.data(), clean.data(), 784), eps);
  }
}

}  // namespace
}  // namespace advbo::oracle
