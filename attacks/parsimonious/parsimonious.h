// Parsimonious black-box attack, L_inf (Moon, An, Song, ICML 2019, Algorithms 1-3): the
// perturbation is restricted to the vertices of the eps-ball, delta in {-eps, +eps}^D, and
// optimised as a set function over image blocks (per channel): starting from all -eps, an
// accelerated lazy-greedy *insertion* flips the block with the largest marginal gain to
// +eps, a lazy-greedy *deletion* flips blocks back, alternating until neither improves;
// then every block is split in four (block size halved) and the search repeats. Marginal
// gains are measured in the oracle's objective (thesis eq. 5.3: targeted cross-entropy up to
// a monotone map, untargeted margin); the initial gains of a pass are queried in batches.
#pragma once

#include "attacks/attack.h"

namespace advbo::attacks {

/// Parsimonious settings.
struct ParsimoniousOptions {
  int initial_block = 4;  ///< initial block side (the paper's CIFAR-10 value; also MNIST)
  int batch = 64;         ///< queries per model call when measuring initial gains
  int max_passes = 4;     ///< insertion/deletion alternations per block size
  /// initial_block, batch and max_passes >= 1; throws std::invalid_argument naming the field.
  void Validate() const;
};

/// Parsimonious attack (Moon, An & Song, ICML 2019, Algs. 1-3): accelerated lazy-greedy insertion
/// and deletion of +eps image blocks over the eps-ball's vertices, the block size halved after each
/// round.
class ParsimoniousAttack final : public Attack {
 public:
  /// An attack with `options` (the paper's CIFAR-10 settings).
  explicit ParsimoniousAttack(ParsimoniousOptions options = {}) : options_(options) {}
  std::string name() const override { return "parsimonious"; }
  AttackResult Run(oracle::QueryOracle& oracle, bo::Rng& rng,
                   const AttackProgress& progress) const override;

 private:
  ParsimoniousOptions options_;
};

}  // namespace advbo::attacks
