// BayesOpt attack (Ru, Cobb, Blaas, Gal, "BayesOpt Adversarial Attack", ICLR 2020): GP-based
// BO in a bilinearly reduced perturbation space. The perturbation is a latent
// u in [-1, 1]^{s x s x C} (delta = eps * bilinear-upsample(u), NCHW per channel, Sec. 3.2);
// the additive-GP variant (Sec. 3.3, ADDGP-BO) models the objective (thesis eq. 5.3) with an
// additive kernel whose decomposition is re-learnt every 40 iterations from 20 random
// partitions plus the current one by marginal likelihood, refits hyperparameters every 5
// iterations, starts from 30 Latin-hypercube points and queries the maximiser of the
// confidence bound with sigma multiplier 3 (the paper's LCB with beta = 3 on the loss,
// i.e. advbo's UCB with beta = 9 on the objective). The variant that learns the reduced
// side s (Sec. 3.4) picks s in {6, 8, ..., 20} maximising the GP marginal likelihood of the
// initial data re-sampled to each side.
//
// Threat model: queries are clipped into the eps-ball by the oracle (docs/design.md); the
// reference code's rescaling is the oracle's --rescale-compat option.
#pragma once

#include <vector>

#include "attacks/attack.h"
#include "bo/additive.h"
#include "bo/hyperparameters.h"

namespace advbo::attacks {

/// BayesOpt-attack settings (defaults: the paper's MNIST/CIFAR-10 settings).
struct BayesOptOptions {
  int latent_side = 14;     ///< s (14 x 14 per channel in the paper)
  bool learn_side = false;  ///< learn s by marginal likelihood (Sec. 3.4)
  /// Latent sides BayesOpt-learnd chooses among (per channel; the fixed variant uses the first).
  std::vector<int> candidate_sides = {6, 8, 10, 12, 14, 16, 18, 20};
  int groups = 14;                ///< additive components: 14 MNIST, 12 CIFAR-10
  bool additive = true;           ///< false = a plain (isotropic SE) GP-BO
  int initial_points = 30;        ///< Latin-hypercube initial design
  int decomposition_every = 40;   ///< iterations between decomposition updates
  int num_decompositions = 20;    ///< random partitions scored (plus the current one)
  int refit_every = 5;            ///< hyperparameter refit period
  double sigma_multiplier = 3.0;  ///< the paper's beta (multiplies sigma)
  /// GP hyperparameter fit of the additive GP.
  bo::FitOptions fit = DefaultFit();
  /// 1 restart + warm start, 30 L-BFGS-B iterations, <= 150 points per likelihood
  /// evaluation (advbo's speed setting, as for BOS^2).
  static bo::FitOptions DefaultFit();
  /// latent_side, groups, initial_points, decomposition_every, num_decompositions and
  /// refit_every >= 1, every candidate side >= 1 (non-empty with learn_side),
  /// sigma_multiplier >= 0, and fit; throws std::invalid_argument "BayesOpt: ...".
  void Validate() const;
};

/// BayesOpt attack (Ru et al., ICLR 2020): additive-GP BO over a bilinear latent of the
/// perturbation, 30 Latin-hypercube initial points, the decomposition re-learnt every 40
/// iterations.
class BayesOptAttack final : public Attack {
 public:
  /// An attack with `options` (the paper's settings).
  explicit BayesOptAttack(BayesOptOptions options = {}) : options_(std::move(options)) {}
  std::string name() const override { return options_.learn_side ? "bayesopt-learnd" : "bayesopt"; }
  AttackResult Run(oracle::QueryOracle& oracle, bo::Rng& rng,
                   const AttackProgress& progress) const override;

 private:
  BayesOptOptions options_;
};

}  // namespace advbo::attacks
