// Random search (attacks/random, the floor every L_inf attack should beat) on a linear model
// (a test of its own): its queries are the ball's vertices with fair-coin signs, and
// it stops at its first adversarial query.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "attacks/linear_model.h"
#include "attacks/random/random_search.h"
#include "oracle/oracle.h"

namespace advbo::attacks {
namespace {

constexpr int kSide = 8, kD = kSide * kSide;

// Every pixel of every query moves by exactly +-eps (a vertex of the L_inf ball; x0 = 0.5 keeps
// [0, 1] out of play), and the signs are fair coins: 400 queries x 64 pixels give a share of
// plus signs within 0.02 of 1/2 (6 standard deviations) and, per pixel, within 4 standard
// deviations (40) of 200. A ball too small (eps / 2) or a biased coin fails it.
TEST(RandomSearch, QueriesAreFairCoinVerticesOfTheBall) {
  const Eigen::VectorXd a = testing::MixedSignWeights(kD, 11);
  const std::vector<float> x0(kD, 0.5f);
  std::vector<std::vector<float>> seen;
  auto model = testing::LinearModel(a, x0, -50.0, kSide, &seen);  // unreachable
  constexpr long kBudget = 400;
  const double eps = 0.05;
  oracle::Referee orc(*model, x0.data(), 0, -1, eps, kBudget);
  bo::Rng rng(2);
  const AttackResult r = RandomSearch().Run(orc, rng, nullptr);
  EXPECT_FALSE(r.success);
  ASSERT_EQ(seen.size(), static_cast<size_t>(kBudget));  // the whole budget, no more
  std::vector<int> plus(kD, 0);
  for (const auto& q : seen)
    for (int i = 0; i < kD; ++i) {
      ASSERT_NEAR(std::abs(q[i] - x0[i]), eps, 1e-6) << i;
      plus[i] += q[i] > x0[i];
    }
  long total = 0;
  for (int i = 0; i < kD; ++i) {
    EXPECT_NEAR(plus[i], kBudget / 2, 40) << i;
    total += plus[i];
  }
  EXPECT_NEAR(static_cast<double>(total) / (kBudget * kD), 0.5, 0.02);
}

// With one query per model call the run ends at its first adversarial query: every query before
// it scores a . (x - x0) + m0 <= 0, the last one > 0, and the result reports that query's index.
// (m0 = -0.5 against an objective spread of eps |a|_2 ~ 0.4: about one query in nine succeeds.)
TEST(RandomSearch, StopsAtItsFirstAdversarialQuery) {
  const Eigen::VectorXd a = testing::MixedSignWeights(kD, 11);
  const std::vector<float> x0(kD, 0.5f);
  std::vector<std::vector<float>> seen;
  const double m0 = -0.5;
  auto model = testing::LinearModel(a, x0, m0, kSide, &seen);
  oracle::Referee orc(*model, x0.data(), 0, -1, 0.05, 1000);
  RandomSearchOptions o;
  o.batch = 1;
  bo::Rng rng(4);
  const AttackResult r = RandomSearch(o).Run(orc, rng, nullptr);
  ASSERT_TRUE(r.success);
  ASSERT_EQ(static_cast<long>(seen.size()), r.queries);
  auto objective = [&](const std::vector<float>& q) {
    double z = m0;
    for (int i = 0; i < kD; ++i) z += a(i) * (q[i] - x0[i]);
    return z;
  };
  for (size_t k = 0; k + 1 < seen.size(); ++k) EXPECT_LE(objective(seen[k]), 0.0) << k;
  EXPECT_GT(objective(seen.back()), 0.0);
  EXPECT_GT(r.queries, 1);  // the seed gives a few failures first, so the order is tested
}

}  // namespace
}  // namespace advbo::attacks
