// SignHunter (Al-Dujaili & O'Reilly, ICLR 2020, Algorithm 1; attacks/signhunter) against a
// linear model, whose objective over the L_inf ball is largest at a known vertex (
// SignHunter had no test of its own).
#include "attacks/signhunter/signhunter.h"

#include <gtest/gtest.h>

#include <vector>

#include "attacks/linear_model.h"
#include "oracle/oracle.h"

namespace advbo::attacks {
namespace {

// A linear objective a . x over the ball is largest at the vertex x0 + eps sign(a). SignHunter
// flips chunks of its sign vector level by level and keeps a flip only when the objective
// rises; at the last level (single pixels) a flip of pixel i rises exactly when its sign
// disagrees with a_i. So after its first pass over all levels -- 1 + (1 + 2 + ... + 64) = 128
// queries on 64 pixels -- its sign vector is sign(a), exactly, whatever the coarser levels did.
TEST(SignHunter, OnePassOverTheLevelsFindsTheBestVertexOfALinearObjective) {
  constexpr int kSide = 8, kD = kSide * kSide;
  const Eigen::VectorXd a = testing::MixedSignWeights(kD, 3);
  const std::vector<float> x0(kD, 0.5f);
  std::vector<std::vector<float>> seen;
  auto model = testing::LinearModel(a, x0, -50.0, kSide, &seen);  // never a success
  const double eps = 0.05;
  oracle::Referee orc(*model, x0.data(), 0, -1, eps, 128);
  bo::Rng rng(0);
  const AttackResult r = SignHunterAttack().Run(orc, rng, nullptr);
  ASSERT_EQ(seen.size(), 128u);
  for (const auto& q : seen)  // every query a vertex of the ball
    for (int i = 0; i < kD; ++i) ASSERT_NEAR(std::abs(q[i] - x0[i]), eps, 1e-6);
  for (int i = 0; i < kD; ++i)
    EXPECT_FLOAT_EQ(r.adversarial[i], static_cast<float>(x0[i] + (a(i) > 0 ? eps : -eps))) << i;
  EXPECT_NEAR(r.best_objective, -50.0 + eps * a.lpNorm<1>(), 1e-4);
}

}  // namespace
}  // namespace advbo::attacks
