#include "attacks/common/ray.h"

namespace advbo::attacks {

RayProbe::RayProbe(oracle::QueryOracle& oracle)
    : oracle_(oracle), x0_(oracle.clean()), x_(x0_.size()) {}

bool RayProbe::Adversarial(const std::vector<double>& v, double r, double scale) {
  if (oracle_.remaining() <= 0) return false;
  const double step = r / scale;
  for (size_t k = 0; k < x0_.size(); ++k) x_[k] = static_cast<float>(x0_[k] + step * v[k]);
  return oracle_.Query(x_.data(), 1).adversarial[0];
}

double RayProbe::Bisect(const std::vector<double>& v, double lo, double hi, double tol,
                        double scale) {
  while (hi - lo > tol && !done()) {
    const double mid = (lo + hi) / 2;
    (Adversarial(v, mid, scale) ? hi : lo) = mid;
  }
  return hi;
}

}  // namespace advbo::attacks
