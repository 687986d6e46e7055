// CLI11 validators with messages in the user's terms (CLI11's PositiveNumber prints the
// whole double range, e.g. "Value 0 not in range 0.000000 to 1797...").
#pragma once

#include <CLI/CLI.hpp>
#include <climits>
#include <string>

namespace advbo::cli {

/// Accepts an integer in [min, max]; otherwise "must be an integer >= MIN, got 'TEXT'" (or
/// "in MIN..MAX" when max is finite).
inline CLI::Validator IntInRange(long long min, long long max = LLONG_MAX) {
  const std::string want = max == LLONG_MAX
                               ? ">= " + std::to_string(min)
                               : "in " + std::to_string(min) + ".." + std::to_string(max);
  return CLI::Validator(
      [min, max, want](std::string& text) -> std::string {
        try {
          size_t used = 0;
          const long long v = std::stoll(text, &used);
          if (used == text.size() && v >= min && v <= max) return "";
        } catch (const std::exception&) {
        }
        return "must be an integer " + want + ", got '" + text + "'";
      },
      "INT " + want);
}

/// Accepts an integer >= `min`.
inline CLI::Validator IntAtLeast(long long min) { return IntInRange(min); }

/// Accepts a non-negative integer that fits in 64 bits (seeds); refuses "-1", which
/// std::stoull would silently wrap to 2^64 - 1.
inline CLI::Validator UnsignedInt() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        const bool digits =
            !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
        if (digits) {
          try {
            std::stoull(text);
            return "";
          } catch (const std::exception&) {
          }
        }
        return "must be an integer in 0.." + std::to_string(~0ULL) + ", got '" + text + "'";
      },
      "UINT");
}

}  // namespace advbo::cli
