// Bandits-TD (Ilyas, Engstrom & Madry, "Prior Convictions: Black-Box Adversarial Attacks
// with Bandits and Priors", ICLR 2019, Algorithms 1-3, L_inf): a score-based attack that
// keeps a gradient prior v between steps (the time prior) on a coarse tiled grid (the data
// prior: one latent value per tile x tile block and channel, upsampled by repetition).
// Each step:
//   u ~ N(0, I / m) on the latent grid of m values; q1 = v + delta u, q2 = v - delta u;
//   d = [L(x + fd q1 / |q1|) - L(x + fd q2 / |q2|)] / (delta fd)      (2 queries, one batch)
//   the prior moves by exponentiated gradient ascent on p = (v + 1) / 2 in [0, 1]
//   (Algorithm 3, L_inf): p_+ = p exp(eta d u), p_- = (1 - p) exp(-eta d u), p = p_+ / (p_+ + p_-);
//   x <- Proj(x + lr sign(v)) into the eps-ball, then queried (the success check).
// The loss ascended is the oracle's objective (thesis eq. 5.3). Defaults are the paper's
// L_inf settings (fd = 0.1, eta = 100, lr = 0.01 for eps = 0.05, here lr = eps / 5) except
// the exploration delta (10, not 1: see BanditsOptions::exploration),
// with tile = max(1, side / 8) (the paper's 6 px tiles of 299 px ImageNet images are
// coarser; side / 8 gives 4 px on CIFAR-10, 3 px on MNIST). Under 8-bit queries fd is at
// least sqrt(d) / 255, so a probe moves a typical pixel by about one grid step (this
// project's adaptation; smaller probes round away).
#pragma once

#include "attacks/attack.h"

namespace advbo::attacks {

/// Bandits-TD settings.
struct BanditsOptions {
  /// delta, the prior's exploration scale, > 0. The paper's 1.0 is for ImageNet, whose
  /// 268,203 pixels keep the loss differences small; on 32 x 32 CIFAR-10 images the
  /// exponentiated-gradient prior saturates at +-1 within a few steps, q1 and q2 coincide and
  /// the estimate stops: 1.0 succeeded on 2 of 10 CIFAR-10 images (test images 0-10, eps 0.05,
  /// 1,000 queries, 8-bit), 3.0 on 2, 10 on 7, 30 on 7. Default 10, measured there.
  double exploration = 10.0;
  double fd_eta = 0.1;     ///< fd, the finite-difference step (pixel units), > 0
  double online_lr = 100;  ///< eta, the prior's exponentiated-gradient rate, > 0
  double lr_ratio = 0.2;   ///< image step lr = lr_ratio * eps, in (0, 1]
  int tile = 0;            ///< latent tile side in pixels, 0 = max(1, side / 8)
  /// Throws std::invalid_argument naming the field and `name` (the attack spec).
  void Validate(const std::string& name) const;
};

/// Bandits-TD; spec "bandits" or "bandits:exploration=,fd_eta=,online_lr=,lr_ratio=,tile=".
/// Score feedback, L_inf, targeted and untargeted.
class BanditsAttack final : public Attack {
 public:
  /// An attack with `options`, reported under `name` (a registry spec may rename it).
  explicit BanditsAttack(BanditsOptions options = {}, std::string name = "bandits");
  std::string name() const override { return name_; }
  AttackResult Run(oracle::QueryOracle& oracle, bo::Rng& rng,
                   const AttackProgress& progress) const override;

 private:
  BanditsOptions options_;
  std::string name_;
};

}  // namespace advbo::attacks
