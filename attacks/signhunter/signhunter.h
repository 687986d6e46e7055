// SignHunter (Al-Dujaili & O'Reilly, "Sign Bits Are All You Need for Black-Box Attacks",
// ICLR 2020, Algorithm 1 with the adversarial loss of Sec. 4): a score-based L_inf attack
// that searches the perturbation's sign vector s in {-1, +1}^n only. The query is always a
// vertex of the eps-ball, x = x0 + eps * s (clipped to [0, 1]); s starts at all +1 and is
// flipped one contiguous chunk at a time, keeping a flip only when the loss improves. The
// chunks halve level by level (2^h chunks of ceil(n / 2^h) pixels at level h, in the
// flattened C*H*W order), and the search restarts at level 0 once a chunk would be empty.
//
// The loss maximised is the oracle's objective (Kharkovskii thesis eq. 5.3: the margin of
// the target / the best other class), the margin loss the paper reports alongside
// cross-entropy. One query per step, never more than the budget; under 8-bit queries eps is
// the grid radius (QueryOracle::query_radius), so every query is a vertex of the 8-bit ball.
#pragma once

#include "attacks/attack.h"

namespace advbo::attacks {

/// SignHunter; spec "signhunter". Score feedback, L_inf, targeted and untargeted.
class SignHunterAttack final : public Attack {
 public:
  std::string name() const override { return "signhunter"; }
  /// Runs until success or the budget is spent (one query per sign flip). Model failures
  /// propagate as oracle::ModelError.
  AttackResult Run(oracle::QueryOracle& oracle, bo::Rng& rng,
                   const AttackProgress& progress) const override;
};

/// The [begin, end) pixels of chunk `i` at level `h` of SignHunter's hierarchy over n
/// pixels (2^h chunks of ceil(n / 2^h), the last one shorter or empty), h >= 0, 0 <= i < 2^h.
std::pair<size_t, size_t> SignHunterChunk(size_t n, int h, long i);

}  // namespace advbo::attacks
