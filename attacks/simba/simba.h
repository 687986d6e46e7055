// SimBA-DCT (Guo, Gardner, You, Wilson & Weinberger, "Simple Black-box Adversarial
// Attacks", ICML 2019, Algorithm 1 with the DCT basis of Sec. 3.2): a score-based L2 attack.
// It walks through orthonormal directions q of the 2-D DCT basis (per channel), lowest
// frequencies first, and for each tries x - step q, then x + step q, keeping the first that
// lowers the true class's probability (untargeted) or raises the target's (targeted).
//
// Direction order (the paper's "block order"): the DCT coefficients (c, u, v) with
// max(u, v) < initial (all channels) in random order, then each further band of `stride`
// frequencies in random order, until the basis is exhausted (then it starts over with a new
// order). initial = stride = max(1, side / 8) by default, the paper's low-frequency 1/8.
// Queries leave the ball only by the oracle's projection (scaled onto the L2 ball, rounded
// onto the 8-bit grid), and the attack carries on from the image the oracle evaluated.
#pragma once

#include <array>
#include <utility>
#include <vector>

#include "attacks/attack.h"
#include "attacks/common/dct.h"

namespace advbo::attacks {

/// SimBA-DCT settings.
struct SimbaOptions {
  double step = 0.2;  ///< the paper's step epsilon along each direction (L2, pixel units), > 0
  int initial = 0;    ///< side of the first low-frequency block, 0 = max(1, side / 8)
  int stride = 0;     ///< width of each further frequency band, 0 = max(1, side / 8)
  /// Throws std::invalid_argument naming the field and `name` (the attack spec).
  void Validate(const std::string& name) const;
};

/// The DCT coefficients (channel, u, v) of a [channels, height, width] image in SimBA's block
/// order: the initial x initial block first, then bands of `stride`, each shuffled by `rng`.
std::vector<std::array<int, 3>> SimbaOrder(int channels, int height, int width, int initial,
                                           int stride, bo::Rng& rng);

/// SimBA-DCT; spec "simba-dct" or "simba-dct:step=S,initial=I,stride=K". Score feedback,
/// L2 only (queries stay in the L2 ball through the oracle), targeted and untargeted.
class SimbaDctAttack final : public Attack {
 public:
  /// An attack with `options`, reported under `name`.
  explicit SimbaDctAttack(SimbaOptions options = {}, std::string name = "simba-dct");
  std::string name() const override { return name_; }
  std::vector<oracle::Norm> norms() const override { return {oracle::Norm::kL2}; }
  AttackResult Run(oracle::QueryOracle& oracle, bo::Rng& rng,
                   const AttackProgress& progress) const override;

 private:
  SimbaOptions options_;
  std::string name_;
};

}  // namespace advbo::attacks
