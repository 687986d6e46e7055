#include "cli/format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "text/numbers.h"

namespace advbo::cli {

double NumberOr(const nlohmann::json& summary, const char* key) {
  return summary.at(key).is_null() ? NAN : summary.at(key).get<double>();
}

std::string Fmt(double v, int prec) { return text::FormatFixed(v, prec); }

}  // namespace advbo::cli
