// Square Attack, L2 (Andriushchenko, Croce, Flammarion & Hein, ECCV 2020, Sec. 3.2 and
// Algorithm 3): random search whose updates move perturbation mass between two square
// windows. Each update draws windows W1, W2 of side s; per channel, the perturbation inside
// W1 becomes a random-signed "meta-pattern" (two concentric-rectangle bumps of opposite sign,
// weights 1/(k+1)^2 on ring k, randomly transposed) plus W1's old direction, rescaled to
// carry W1's and W2's old mass plus an equal share of the unused budget; W2 is zeroed. So
// every candidate lies on (or inside) the L2 sphere of radius eps. A candidate is kept when
// the loss decreases (the oracle's objective increases, as for Square L_inf). The start is a
// grid of 5 x 5 tiles, each a meta-pattern with a random sign per channel, scaled to eps.
// The window side follows Square's p schedule: s = max(3, round(sqrt(p h w))).
#pragma once

#include <vector>

#include "attacks/attack.h"

namespace advbo::attacks {

/// The L2 meta-pattern of an s x s window (s >= 1): rows [0, s/2) the concentric-rectangle
/// bump, rows [s/2, s) the negated one, unit L2 norm; transposed when `transpose`. [s * s].
std::vector<float> SquareL2MetaPattern(int s, bool transpose);

/// Square Attack L2; spec "square-l2" or "square-l2:p_init=P" (P in (0, 1], default 0.1, the
/// paper's L2 setting). Score feedback, L2 only, targeted and untargeted.
class SquareL2Attack final : public Attack {
 public:
  /// Square-L2 with initial window share `p_init` in (0, 1], reported under `name`.
  explicit SquareL2Attack(double p_init = 0.1, std::string name = "square-l2");
  std::string name() const override { return name_; }
  std::vector<oracle::Norm> norms() const override { return {oracle::Norm::kL2}; }
  AttackResult Run(oracle::QueryOracle& oracle, bo::Rng& rng,
                   const AttackProgress& progress) const override;

 private:
  double p_init_;
  std::string name_;
};

}  // namespace advbo::attacks
