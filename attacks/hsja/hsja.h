// HopSkipJumpAttack (Chen, Jordan & Wainwright, "HopSkipJumpAttack: A Query-Efficient
// Decision-Based Attack", IEEE S&P 2020, Algorithms 1-2), untargeted, L2 and L_inf: a
// hard-label attack that walks along the decision boundary towards the clean image x0.
//   init:  uniform-noise images until one is misclassified, then a binary search on the
//          blend (1 - a) x0 + a x towards x0 (Sec. 4.1 of the paper's code release, "blended
//          uniform noise");
//   each iteration t = 1, 2, ...:
//     1. binary search between x0 and the current adversarial x~ (Algorithm 1): on the
//        blend for L2, on the L_inf radius of clip(x~, x0 - r, x0 + r) for L_inf, to the
//        threshold theta = gamma / d^(3/2) (L2) or gamma / d^2 (L_inf) -- a point x_t just on
//        the adversarial side of the boundary;
//     2. gradient-direction estimate at x_t (eq. 9 with the baseline of eq. 10): B_t =
//        B_0 sqrt(t) unit random directions u_b, each queried at x_t + delta_t u_b, answered
//        +1 adversarial / -1 not; delta_t = sqrt(d) theta dist_{t-1} (L2) or d theta dist_{t-1}
//        (L_inf), 0.1 at t = 1 (Sec. 4.2);
//     3. geometric step size: xi = dist_t / sqrt(t), halved until x_t + xi v is adversarial,
//        v = the normalised estimate (L2) or its sign (L_inf) (Sec. 4.3).
// The run stops at the first adversarial query inside the eps-ball (the oracle's success
// under label feedback) or when the budget is spent; a batch of probes is cut to the
// remaining budget.
//
// 8-bit queries (this project's adaptation, docs/attacks.md): a probe or a search step
// smaller than half a grid step rounds back onto the point it started from, so delta_t is at
// least sqrt(d) / 255 (a probe moves a typical pixel by about one step) and the binary
// searches stop at one grid step.
#pragma once

#include <vector>

#include "attacks/attack.h"

namespace advbo::attacks {

/// The step of an iteration from boundary point x_t along the estimated normal v.
enum class HsjaStep {
  kGeometric,            ///< HopSkipJump's geometric step size (Sec. 4.3)
  kTangentHemisphere,    ///< the Tangent Attack's tangent point of a hemisphere (TA, L2 only)
  kTangentSemiEllipsoid  ///< the Generalized Tangent Attack's semi-ellipsoid (G-TA, L2 only)
};

/// HopSkipJumpAttack settings (the paper's defaults).
struct HsjaOptions {
  int initial_probes = 100;       ///< B_0, probes of the first gradient estimate, >= 1
  int max_probes = 10000;         ///< cap on B_t, >= initial_probes
  double gamma = 1.0;             ///< theta = gamma / d^(3/2) (L2) or gamma / d^2 (L_inf), > 0
  int initial_noise_tries = 100;  ///< uniform-noise images tried for the start, >= 1
  /// The step: HopSkipJump's, or TA's / G-TA's jump to the tangent point of a surface of
  /// radius R = dist_t / sqrt(t) around x_t, R halved until the point is adversarial (Ma et
  /// al., NeurIPS 2021, Alg. 1; attacks/tangent/tangent_point.h).
  HsjaStep step = HsjaStep::kGeometric;
  /// G-TA: the semi-ellipsoid's radius along the normal over its radius across it, in [1, 100]
  /// (1.1, the authors' code release default).
  double radius_ratio = 1.1;
  /// Throws std::invalid_argument naming the field and `name` (the attack spec).
  void Validate(const std::string& name) const;
};

/// HopSkipJumpAttack's iterations (Algorithm 2: binary search to the boundary, gradient-
/// direction estimate, geometric step, repeated) from an adversarial image x [C * H * W]
/// (pixels in [0, 1]; e.g. another hard-label attack's closest adversarial point), until
/// success or the budget is spent. Used by Run after its noise start and by bo-hl's last stage.
/// Returns the iterations run; throws std::invalid_argument when x has the wrong size.
int HsjaIterate(oracle::QueryOracle& oracle, const HsjaOptions& options, std::vector<float> x,
                bo::Rng& rng, const AttackProgress& progress);

/// HopSkipJumpAttack; spec "hsja" or "hsja:initial_probes=B,max_probes=M,gamma=G". Label
/// feedback, L2 and L_inf (the oracle's norm); targeted runs start from the oracle's
/// start_image(). With a tangent step it is the Tangent Attack (specs "ta", "gta"; Ma et al.,
/// NeurIPS 2021: HopSkipJump's search and normal estimate, the tangent point as the step), L2
/// only, as in that paper.
class HsjaAttack final : public LabelAttack {
 public:
  /// An attack with `options`, reported under `name`.
  explicit HsjaAttack(HsjaOptions options = {}, std::string name = "hsja");
  /// Runs until an adversarial query lies inside the eps-ball or the budget is spent.
  /// details: hsja_iterations, hsja_start (query index of the first adversarial start, null
  /// when no noise image was adversarial).
  AttackResult Run(oracle::QueryOracle& oracle, bo::Rng& rng,
                   const AttackProgress& progress) const override;

 private:
  HsjaOptions options_;
};

}  // namespace advbo::attacks
