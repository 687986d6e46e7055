// CLI11 validators with messages in the user's terms (CLI11's PositiveNumber prints the
// whole double range, e.g. "Value 0 not in range 0.000000 to 1797...").
#pragma once

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <climits>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

#include "text/numbers.h"

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
      max == LLONG_MAX ? ">= " + std::to_string(min)
                       : std::to_string(min) + ".." + std::to_string(max));
}

/// Accepts a finite number in the interval from `lo` to `hi` (open ends excluded); otherwise
/// "must be in (LO, HI], got 'TEXT'" (or "> LO" / ">= LO" when hi is +inf).
inline CLI::Validator NumberIn(double lo, double hi, bool lo_open = false, bool hi_open = false) {
  auto fmt = [](double v) {
    std::string s = std::to_string(v);
    s.erase(s.find_last_not_of('0') + 1);
    if (!s.empty() && s.back() == '.') s.pop_back();
    return s;
  };
  const bool unbounded = hi == std::numeric_limits<double>::infinity();
  const std::string range =
      unbounded ? std::string(lo_open ? "> " : ">= ") + fmt(lo)
                : (lo_open ? "(" : "[") + fmt(lo) + ", " + fmt(hi) + (hi_open ? ")" : "]");
  const std::string want = unbounded ? range : "in " + range;
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        try {
          size_t used = 0;
          const double v = std::stod(text, &used);
          const bool lo_ok = lo_open ? v > lo : v >= lo;
          const bool hi_ok = hi_open ? v < hi : v <= hi;
          if (used == text.size() && std::isfinite(v) && lo_ok && hi_ok) return "";
        } catch (const std::exception&) {
        }
        return "must be a number " + want + ", got '" + text + "'";
      },
      range);
}

/// A radius as typed: a decimal or a fraction (text::ParseNumberOrFraction: "0.3", "8/255")
/// in (0, hi]; the text is rewritten as the number in full precision ("8/255" ->
/// "0.031372549019607843", exact in double), so it must be added with ->transform, not
/// ->check. Refused otherwise: "must be a radius in (0, HI] (a number or a fraction such as
/// 8/255), got 'TEXT'", or with `want` as the range's text.
inline CLI::Validator RadiusIn(double hi, std::string want = "") {
  if (want.empty()) {
    std::string h = std::to_string(hi);
    h.erase(h.find_last_not_of('0') + 1);
    if (!h.empty() && h.back() == '.') h.pop_back();
    want = "(0, " + h + "]";
  }
  return CLI::Validator(
      [hi, want](std::string& text) -> std::string {
        try {
          const double v = text::ParseNumberOrFraction(text, "radius");
          if (v > 0 && v <= hi) {
            text = text::FormatG(v, 17);
            return "";
          }
        } catch (const std::invalid_argument&) {
        }
        return "must be a radius in " + want + " (a number or a fraction such as 8/255), got '" +
               text + "'";
      },
      want);
}

/// The ball's radius (--eps): RadiusIn(l2_max) with a message naming both norms' ranges,
/// "(0, 1] with --norm linf, (0, l2_max] with --norm l2"; the experiment then checks it
/// against the norm actually chosen (oracle::BallShape::Check). Use with ->transform.
inline CLI::Validator BallRadius(double l2_max) {
  std::string hi = std::to_string(l2_max);
  hi.erase(hi.find_last_not_of('0') + 1);
  if (!hi.empty() && hi.back() == '.') hi.pop_back();
  return RadiusIn(l2_max, "(0, 1] with --norm linf, (0, " + hi + "] with --norm l2");
}

/// Accepts a finite number >= `lo` (> lo when `open`).
inline CLI::Validator NumberAtLeast(double lo, bool open = false) {
  return NumberIn(lo, std::numeric_limits<double>::infinity(), open);
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

/// True when `text` spells a non-finite number as std::stod reads it: an optional sign, then
/// "nan", "nan(...)", "inf" or "infinity" in any case.
inline bool SpellsNonFinite(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  size_t i = text.find_first_not_of(" \t");
  if (i == std::string::npos) return false;
  if (text[i] == '+' || text[i] == '-') ++i;
  const std::string body = text.substr(i);
  return body == "inf" || body == "infinity" || body == "nan" || body.rfind("nan(", 0) == 0;
}

/// Refuses an empty value ("must not be empty": CLI11 would otherwise treat `--model ""` as
/// a value that later code reads as "not given") and a non-finite number (std::stod accepts
/// "nan" and "inf", which no advbo option means). Applied to every option by
/// GuardEveryValue; the option's own check still runs after it.
inline CLI::Validator NonEmptyFinite() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        if (text.find_first_not_of(" \t\r\n") == std::string::npos)
          return "must not be empty (leave the option out to use its default)";
        if (SpellsNonFinite(text)) return "must be a finite value, got '" + text + "'";
        return "";
      },
      "");
}

/// Adds NonEmptyFinite() to the checks of every value-taking option of `app` and of
/// its subcommands, recursively, and makes every flag refuse a value (`--quiet=2`). Call once
/// after every subcommand is registered: one validation layer for empty and non-finite values
/// across the whole CLI.
inline void GuardEveryValue(CLI::App& app) {
  for (CLI::Option* opt : app.get_options([](const CLI::Option*) { return true; })) {
    if (opt->get_expected_max() > 0) opt->check(NonEmptyFinite());
    // A flag takes no value: `--quiet=2` or `--no-bad-queries=false` is an error, not a
    // silently reinterpreted switch.
    if (opt->get_expected_max() == 0) opt->disable_flag_override();
  }
  for (CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    GuardEveryValue(*sub);
}

}  // namespace advbo::cli
