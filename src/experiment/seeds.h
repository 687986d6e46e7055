// Seed derivation of attack experiments: every random stream of `advbo attack`, `bench` and
// the attack-vs-defender `game` comes from the one run seed (--seed) through these
// functions, so instance k gets the same streams whatever runs before it, in which shard
// and with how many threads.
#pragma once

#include <cstddef>
#include <cstdint>

#include "bo/random.h"

namespace advbo::experiment {

/// Salt that separates a defense's randomness (a randomised transformation, a game
/// defender's moves) from the attack's stream of the same instance.
inline constexpr uint64_t kDefenseSeedSalt = 0xDEFE45EULL;

/// Seed of instance k (0-based position in the instance list) of a run: the attack's engine.
inline uint64_t InstanceSeed(uint64_t run_seed, size_t k) { return bo::DeriveSeed(run_seed, k); }

/// Seed of the defense in front of one instance's oracle (fresh per instance).
inline uint64_t InstanceDefenseSeed(uint64_t instance_seed) {
  return bo::DeriveSeed(instance_seed, kDefenseSeedSalt);
}

/// Seed of the defense while selecting correctly classified images and measuring clean
/// accuracy (one fixed engine per run).
inline uint64_t SelectionDefenseSeed(uint64_t run_seed) {
  return bo::DeriveSeed(run_seed, kDefenseSeedSalt);
}

/// Seed of run `init` (0-based) on image `game` (0-based) of an attack-vs-defender game
/// (`advbo game --game mnist|cifar10`), which plays --inits runs per image.
inline uint64_t GameRunSeed(uint64_t run_seed, size_t game, int init) {
  return bo::DeriveSeed(run_seed, 1000003ULL * (game + 1) + static_cast<uint64_t>(init));
}

}  // namespace advbo::experiment
