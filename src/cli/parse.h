// Parsers of `advbo bo`'s box and initial-design options and of --shard (a library of their
// own so the fuzz targets in tests/fuzz/ reach them).
#pragma once

#include <Eigen/Dense>
#include <string>
#include <utility>

#include "bo/design.h"

namespace advbo::cli {

/// Parses --shard "k/n" (bench, evaluate) into (k, n) with 1 <= k <= n; throws
/// std::invalid_argument naming the option and the value otherwise.
std::pair<int, int> ParseShard(const std::string& s);

/// Largest box dimension --dim / --bounds accept.
inline constexpr int kMaxBoxDim = 10000;

/// Parses --bounds: "LO:HI" (every coordinate; with dim > 1 repeated dim times) or
/// "LO:HI,LO:HI,..." (one range per coordinate; must match dim when dim > 0). Fills lb, ub
/// [d]. Throws std::invalid_argument naming the bad piece: not LO:HI, not numbers, not
/// finite, LO >= HI, a count that differs from dim, or more than kMaxBoxDim ranges.
void ParseBounds(const std::string& spec, int dim, Eigen::VectorXd* lb, Eigen::VectorXd* ub);

/// Parses --init: "sobol", "lhs:10" (design and point count) or "12" (Sobol, count). n = 0
/// means the default count. Throws std::invalid_argument on an unknown design or a count
/// that is not an integer >= 1.
void ParseInit(const std::string& spec, bo::DesignKind* kind, int* n);

/// Largest number of --candidates rows.
inline constexpr int kMaxCandidates = 1000000;

/// Parses the text of a --candidates CSV file (`name` for messages): one candidate per
/// line, d comma-separated finite numbers, the same d on every line; blank lines and a
/// first line that is not numbers (a header) are skipped. Returns [M, d], M >= 1. Throws
/// std::invalid_argument naming the file and line: not a number, a different column count,
/// no rows, more than kMaxCandidates rows or kMaxBoxDim columns.
Eigen::MatrixXd ParseCandidates(const std::string& text, const std::string& name);

}  // namespace advbo::cli
