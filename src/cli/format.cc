#include "cli/format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace advbo::cli {

double NumberOr(const nlohmann::json& summary, const char* key) {
  return summary.at(key).is_null() ? NAN : summary.at(key).get<double>();
}

std::string Fmt(double v, int prec) {
  if (!std::isfinite(v)) return "-";
  char b[64];
  std::snprintf(b, sizeof(b), "%.*f", prec, v);
  return b;
}

}  // namespace advbo::cli
