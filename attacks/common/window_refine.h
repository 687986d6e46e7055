// A full-resolution refinement stage for latent-space attacks (advbo; issue: BOS^2's
// search-limited failures): random square windows set to a vertex of the query ball, kept
// when the oracle's objective improves -- Square Attack's update (Andriushchenko et al., ECCV
// 2020, Algorithm 1 with its p schedule) started from the attack's best image instead of
// vertical stripes. A coarse latent (side s <= 18) cannot place a perturbation finer than
// its grid; thin strokes (MNIST 1, 7; CIFAR-10 edges) often need one.
#pragma once

#include <functional>
#include <vector>

#include "bo/random.h"
#include "oracle/oracle.h"

namespace advbo::attacks {

/// Square Attack's proposal (Andriushchenko et al., ECCV 2020, Algorithm 1, the L_inf
/// update): *cand = best with one random window of side s (top-left corner uniform) set, per
/// channel with one random sign, to clip(x0 +- radius, 0, 1); the window is redrawn (at most
/// 10 draws) until the image changes, else *cand = best. x0 and best are [C, H, W] images
/// flattened, pixels in [0, 1]; 1 <= s <= min(H, W). Shared by Square and the refinement
/// stage below. `min_magnitude` < 1 (in [0, 1]) searches inside the ball too: each window's
/// value per channel is +-radius * u, u ~ U[min_magnitude, 1] (an extra draw per channel);
/// 1 = the paper's vertices, with the paper's random stream.
void ProposeSquareWindow(const std::vector<float>& x0, const std::vector<float>& best, int c, int h,
                         int w, int s, float radius, bo::Rng& rng, std::vector<float>* cand,
                         float min_magnitude = 1.0f);

/// Square Attack's initialisation (Andriushchenko et al., ECCV 2020, Algorithm 1 line 2, the
/// L_inf attack): vertical stripes, every column of every channel set to clip(x0 +- radius, 0,
/// 1) with one random sign per (channel, column), drawn channel by channel, column by column.
/// x0 is a [C, H, W] image flattened, pixels in [0, 1]; returns the [C, H, W] image. Shared by
/// Square and BOS^2's optional first query (Bos2Options::stripes_init). `min_magnitude` < 1:
/// each column's magnitude is radius * u, u ~ U[min_magnitude, 1], as in ProposeSquareWindow.
std::vector<float> SquareStripes(const std::vector<float>& x0, int c, int h, int w, float radius,
                                 bo::Rng& rng, float min_magnitude = 1.0f);

/// Spends up to `queries` queries (<= oracle.remaining()) refining oracle.best_image(): each
/// step draws a window of side round(sqrt(p * H * W)) (p = SquareSchedule(p_init, step,
/// queries)), sets every pixel of it, per channel, to clean +- query_radius (one random sign
/// per channel), and keeps the change when the objective (thesis eq. 5.3) beats the best so
/// far. Stops at the first success. Requires at least one earlier query (a best image);
/// p_init in (0, 1]. Throws std::invalid_argument otherwise. `progress` (optional) is called
/// after every query with (queries used, best objective).
void RefineWithWindows(oracle::QueryOracle& oracle, long queries, double p_init, bo::Rng& rng,
                       const std::function<void(long, double)>& progress = nullptr);

}  // namespace advbo::attacks
