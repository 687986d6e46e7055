// SimBA-DCT (Guo et al., ICML 2019, Algorithm 1; attacks/simba) on a linear model (a
// test of its own): one pass over the orthonormal DCT basis gains exactly step * |D a|_1.
#include "attacks/simba/simba.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "attacks/linear_model.h"
#include "oracle/oracle.h"

namespace advbo::attacks {
namespace {

constexpr int kSide = 4, kD = kSide * kSide;

// The orthonormal DCT-II basis image (u, v) of a kSide x kSide image, from its closed form
// (written out here, independently of attacks/common/dct).
std::vector<double> DctImage(int u, int v) {
  const double pi = std::acos(-1.0);
  auto alpha = [](int k) { return std::sqrt((k == 0 ? 1.0 : 2.0) / kSide); };
  std::vector<double> q(kD);
  for (int i = 0; i < kSide; ++i)
    for (int j = 0; j < kSide; ++j)
      q[i * kSide + j] = alpha(u) * alpha(v) * std::cos(pi * (2 * i + 1) * u / (2.0 * kSide)) *
                         std::cos(pi * (2 * j + 1) * v / (2.0 * kSide));
  return q;
}

// On the linear model the score -log p_0 rises with z = a . (x - x0) + m0, so SimBA keeps -step
// along a basis image q when a . q < 0 (one query) and +step otherwise (two queries): after
// its first query and one pass over the 16 basis images it has spent 1 + sum_q (1 + [a . q > 0])
// queries and reached m0 + step sum_q |a . q| -- whatever the order it visits them in. A
// wrong acceptance rule or step sign misses it. (L2 ball of 10 and x0 = 0.5: no projection.)
TEST(SimbaDct, OnePassOverTheBasisGainsStepTimesTheL1NormOfTheDctCoefficients) {
  const Eigen::VectorXd a = testing::MixedSignWeights(kD, 9);
  const std::vector<float> x0(kD, 0.5f);
  std::vector<std::vector<float>> seen;
  const double m0 = -3.0;  // out of reach of one pass (gain <= step * 4 |a|_2 ~ 0.8)
  auto model = testing::LinearModel(a, x0, m0, kSide, &seen);
  long pass = 1;
  double gain = 0;
  for (int u = 0; u < kSide; ++u)
    for (int v = 0; v < kSide; ++v) {
      const std::vector<double> q = DctImage(u, v);
      double aq = 0;
      for (int i = 0; i < kD; ++i) aq += a(i) * q[i];
      pass += aq > 0 ? 2 : 1;
      gain += std::abs(aq);
    }
  oracle::Referee orc(*model, x0.data(), 0, -1, 10.0, pass);
  orc.set_norm(oracle::Norm::kL2);
  SimbaOptions o;
  o.step = 0.05;
  bo::Rng rng(1);
  const AttackResult r = SimbaDctAttack(o).Run(orc, rng, nullptr);
  EXPECT_FALSE(r.success);
  EXPECT_EQ(static_cast<long>(seen.size()), pass);
  EXPECT_NEAR(r.best_objective, m0 + o.step * gain, 1e-5);
  // The accepted image lies at L2 distance step * 4 (16 orthonormal steps) from x0.
  EXPECT_NEAR(orc.DistanceToClean(orc.best_image().data()), o.step * 4, 1e-5);
}

}  // namespace
}  // namespace advbo::attacks
