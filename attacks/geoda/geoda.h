// GeoDA (Rahmati, Moosavi-Dezfooli, Frossard & Dai, "GeoDA: a geometric framework for
// black-box adversarial attacks", CVPR 2020, Algorithm 1), untargeted, L2 and L_inf: a
// hard-label attack that estimates the normal of the decision boundary at a boundary point
// from random low-frequency probes and jumps from the clean image along that normal.
//   start: uniform-noise images until one is misclassified, then a binary search towards x0
//          (a boundary point x_B);
//   iteration t of T: N_t probes x_B + eta_i, eta_i Gaussian in the subspace of the lowest
//          DCT frequencies (side `subspace` of each channel); the normal estimate is
//          w = sum_i z_i eta_i with z_i = +1 for an adversarial probe, -1 otherwise (Sec. 4,
//          eq. 9). The new point is x0 + r v, v = w / |w|_2 (L2) or sign(w) (L_inf, the
//          paper's L_p solution for p = inf), r the smallest adversarial radius along v (a
//          one-query check at the current distance, expanded x1.5 until adversarial, then a
//          binary search to a relative 1e-3); it becomes the next x_B when it is closer.
//   query allocation over iterations (Sec. 5, "optimal query distribution"): N_t proportional
//   to lambda^(-2t/3), lambda = 0.6 (the paper's choice), rescaled to the budget left after
//   the start; T = 10 iterations.
// The run stops at the first adversarial query inside the eps-ball or when the budget is spent.
// 8-bit queries: probes below half a grid step round away, so the probe standard deviation
// per pixel is at least 1/255.
#pragma once

#include "attacks/attack.h"

namespace advbo::attacks {

/// GeoDA settings.
struct GeodaOptions {
  int iterations = 10;    ///< T, >= 1
  double lambda = 0.6;    ///< query-allocation ratio, in (0, 1)
  double sigma = 0.0002;  ///< probe standard deviation per pixel (float queries), > 0
  int subspace = 0;       ///< side of the DCT low-frequency block, 0 = max(1, side / 3)
  /// Throws std::invalid_argument naming the field and `name` (the attack spec).
  void Validate(const std::string& name) const;
};

/// The queries of iteration t = 1..T out of `total` (GeoDA's allocation, each >= 1):
/// proportional to lambda^(-2t/3), summing to at most `total`. [T].
std::vector<long> GeodaAllocation(long total, int iterations, double lambda);

/// GeoDA; spec "geoda" or "geoda:iterations=T,lambda=L,sigma=S,subspace=K". Label feedback,
/// L2 and L_inf, untargeted only.
class GeodaAttack final : public LabelAttack {
 public:
  /// An attack with `options`, reported under `name`.
  explicit GeodaAttack(GeodaOptions options = {}, std::string name = "geoda");
  AttackResult Run(oracle::QueryOracle& oracle, bo::Rng& rng,
                   const AttackProgress& progress) const override;

 private:
  GeodaOptions options_;
};

}  // namespace advbo::attacks
