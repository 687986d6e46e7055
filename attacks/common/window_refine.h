// A full-resolution refinement stage for latent-space attacks (advbo; issue: BOS^2's
// search-limited failures): random square windows set to a vertex of the query ball, kept
// when the oracle's objective improves -- Square Attack's update (Andriushchenko et al., ECCV
// 2020, Algorithm 1 with its p schedule) started from the attack's best image instead of
// vertical stripes. A coarse latent (side s <= 18) cannot place a perturbation finer than
// its grid; thin strokes (MNIST 1, 7; CIFAR-10 edges) often need one.
#pragma once

#include <functional>

#include "bo/random.h"
#include "oracle/oracle.h"

namespace advbo::attacks {

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
