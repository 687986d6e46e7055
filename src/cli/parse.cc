#include "cli/parse.h"

#include <cctype>
#include <cmath>
#include <sstream>
#include <stdexcept>
#include <utility>
#include <vector>

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
      parts.emplace_back(std::stod(item.substr(0, c)), std::stod(item.substr(c + 1)));
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

}  // namespace advbo::cli
