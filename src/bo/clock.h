// Wall-time measurement for the per-step timings in traces (seconds_bo, seconds_objective).
#pragma once

#include <chrono>

namespace advbo::bo {

/// Monotonic clock of every timing in advbo.
using Clock = std::chrono::steady_clock;

/// Seconds elapsed since t0 (>= 0).
inline double SecondsSince(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace advbo::bo
