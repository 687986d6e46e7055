#include "text/numbers.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace advbo::text {

long ParseInteger(const std::string& text, const std::string& what) {
  const char* s = text.c_str();
  const bool digits_only =
      !text.empty() && text.find_first_not_of("+-0123456789") == std::string::npos;
  char* end = nullptr;
  errno = 0;
  const long v = digits_only ? std::strtol(s, &end, 10) : 0;
  if (!digits_only || end != s + text.size() || errno == ERANGE)
    throw std::invalid_argument(what + " '" + text + "' is not an integer");
  return v;
}

std::vector<long> ParseIntegerList(const std::string& text, char sep, const std::string& what) {
  std::vector<long> out;
  size_t start = 0;
  for (;;) {
    const size_t end = text.find(sep, start);
    const std::string piece = text.substr(start, end == std::string::npos ? end : end - start);
    try {
      out.push_back(ParseInteger(piece, what));
    } catch (const std::invalid_argument&) {
      throw std::invalid_argument(what + " '" + text + "': '" + piece + "' is not an integer");
    }
    if (end == std::string::npos) return out;
    start = end + 1;
  }
}

namespace {

// A whole decimal number (strtod's syntax without leading spaces, infinities or NaN): 1 and
// *out set; 0 when the text is not one; -1 when it is one that no double holds in full
// (beyond ~1.8e308, or non-zero below ~2.2e-308, where strtod reports ERANGE).
int ParseDecimal(const std::string& text, double* out) {
  if (text.empty() || std::isspace(static_cast<unsigned char>(text.front()))) return 0;
  if (text.find_first_not_of("+-.0123456789eE") != std::string::npos) return 0;
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size()) return 0;
  if (errno == ERANGE || !std::isfinite(v)) return -1;
  *out = v;
  return 1;
}

}  // namespace

double ParseNumberOrFraction(const std::string& text, const std::string& what) {
  const auto bad = [&] {
    return std::invalid_argument(what + " '" + text +
                                 "' is not a number (write e.g. 0.3 or 8/255)");
  };
  const auto range = [&] {
    return std::invalid_argument(what + " '" + text +
                                 "' is a number outside the range of doubles (magnitudes "
                                 "2.2e-308 .. 1.8e308, or 0)");
  };
  const auto parse = [&](const std::string& piece, double* v) {
    const int ok = ParseDecimal(piece, v);
    if (ok < 0) throw range();
    if (ok == 0) throw bad();
  };
  const size_t slash = text.find('/');
  double num = 0, den = 1;
  if (slash == std::string::npos) {
    parse(text, &num);
    return num;
  }
  parse(text.substr(0, slash), &num);
  parse(text.substr(slash + 1), &den);
  if (den == 0) throw bad();
  const double v = num / den;
  if (!std::isfinite(v) || (v == 0 && num != 0)) throw range();
  return v;
}

std::string FormatG(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", digits < 1 ? 1 : digits > 17 ? 17 : digits, v);
  return buf;
}

std::string FormatFixed(double v, int decimals) {
  if (!std::isfinite(v)) return "-";
  char b[64];
  std::snprintf(b, sizeof(b), "%.*f", decimals, v);
  return b;
}

std::string JoinG(const double* values, long n, const std::string& sep, int digits) {
  std::string s;
  for (long i = 0; i < n; ++i) s += (i ? sep : "") + FormatG(values[i], digits);
  return s;
}

}  // namespace advbo::text
