// Internal to src/whitebox (LibTorch): FAB-T, the targeted Fast Adaptive Boundary attack of
// AutoAttack's standard version, on one batch. Callers use RunApgdReference (apgd.h) with
// ApgdOptions::fab_target_classes > 0.
//
// Source: F. Croce and M. Hein, "Minimally distorted adversarial examples with a fast
// adaptive boundary attack", ICML 2020 -- Sec. 3.1 (the linearised decision hyperplane and
// the projection onto it intersected with the box, problem (4), solved for p = inf), Sec. 3.2
// and Algorithm 1 (the biased step x^(i+1) = proj_C((1 - alpha)(x^(i) + eta delta^(i)) +
// alpha (x_orig + eta delta_orig^(i))), alpha = min(|delta^(i)| / (|delta^(i)| +
// |delta_orig^(i)|), alpha_max), and the backward step (1 - beta) x_orig + beta x^(i+1) after
// a success); the targeted form of "Reliable evaluation of adversarial robustness with an
// ensemble of diverse parameter-free attacks" (Croce & Hein, ICML 2020, Sec. 4: the
// hyperplane of the target class only, the top 9 classes, 100 iterations). Written from the
// papers, not ported.
#pragma once

#include <torch/torch.h>

#include "whitebox/model.h"

namespace advbo::whitebox {

/// FAB's step parameters (the papers' values as defaults).
struct FabSettings {
  int iterations = 100;    ///< iterations per run, >= 1
  double alpha_max = 0.1;  ///< bias towards the clean image's projection, in [0, 1)
  double eta = 1.05;       ///< overshoot past the linearised boundary, >= 1
  double beta = 0.9;       ///< backward step towards the clean image after a success, (0, 1]
};

/// The minimal L_inf step delta [m, D] from points p [m, D] in [0, 1] onto the hyperplanes
/// <w_r, delta_r> = c_r (w [m, D], c [m]) inside the box: p + delta in [0, 1]^D (FAB's problem
/// (4) for p = inf). Each coordinate moves min(r, room_i) in the direction sign(c) sign(w_i),
/// with r the smallest radius whose box-limited step reaches c (a sorted sweep of the
/// rooms). When the box cannot reach the hyperplane, every coordinate goes to its end of the
/// box in that direction (the closest point to the hyperplane). Coordinates with w_i = 0 stay.
torch::Tensor ProjectLinfOntoHyperplaneInBox(const torch::Tensor& p, const torch::Tensor& w,
                                             const torch::Tensor& c);

/// One FAB-T run on batch `b` (targets b.t, labels b.y) from `start` [m, C, H, W] (the clean
/// images for the first run). After every step, the images whose iterate the model
/// misclassifies are checked inside the eps-ball (the iterate clamped into the ball, and with
/// `grid` rounded onto its 8-bit grid); the checked break closest to the clean image is kept
/// in `findings`. Returns the forward/backward passes spent per image.
long RunFabTargeted(Model& model, const Batch& b, const torch::Tensor& start, const FabSettings& s,
                    bool grid, Findings* findings);

}  // namespace advbo::whitebox
