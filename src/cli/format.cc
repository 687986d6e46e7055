#include "cli/format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace advbo::cli {

double Median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::string Fmt(double v, int prec) {
  if (!std::isfinite(v)) return "-";
  char b[64];
  std::snprintf(b, sizeof(b), "%.*f", prec, v);
  return b;
}

}  // namespace advbo::cli
