#include "bo/design.h"

#include <algorithm>
#include <boost/random/sobol.hpp>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "bo/enum_names.h"

namespace advbo::bo {

namespace {
constexpr NamedValue<DesignKind> kDesignNames[] = {{DesignKind::kUniform, "uniform"},
                                                   {DesignKind::kLatinHypercube, "lhs"},
                                                   {DesignKind::kSobol, "sobol"}};
}  // namespace

DesignKind ParseDesign(const std::string& name) { return ParseNamed(kDesignNames, name, "design"); }

std::string DesignName(DesignKind kind) { return NameOf(kDesignNames, kind); }

Eigen::MatrixXd MakeDesign(DesignKind kind, int n, const Eigen::VectorXd& lb,
                           const Eigen::VectorXd& ub, Rng& rng) {
  const int d = static_cast<int>(lb.size());
  if (n < 0) throw std::invalid_argument("MakeDesign: negative number of points");
  if (ub.size() != d || d < 1) throw std::invalid_argument("MakeDesign: bad bounds");
  if ((ub.array() < lb.array()).any()) throw std::invalid_argument("MakeDesign: lb > ub");
  std::uniform_real_distribution<double> u(0.0, 1.0);
  Eigen::MatrixXd unit(n, d);
  switch (kind) {
    case DesignKind::kUniform:
      unit = Eigen::MatrixXd::NullaryExpr(n, d, [&]() { return u(rng); });
      break;
    case DesignKind::kLatinHypercube: {
      std::vector<int> perm(n);
      for (int j = 0; j < d; ++j) {
        std::iota(perm.begin(), perm.end(), 0);
        std::shuffle(perm.begin(), perm.end(), rng);
        for (int i = 0; i < n; ++i) unit(i, j) = (perm[i] + u(rng)) / n;
      }
      break;
    }
    case DesignKind::kSobol: {
      if (d > 3667) throw std::invalid_argument("MakeDesign: Sobol supports d <= 3667");
      using Engine = boost::random::sobol_engine<uint32_t, 32, boost::random::default_sobol_table>;
      Engine sobol(static_cast<std::size_t>(d));
      std::uniform_int_distribution<uint32_t> bits;
      std::vector<uint32_t> shift(d);
      for (auto& s : shift) s = bits(rng);
      // Boost starts after the all-zero point; prepend it so the first 2^m points form a
      // (0, m, d)-net. The random digital shift moves it off the corner.
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < d; ++j) {
          const uint32_t v = i == 0 ? 0u : static_cast<uint32_t>(sobol());
          unit(i, j) = std::ldexp(static_cast<double>(v ^ shift[j]) + 0.5, -32);
        }
      break;
    }
  }
  Eigen::MatrixXd x = unit.array().rowwise() * (ub - lb).transpose().array();
  x.rowwise() += lb.transpose();
  return x;
}

}  // namespace advbo::bo
