// The BayesOpt attack (Ru et al., ICLR 2020, ADDGP-BO; attacks/bayesopt) on a linear model
// (a test of its own): in a 16-dimensional bilinear latent its additive GP finds the
// closed-form maximum of the objective over the latent box.
#include "attacks/bayesopt/bayesopt.h"

#include <gtest/gtest.h>

#include <vector>

#include "attacks/common/latent.h"
#include "attacks/linear_model.h"
#include "oracle/oracle.h"

namespace advbo::attacks {
namespace {

// With latent side 4 on an 8 x 8 image the perturbation is eps g(u), u in [-1, 1]^16 and g the
// bilinear upsampling, so the objective a . eps g(u) + m0 is linear in u with maximum
// m0 + eps |G^T a|_1 at the corner u = sign(G^T a) (one of 2^16). The additive GP fitted to the
// 30 Latin-hypercube points (whose best has 48 % of that gain) holds the linear objective well
// enough that the BO queries that follow reach the maximum (measured: at the first BO query;
// 5 are allowed). A GP fitted to the negated initial data stays at 48 %.
TEST(BayesOpt, FindsTheMaximumOfALinearObjectiveOverTheLatentBox) {
  constexpr int kSide = 8, kD = kSide * kSide, kLatent = 4;
  const Eigen::VectorXd a = testing::MixedSignWeights(kD, 23);
  const std::vector<float> x0(kD, 0.5f);
  const double m0 = -50.0, eps = 0.05;  // unreachable
  auto model = testing::LinearModel(a, x0, m0, kSide, nullptr);
  double best_gain = 0;  // eps |G^T a|_1, from g's columns
  for (int j = 0; j < kLatent * kLatent; ++j) {
    const std::vector<float> col =
        UpsampleLatent(Eigen::VectorXd::Unit(kLatent * kLatent, j), 1, kLatent, kSide, kSide);
    double gj = 0;
    for (int i = 0; i < kD; ++i) gj += a(i) * col[i];
    best_gain += eps * std::abs(gj);
  }
  BayesOptOptions o;
  o.latent_side = kLatent;
  oracle::Referee init(*model, x0.data(), 0, -1, eps, o.initial_points);
  bo::Rng rng0(1);
  BayesOptAttack(o).Run(init, rng0, nullptr);
  oracle::Referee orc(*model, x0.data(), 0, -1, eps, o.initial_points + 5);
  bo::Rng rng(1);
  const AttackResult r = BayesOptAttack(o).Run(orc, rng, nullptr);
  EXPECT_FALSE(r.success);
  const double lhs = (init.best_objective() - m0) / best_gain,
               share = (r.best_objective - m0) / best_gain;
  EXPECT_LT(lhs, 0.6);  // the design alone is far from it
  EXPECT_LE(share, 1 + 1e-6);
  EXPECT_GE(share, 0.999);
}

}  // namespace
}  // namespace advbo::attacks
