// The eps-ball (oracle/ball.h): radii in closed form, the errors where a ball enters, and the
// invariant every projection keeps -- what comes out lies in the ball, in [0, 1] and (8-bit)
// on the grid, checked in double independently of the ball's own code.
#include "oracle/ball.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <utility>
#include <vector>

namespace advbo::oracle {
namespace {

// An 8-bit clean image of d pixels with grid values drawn from `rng`.
std::vector<float> GridImage(size_t d, std::mt19937* rng) {
  std::uniform_int_distribution<int> k(0, 255);
  std::vector<float> x(d);
  for (auto& v : x) v = static_cast<float>(k(*rng)) / 255.0f;
  return x;
}

double LinfDistance(const std::vector<float>& a, const std::vector<float>& b) {
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i)
    m = std::max(m, std::abs(static_cast<double>(a[i]) - static_cast<double>(b[i])));
  return m;
}

double L2Distance(const std::vector<float>& a, const std::vector<float>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double t = static_cast<double>(a[i]) - static_cast<double>(b[i]);
    s += t * t;
  }
  return std::sqrt(s);
}

bool OnGrid(float v) {
  const double k = static_cast<double>(v) * 255.0;
  return std::abs(k - std::round(k)) < 1e-4;
}

TEST(BallShape, RadiiInClosedForm) {
  // 0.3 = 76.5/255: 8-bit L_inf queries keep to 76/255; 8/255 is on the grid.
  EXPECT_DOUBLE_EQ((BallShape{Norm::kLinf, 0.3, PixelSpace::k8bit}.EnforcedRadius()), 76 / 255.0);
  EXPECT_DOUBLE_EQ((BallShape{Norm::kLinf, 8 / 255.0, PixelSpace::k8bit}.EnforcedRadius()),
                   8 / 255.0);
  EXPECT_DOUBLE_EQ((BallShape{Norm::kLinf, 0.3, PixelSpace::kFloat}.EnforcedRadius()), 0.3);
  // L2 and the rescaled ball are held to eps itself; their per-pixel step is still the grid's.
  const BallShape l2{Norm::kL2, 0.5, PixelSpace::k8bit};
  EXPECT_DOUBLE_EQ(l2.EnforcedRadius(), 0.5);
  EXPECT_DOUBLE_EQ(l2.QueryRadius(), 127 / 255.0);
  const BallShape rescaled{Norm::kLinf, 0.3, PixelSpace::k8bit, true};
  EXPECT_DOUBLE_EQ(rescaled.EnforcedRadius(), 0.3);
  EXPECT_DOUBLE_EQ(rescaled.QueryRadius(), 76 / 255.0);
}

TEST(BallShape, CheckRefusesRadiiOutsideTheNormsRange) {
  for (double bad : {0.0, -0.1, 1.5, std::nan("")})
    EXPECT_THROW((BallShape{Norm::kLinf, bad}.Check()), std::invalid_argument) << bad;
  EXPECT_NO_THROW((BallShape{Norm::kLinf, 1.0}.Check()));
  EXPECT_NO_THROW((BallShape{Norm::kL2, 2.0}.Check()));
  EXPECT_THROW((BallShape{Norm::kL2, kMaxL2Radius * 1.01}.Check()), std::invalid_argument);
  EXPECT_THROW((BallShape{Norm::kL2, 0.5, PixelSpace::kFloat, true}.Check()),
               std::invalid_argument);
  try {
    BallShape{Norm::kLinf, 2.0}.Check("eps");
    ADD_FAILURE() << "accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), "eps must be an L_inf radius in (0, 1] (pixel units), got 2");
  }
}

TEST(Ball, MakeRefusesWhatNo8BitQueryCanMeet) {
  const std::vector<float> on_grid = {0.0f, 10 / 255.0f}, off_grid = {0.0f, 0.5f / 255.0f};
  EXPECT_THROW(Ball::Make({Norm::kLinf, 0.1, PixelSpace::k8bit}, off_grid.data(), 2),
               std::invalid_argument);
  EXPECT_THROW(Ball::Make({Norm::kLinf, 0.5 / 255, PixelSpace::k8bit}, on_grid.data(), 2),
               std::invalid_argument);
  EXPECT_THROW(Ball::Make({Norm::kL2, 0.5, PixelSpace::kFloat, true}, on_grid.data(), 2),
               std::invalid_argument);
  EXPECT_NO_THROW(Ball::Make({Norm::kLinf, 0.1, PixelSpace::kFloat}, off_grid.data(), 2));
}

TEST(Ball, EightBitBoxCountsGridSteps) {
  // float(8/255) = 0.03137255 lies above the double 8/255 = 0.031372549, and for 36 of the 248
  // clean values k0 the float difference float((k0 + 8)/255) - float(k0/255) does too; the box
  // is counted in grid steps all the same: 8 steps each way around every clean value (clipped
  // to 0..255), as the saved PNG's bytes differ. At eps = 0.3 (76.5/255): 76 steps.
  for (const auto& [eps, steps] : {std::pair<double, long>{8 / 255.0, 8}, {0.3, 76}}) {
    std::vector<float> clean(256);
    for (long k = 0; k < 256; ++k) clean[k] = GridValue(k);
    const auto ball = Ball::Make({Norm::kLinf, eps, PixelSpace::k8bit}, clean.data(), 256);
    long beyond_double = 0;
    for (long k = 0; k < 256; ++k) {
      EXPECT_EQ(ball->upper()[k], GridValue(std::min(255L, k + steps))) << k;
      EXPECT_EQ(ball->lower()[k], GridValue(std::max(0L, k - steps))) << k;
      beyond_double += static_cast<double>(ball->upper()[k]) - clean[k] > eps;
    }
    if (steps == 8) EXPECT_GT(beyond_double, 0);  // the case a test in double would drop
    // The box's corners are in the query set; one step further is not.
    std::vector<float> up(clean.begin(), clean.end());
    for (long k = 0; k < 256; ++k) up[k] = ball->upper()[k];
    EXPECT_TRUE(ball->Contains(up.data()));
    up[0] = GridValue(steps + 1);
    EXPECT_FALSE(ball->Contains(up.data()));
  }
}

TEST(Ball, ProjectionsStayInTheQuerySet) {
  std::mt19937 rng(7);
  std::normal_distribution<float> noise(0.0f, 0.4f);
  const size_t d = 300;
  struct Case {
    BallShape shape;
    const char* name;
  };
  const Case cases[] = {
      {{Norm::kLinf, 0.3, PixelSpace::kFloat}, "linf float"},
      {{Norm::kLinf, 8 / 255.0, PixelSpace::k8bit}, "linf 8bit 8/255"},
      {{Norm::kLinf, 0.031, PixelSpace::k8bit}, "linf 8bit 0.031"},
      {{Norm::kL2, 1.0, PixelSpace::kFloat}, "l2 float"},
      {{Norm::kL2, 0.5, PixelSpace::k8bit}, "l2 8bit"},
  };
  for (const Case& c : cases) {
    for (int trial = 0; trial < 20; ++trial) {
      const std::vector<float> clean = GridImage(d, &rng);
      const auto ball = Ball::Make(c.shape, clean.data(), d);
      std::vector<float> x(d);
      for (size_t i = 0; i < d; ++i) x[i] = clean[i] + noise(rng);
      x[trial % d] = std::nanf("");  // non-finite pixels become the clean one
      ball->Project(x.data(), 1);
      if (c.shape.norm == Norm::kLinf && c.shape.pixels == PixelSpace::k8bit) {
        // On the grid the L_inf ball is counted in steps (a float difference may exceed the
        // double radius by float rounding).
        long steps = 0;
        for (size_t i = 0; i < d; ++i)
          steps =
              std::max(steps, std::abs(std::lround(x[i] * 255.0) - std::lround(clean[i] * 255.0)));
        EXPECT_LE(steps, std::lround(GridRadius(c.shape.radius) * 255.0)) << c.name;
      } else {
        const double dist =
            c.shape.norm == Norm::kL2 ? L2Distance(x, clean) : LinfDistance(x, clean);
        EXPECT_LE(dist, c.shape.radius) << c.name;
      }
      EXPECT_EQ(x[trial % d], clean[trial % d]) << c.name;
      for (size_t i = 0; i < d; ++i) {
        ASSERT_GE(x[i], 0.0f) << c.name;
        ASSERT_LE(x[i], 1.0f) << c.name;
        if (c.shape.pixels == PixelSpace::k8bit) ASSERT_TRUE(OnGrid(x[i])) << c.name << " " << i;
      }
      EXPECT_TRUE(ball->Contains(x.data())) << c.name;
      // Projection is idempotent: a point of the set is left where it is.
      std::vector<float> again = x;
      ball->Project(again.data(), 1);
      EXPECT_EQ(again, x) << c.name;
    }
  }
}

TEST(Ball, RescaledBallMapsInsteadOfClipping) {
  // (x0 + clip(delta) + eps) / (1 + 2 eps): a clean 0.5 pixel with delta +0.3 at eps 0.3 goes
  // to 1.1 / 1.6 = 0.6875, the clean pixel itself to 0.8 / 1.6 = 0.5.
  const std::vector<float> clean = {0.5f, 0.5f};
  const auto ball = Ball::Make({Norm::kLinf, 0.3, PixelSpace::kFloat, true}, clean.data(), 2);
  std::vector<float> x = {0.9f, 0.5f};
  ball->Project(x.data(), 1);
  EXPECT_FLOAT_EQ(x[0], 1.1f / 1.6f);
  EXPECT_FLOAT_EQ(x[1], 0.5f);
  EXPECT_TRUE(ball->Contains(x.data()));
}

TEST(Ball, ProjectToBoxLeavesTheBallButNotTheBox) {
  const std::vector<float> clean = {128 / 255.0f, 128 / 255.0f};
  const auto ball = Ball::Make({Norm::kLinf, 0.1, PixelSpace::k8bit}, clean.data(), 2);
  std::vector<float> x = {0.8f, 1.7f};
  ball->ProjectToBox(x.data(), 1);
  EXPECT_EQ(x[0], 204 / 255.0f);  // 0.8 = 204/255, outside the ball of 0.1 around 128/255
  EXPECT_EQ(x[1], 1.0f);
  EXPECT_FALSE(ball->Contains(x.data()));
}

TEST(Ball, QuantizeRoundsOntoTheGridInsideTheBall) {
  // Clean pixels on the 8-bit grid (as loaded from 8-bit data); eps = 0.3 = 76.5/255.
  const std::vector<float> clean = {0.0f, 100 / 255.0f, 1.0f, 128 / 255.0f, 50 / 255.0f};
  const std::vector<float> adv = {0.3f, 100 / 255.0f - 0.3f, 0.7f, 128 / 255.0f + 0.1f, 0.2f};
  // The query space does not matter: a float run's result is saved as 8-bit too.
  for (PixelSpace p : {PixelSpace::kFloat, PixelSpace::k8bit}) {
    const auto ball = Ball::Make({Norm::kLinf, 0.3, p}, clean.data(), clean.size());
    const std::vector<float> q = ball->Quantize(adv);
    // round(0.3 * 255) = 77 would be 0.302 > 0.3: one step toward the clean pixel.
    EXPECT_EQ(q[0], 76 / 255.0f);
    EXPECT_EQ(q[1], 24 / 255.0f);   // 100 - 76.5 -> 23.5 rounds to 24 (inside)
    EXPECT_EQ(q[2], 179 / 255.0f);  // 255 - 76.5 = 178.5 -> 179 (178 would leave)
    EXPECT_EQ(q[3], std::round((128 / 255.0f + 0.1f) * 255.0f) / 255.0f);
    EXPECT_EQ(q[4], 51 / 255.0f);
    for (size_t i = 0; i < q.size(); ++i) {
      EXPECT_LE(std::abs(static_cast<double>(q[i]) - clean[i]), 0.3) << i;
      EXPECT_TRUE(OnGrid(q[i])) << i;
    }
    EXPECT_THROW(ball->Quantize({0.1f}), std::invalid_argument);
  }
}

TEST(Ball, QuantizeL2KeepsTheL2Ball) {
  std::mt19937 rng(3);
  const size_t d = 200;
  const std::vector<float> clean = GridImage(d, &rng);
  const auto ball = Ball::Make({Norm::kL2, 0.5, PixelSpace::kFloat}, clean.data(), d);
  std::normal_distribution<float> noise(0.0f, 0.05f);
  std::vector<float> x(d);
  for (size_t i = 0; i < d; ++i) x[i] = clean[i] + noise(rng);
  ball->Project(x.data(), 1);
  const std::vector<float> q = ball->Quantize(x);
  EXPECT_LE(L2Distance(q, clean), 0.5);
  for (float v : q) EXPECT_TRUE(OnGrid(v));
}

}  // namespace
}  // namespace advbo::oracle
