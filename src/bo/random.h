// The one random engine type of advbo. Every stochastic routine takes an engine by
// reference; nothing seeds itself (docs/design.md: one seeded engine passed explicitly).
#pragma once

#include <cstdint>
#include <random>

namespace advbo::bo {

/// 64-bit Mersenne twister; seed it once per run and derive per-instance engines with
/// DeriveSeed.
using Rng = std::mt19937_64;

/// Deterministic per-instance seed from a run seed and an instance index (splitmix64 of
/// the pair), so instance k gets the same stream whatever else runs before it.
inline uint64_t DeriveSeed(uint64_t run_seed, uint64_t index) {
  uint64_t z = run_seed + 0x9E3779B97F4A7C15ULL * (index + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

}  // namespace advbo::bo
