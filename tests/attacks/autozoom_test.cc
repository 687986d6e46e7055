// AutoZOOM-BiLIN (Tu et al., AAAI 2019, Sec. 3; attacks/autozoom) on a linear model, whose
// gradient in the latent space is known in closed form (a test of its own).
#include "attacks/autozoom/autozoom.h"

#include <gtest/gtest.h>

#include <vector>

#include "attacks/common/latent.h"
#include "attacks/linear_model.h"
#include "oracle/oracle.h"

namespace advbo::attacks {
namespace {

constexpr int kSide = 4, kD = kSide * kSide, kDirections = 4000;

// The images of AutoZOOM's second iteration and its first (the base of its q + 1 queries):
// with latent side s the perturbation is eps * g(u), g the bilinear upsampling; the C&W loss
// of the linear model is -z, so the averaged random-direction estimate of the latent
// gradient of c f + |x - x0|^2 at u = 0 has mean -c eps G^T a (G = g's matrix) and, with
// 4,000 unit directions, noise ~ c eps |a|_2 / 63 against |G^T a| >= 0.5 c eps per coordinate:
// ADAM's first step sets u = lr sign(G^T a). The test checks the base image of the second
// iteration against x0 + eps g(lr sign(G^T a)), computed from g's columns.
void ExpectFirstStepAlongTheLatentGradientSign(int latent_side) {
  const Eigen::VectorXd a = testing::MixedSignWeights(kD, 5);
  const std::vector<float> x0(kD, 0.5f);
  std::vector<std::vector<float>> seen;
  auto model = testing::LinearModel(a, x0, -50.0, kSide, &seen);  // unreachable
  const double eps = 0.05;
  oracle::Referee orc(*model, x0.data(), 0, -1, eps, kDirections + 3);
  AutoZoomOptions o;
  o.latent_side = latent_side;
  o.directions = kDirections;
  bo::Rng rng(3);
  const AttackResult r = AutoZoomAttack(o).Run(orc, rng, nullptr);
  EXPECT_FALSE(r.success);
  ASSERT_EQ(seen.size(), static_cast<size_t>(kDirections + 3));  // q + 1, then 1 + 1
  for (int i = 0; i < kD; ++i) ASSERT_EQ(seen[0][i], x0[i]);     // the first base is x0
  const int dz = latent_side * latent_side;
  Eigen::VectorXd u(dz);
  for (int j = 0; j < dz; ++j) {  // (G^T a)_j = a . g(e_j)
    const std::vector<float> col =
        UpsampleLatent(Eigen::VectorXd::Unit(dz, j), 1, latent_side, kSide, kSide);
    double gj = 0;
    for (int i = 0; i < kD; ++i) gj += a(i) * col[i];
    u(j) = (gj > 0 ? 1 : -1) * o.learning_rate;
  }
  const std::vector<float> delta = UpsampleLatent(u * eps, 1, latent_side, kSide, kSide);
  const std::vector<float>& second = seen[kDirections + 1];
  for (int i = 0; i < kD; ++i) EXPECT_NEAR(second[i] - x0[i], delta[i], 1e-6) << i;
}

// Latent side = image side: g is the identity, and every pixel moves by lr eps along sign(a_i).
TEST(AutoZoom, FirstAdamStepFollowsTheGradientSignInAFullLatent) {
  ExpectFirstStepAlongTheLatentGradientSign(kSide);
}

// Latent side 2 on a 4 x 4 image: the step lies in the bilinear latent, along the sign of the
// gradient projected onto it (G^T a).
TEST(AutoZoom, FirstAdamStepFollowsTheProjectedGradientSignInABilinearLatent) {
  ExpectFirstStepAlongTheLatentGradientSign(2);
}

}  // namespace
}  // namespace advbo::attacks
