// AutoZOOM (Tu, Ting, Chen, Liu, Zhang, Yi, Hsieh, Cheng, AAAI 2019), the BiLIN variant:
// the perturbation lives in a reduced latent space (bilinear upsampling of an s x s x C
// latent, Sec. 3.2) and the gradient of the C&W objective c * f + ||delta||_2^2 is
// estimated from q random directions on the unit sphere (eq. 3):
//   g = b * (1/q) * sum_j [L(z + beta u_j) - L(z)] / beta * u_j,
// q + 1 queries per iteration in one batch, followed by an ADAM step on z (the latent stays
// in [-eps, eps], so the upsampled perturbation stays in the eps-ball).
#pragma once

#include "attacks/attack.h"

namespace advbo::attacks {

/// AutoZOOM settings. q = 1 and b = latent dimension follow the paper's query-efficient
/// setting; beta = 1 / latent dimension the paper's smoothing choice; the ADAM step (0.01 in
/// eps-scaled units), c = 10 and the 14 x 14 (MNIST) / 16 x 16 (CIFAR-10) latents are
/// advbo's, since the paper's autoencoder-derived sizes are not published for small budgets.
struct AutoZoomOptions {
  /// Side of the bilinear latent per channel (14 MNIST, 16 CIFAR-10 in the paper).
  int latent_side = 14;
  int directions = 1;           ///< q
  double learning_rate = 0.01;  ///< ADAM step, as a fraction of eps per unit gradient
  /// Weight c of the attack loss in the C&W objective c * f + ||delta||^2.
  double c = 10.0;
  /// Confidence margin kappa of the C&W loss, >= 0.
  double kappa = 0.0;
  /// latent_side and directions >= 1, learning_rate and c > 0, kappa >= 0 (finite); throws
  /// std::invalid_argument "AutoZOOM: ...".
  void Validate() const;
};

/// AutoZOOM-BiLIN (Tu et al., AAAI 2019): random-direction gradient estimates (eq. 3) in a bilinear
/// latent, ADAM on the latent, the iterate kept in the eps-ball.
class AutoZoomAttack final : public Attack {
 public:
  /// An attack with `options` (paper defaults).
  explicit AutoZoomAttack(AutoZoomOptions options = {}) : options_(options) {}
  std::string name() const override { return "autozoom"; }
  AttackResult Run(oracle::QueryOracle& oracle, bo::Rng& rng,
                   const AttackProgress& progress) const override;

 private:
  AutoZoomOptions options_;
};

}  // namespace advbo::attacks
