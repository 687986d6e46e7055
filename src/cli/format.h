// Small formatting helpers shared by the subcommands' summary tables.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace advbo::cli {

/// Field `key` of a summary object (experiment::SummarizeRecords) as a number, NaN when null
/// (so that Fmt prints "-"). Throws nlohmann::json's out_of_range when the key is absent.
double NumberOr(const nlohmann::json& summary, const char* key);
/// v with `prec` decimals, or "-" when v is not finite.
std::string Fmt(double v, int prec = 1);

}  // namespace advbo::cli
