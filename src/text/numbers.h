// Numbers in text a user or a client sends (option values, request headers): the one place
// that decides what counts as an integer, so every option and header refuses the same things.
#pragma once

#include <string>
#include <vector>

namespace advbo::text {

/// `text` as a whole decimal integer (an optional sign, digits, nothing else: no spaces, no
/// trailing characters, no fraction) that fits a long. Throws std::invalid_argument
/// "<what> '<text>' is not an integer" otherwise.
long ParseInteger(const std::string& text, const std::string& what);

/// The integers of `text` separated by `sep` ("3,32,32" with ','), each as ParseInteger
/// checks it (so an empty piece, as in "3,,32" or a trailing separator, is refused). Throws
/// std::invalid_argument naming `what`, the text and the bad piece. Ranges and counts are the
/// caller's to check.
std::vector<long> ParseIntegerList(const std::string& text, char sep, const std::string& what);

/// `text` as a finite real number: a decimal ("0.3", "3e-2") or a fraction of two decimals
/// ("8/255", "0.5/2"), the way radii are written in the field (ε = 8/255). The whole text
/// must parse (no spaces, no trailing characters); the denominator must be non-zero. A
/// fraction is evaluated in double precision (8/255 = 0.03137254901960784...). Throws
/// std::invalid_argument "<what> '<text>' is not a number (write e.g. 0.3 or 8/255)"
/// otherwise. Ranges are the caller's to check.
double ParseNumberOrFraction(const std::string& text, const std::string& what);

/// `v` as printf's %g prints it with `digits` significant digits (clamped to [1, 17]):
/// FormatG(0.3, 4) = "0.3", FormatG(8.0, 6) = "8", FormatG(1e-5, 3) = "1e-05". With 17
/// digits the text reads back as exactly `v` (what a command line or a file must carry).
std::string FormatG(double v, int digits);

/// `v` with `decimals` digits after the point ("%.*f": FormatFixed(0.8125, 1) = "0.8"), or
/// "-" when v is not finite (a table's empty cell).
std::string FormatFixed(double v, int decimals);

/// The `n` values at `values` as FormatG(v, digits) joined by `sep` ("0.5 1 2"); "" when
/// n == 0.
std::string JoinG(const double* values, long n, const std::string& sep, int digits = 17);

}  // namespace advbo::text
