// Square Attack, L_inf (Andriushchenko, Croce, Flammarion, Hein, ECCV 2020, Algorithms 1-2):
// random search over square-shaped updates at the vertices of the eps-ball. Initialisation
// with vertical stripes (+-eps per column and channel); each iteration re-draws one square
// window of side s (constant +-eps per channel inside it) and keeps the change only if the
// loss decreases. s = round(sqrt(p * h * w)) follows the paper's piecewise-constant schedule
// for p (halved at iterations 10, 50, 200, 500, 1000, 2000, 4000, 6000, 8000 of a
// 10,000-iteration run, rescaled to the query budget).
//
// Loss: untargeted margin z_true - max_{k != true} z_k (= log-probability margin); targeted
// cross-entropy -log p_target. Both are decreasing functions of the oracle's objective
// (thesis eq. 5.3), so the accept/reject decisions are computed from it exactly.
#pragma once

#include "attacks/attack.h"

namespace advbo::attacks {

/// Square Attack settings.
struct SquareOptions {
  /// Initial fraction of pixels changed per iteration. The paper's default for CIFAR-10 and
  /// ImageNet is 0.05; for MNIST the authors use p_init = 0.8 (Square Attack repository,
  /// MNIST challenge). MakeAttack picks by dataset.
  double p_init = 0.05;
};

/// The schedule p(i) for iteration i of a run of n_iters iterations (paper Sec. 4 / App.).
double SquareSchedule(double p_init, long i, long n_iters);

class SquareAttack final : public Attack {
 public:
  explicit SquareAttack(SquareOptions options = {}) : options_(options) {}
  std::string name() const override { return "square"; }
  AttackResult Run(oracle::QueryOracle& oracle, bo::Rng& rng,
                   const AttackProgress& progress) const override;

 private:
  SquareOptions options_;
};

}  // namespace advbo::attacks
