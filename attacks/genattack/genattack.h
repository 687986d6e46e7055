// GenAttack (Alzantot, Sharma, Chakraborty, Zhang, Hsieh, Srivastava, GECCO 2019,
// Algorithm 1): a gradient-free genetic algorithm. A population of N perturbed images in
// the eps-ball evolves by fitness-proportional selection (softmax of fitness / tau),
// crossover (each coordinate from parent 1 with probability p1 / (p1 + p2) of their
// selection probabilities), mutation (with probability rho add U(-alpha eps, alpha eps))
// and projection onto the eps-ball, with elitism. Fitness is the paper's
// log f(x)_t - log sum_{j != t} f(x)_j, which is exactly the oracle's objective (thesis
// eq. 5.3; untargeted: the log-probability margin). Every evaluated member is one query;
// the elite is carried over without re-evaluation.
#pragma once

#include "attacks/attack.h"

namespace advbo::attacks {

/// GenAttack settings. Defaults: population N = 6, mutation probability rho = 0.05,
/// mutation range alpha = 1.0 (x eps) and selection temperature tau = 0.1, the values the
/// paper gives for its MNIST and CIFAR-10 experiments (Sec. 4); the ImageNet-only
/// refinements (dimension reduction, adaptive rho/alpha) are not used on these small images.
struct GenAttackOptions {
  int population = 6;           ///< N (>= 2)
  double mutation_rate = 0.05;  ///< rho, per coordinate
  double alpha = 1.0;           ///< mutation range as a fraction of eps
  double temperature = 0.1;     ///< tau of the selection softmax
  /// population >= 2, temperature > 0, mutation_rate in [0, 1], alpha > 0; throws
  /// std::invalid_argument "GenAttack: ...".
  void Validate() const;
};

/// GenAttack (Alzantot et al., GECCO 2019, Alg. 1): a genetic algorithm over eps-ball perturbations
/// with softmax selection, crossover, mutation and elitism; one query per evaluated member.
class GenAttack final : public Attack {
 public:
  /// An attack with `options` (the paper's settings).
  explicit GenAttack(GenAttackOptions options = {}) : options_(options) {}
  std::string name() const override { return "genattack"; }
  AttackResult Run(oracle::QueryOracle& oracle, bo::Rng& rng,
                   const AttackProgress& progress) const override;

 private:
  GenAttackOptions options_;
};

}  // namespace advbo::attacks
