#include "attacks/tangent/tangent_point.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace advbo::attacks {

std::vector<double> TangentPoint(const std::vector<float>& x0, const std::vector<float>& center,
                                 const std::vector<double>& normal, double normal_radius,
                                 double tangential_radius) {
  const size_t d = x0.size();
  if (center.size() != d || normal.size() != d)
    throw std::invalid_argument("TangentPoint: x0, center and normal differ in size (" +
                                std::to_string(d) + ", " + std::to_string(center.size()) + ", " +
                                std::to_string(normal.size()) + ")");
  if (!(normal_radius > 0 && std::isfinite(normal_radius)) ||
      !(tangential_radius > 0 && std::isfinite(tangential_radius)))
    throw std::invalid_argument("TangentPoint: the radii must be positive and finite");
  const double L = normal_radius, S = tangential_radius;
  // x0 - x_b = Z u + P t, t the unit tangential direction towards x0.
  double Z = 0;
  for (size_t k = 0; k < d; ++k) Z += (static_cast<double>(x0[k]) - center[k]) * normal[k];
  std::vector<double> t(d);
  double P = 0;
  for (size_t k = 0; k < d; ++k) {
    t[k] = static_cast<double>(x0[k]) - center[k] - Z * normal[k];
    P += t[k] * t[k];
  }
  P = std::sqrt(P);
  const double A = P / S, B = Z / L, rho = std::hypot(A, B);
  std::vector<double> k(d);
  if (!(rho > 1) || !(P > 1e-12 * (1 + std::abs(Z)))) {
    for (size_t i = 0; i < d; ++i) k[i] = center[i] + L * normal[i];
    return k;
  }
  const double phi = std::clamp(std::atan2(B, A) + std::acos(1 / rho), 0.0, M_PI);
  const double along_t = S * std::cos(phi) / P, along_u = L * std::sin(phi);
  for (size_t i = 0; i < d; ++i) k[i] = center[i] + along_t * t[i] + along_u * normal[i];
  return k;
}

}  // namespace advbo::attacks
