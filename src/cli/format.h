// Small formatting helpers shared by the subcommands' summary tables.
#pragma once

#include <string>
#include <vector>

namespace advbo::cli {

/// Median of v (NaN if empty).
double Median(std::vector<double> v);
/// v with `prec` decimals, or "-" when v is not finite.
std::string Fmt(double v, int prec = 1);

}  // namespace advbo::cli
