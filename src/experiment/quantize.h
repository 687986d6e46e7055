// 8-bit images that stay what they claim: an adversarial example saved as an 8-bit PNG is
// rounded onto the 1/255 grid, which can leave the eps-ball (77/255 = 0.302 > 0.3) or lose
// the attack. QuantizeInBall rounds onto the grid *inside* the ball; the runner re-queries
// the result (JobResult::quantized*) so a saved image is verified, not assumed.
#pragma once

#include <vector>

#include "oracle/oracle.h"

namespace advbo::experiment {

/// Rounds every pixel of `image` to the nearest multiple of 1/255 in [0, 1] that lies in
/// [clean - eps, clean + eps] (as doubles, the oracle's rule); where the nearest multiple
/// would leave the ball, the next one toward the clean pixel is taken (it exists whenever
/// the clean pixel is itself on the grid, as for 8-bit data; otherwise the nearest grid
/// point inside the ball, or the clean pixel when the ball holds no grid point). `image`
/// and `clean` have the same length (C*H*W, pixels in [0, 1]); eps >= 0 in pixel units.
/// Throws std::invalid_argument on a length mismatch. With norm kL2 the ball is the L2 ball
/// of radius eps and the rounding is oracle::ProjectOntoL2Ball's (nearest grid values, pulled
/// back towards the clean pixel until inside).
std::vector<float> QuantizeInBall(const std::vector<float>& image, const std::vector<float>& clean,
                                  double eps, oracle::Norm norm = oracle::Norm::kLinf);

}  // namespace advbo::experiment
