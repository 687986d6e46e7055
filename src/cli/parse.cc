#include "cli/parse.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <stdexcept>
#include <utility>
#include <vector>

#include "text/numbers.h"

namespace advbo::cli {

void ParseBounds(const std::string& spec, int dim, Eigen::VectorXd* lb, Eigen::VectorXd* ub) {
  std::vector<std::pair<double, double>> parts;
  std::stringstream ss(spec);
  std::string item;
  while (std::getline(ss, item, ',')) {
    const auto c = item.find(':');
    if (c == std::string::npos)
      throw std::invalid_argument("--bounds: '" + item + "' is not LO:HI");
    try {
      const std::string lo = item.substr(0, c), hi = item.substr(c + 1);
      size_t used_lo = 0, used_hi = 0;
      parts.emplace_back(std::stod(lo, &used_lo), std::stod(hi, &used_hi));
      if (used_lo != lo.size() || used_hi != hi.size()) throw std::invalid_argument("trailing");
    } catch (const std::exception&) {
      throw std::invalid_argument("--bounds: '" + item + "' is not LO:HI with numbers");
    }
  }
  if (parts.empty()) throw std::invalid_argument("--bounds: empty");
  if (dim > kMaxBoxDim || static_cast<long>(parts.size()) > kMaxBoxDim)
    throw std::invalid_argument("--bounds / --dim: at most " + std::to_string(kMaxBoxDim) +
                                " dimensions");
  if (parts.size() == 1 && dim > 1) parts.resize(dim, parts[0]);
  if (dim > 0 && static_cast<int>(parts.size()) != dim)
    throw std::invalid_argument("--bounds gives " + std::to_string(parts.size()) +
                                " ranges but --dim is " + std::to_string(dim));
  lb->resize(parts.size());
  ub->resize(parts.size());
  for (size_t i = 0; i < parts.size(); ++i) {
    (*lb)(i) = parts[i].first;
    (*ub)(i) = parts[i].second;
    if (!(parts[i].first < parts[i].second) || !std::isfinite(parts[i].first) ||
        !std::isfinite(parts[i].second))
      throw std::invalid_argument("--bounds: range " + std::to_string(i) +
                                  " must be finite with LO < HI");
  }
}

void ParseInit(const std::string& spec, bo::DesignKind* kind, int* n) {
  const auto c = spec.find(':');
  std::string name = spec.substr(0, c), count = c == std::string::npos ? "" : spec.substr(c + 1);
  if (!name.empty() && std::isdigit(static_cast<unsigned char>(name[0]))) {
    count = name;
    name = "sobol";
  }
  *kind = bo::ParseDesign(name);
  *n = 0;
  if (!count.empty()) {
    try {
      size_t used = 0;
      *n = std::stoi(count, &used);
      if (used != count.size() || *n < 1) throw std::invalid_argument("");
    } catch (const std::exception&) {
      throw std::invalid_argument("--init: '" + spec + "' is not DESIGN[:N] or N (N >= 1)");
    }
  }
}

Eigen::MatrixXd ParseCandidates(const std::string& text, const std::string& name) {
  std::vector<std::vector<double>> rows;
  std::istringstream lines(text);
  std::string line;
  long number = 0;
  while (std::getline(lines, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    std::vector<double> row;
    std::istringstream cells(line);
    std::string cell;
    bool numeric = true;
    while (numeric && std::getline(cells, cell, ',')) {
      const char* b = cell.c_str();
      char* end = nullptr;
      const double v = std::strtod(b, &end);
      while (end && (*end == ' ' || *end == '\t')) ++end;
      numeric = end != b && *end == '\0' && std::isfinite(v);
      row.push_back(v);
    }
    if (!line.empty() && line.back() == ',') numeric = false;  // an empty last cell
    const std::string where = name + ": line " + std::to_string(number);
    if (!numeric) {
      if (rows.empty() && number == 1) continue;  // a header
      throw std::invalid_argument(where + ": not a row of finite numbers");
    }
    if (row.size() > static_cast<size_t>(kMaxBoxDim))
      throw std::invalid_argument(where + ": more than " + std::to_string(kMaxBoxDim) + " columns");
    if (!rows.empty() && row.size() != rows.front().size())
      throw std::invalid_argument(where + ": " + std::to_string(row.size()) +
                                  " columns, the first row has " +
                                  std::to_string(rows.front().size()));
    if (rows.size() >= static_cast<size_t>(kMaxCandidates))
      throw std::invalid_argument(name + ": more than " + std::to_string(kMaxCandidates) +
                                  " candidates");
    rows.push_back(std::move(row));
  }
  if (rows.empty()) throw std::invalid_argument(name + ": no candidate rows");
  Eigen::MatrixXd m(rows.size(), rows.front().size());
  for (size_t i = 0; i < rows.size(); ++i)
    for (size_t j = 0; j < rows[i].size(); ++j) m(i, j) = rows[i][j];
  return m;
}

std::pair<int, int> ParseShard(const std::string& s) {
  try {
    const std::vector<long> kn = text::ParseIntegerList(s, '/', "--shard");
    if (kn.size() == 2 && kn[1] >= 1 && kn[1] <= 1000000 && kn[0] >= 1 && kn[0] <= kn[1])
      return {static_cast<int>(kn[0]), static_cast<int>(kn[1])};
  } catch (const std::invalid_argument&) {
  }
  throw std::invalid_argument("--shard must be k/n with 1 <= k <= n, got '" + s + "'");
}

}  // namespace advbo::cli
