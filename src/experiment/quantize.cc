#include "experiment/quantize.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace advbo::experiment {

std::vector<float> QuantizeInBall(const std::vector<float>& image, const std::vector<float>& clean,
                                  double eps, oracle::Norm norm) {
  if (image.size() != clean.size())
    throw std::invalid_argument("QuantizeInBall: image and clean image differ in length");
  if (norm == oracle::Norm::kL2) {
    std::vector<float> out = image;
    oracle::ProjectOntoL2Ball(out.data(), clean.data(), out.size(), eps, true);
    return out;
  }
  std::vector<float> out(image.size());
  for (size_t i = 0; i < image.size(); ++i) {
    const double c = clean[i], lo = std::max(0.0, c - eps), hi = std::min(1.0, c + eps);
    auto inside = [&](long k) {
      const double v = static_cast<float>(k / 255.0);  // as stored and queried (float)
      return v >= lo && v <= hi;
    };
    long k = std::lround(std::clamp(static_cast<double>(image[i]), 0.0, 1.0) * 255.0);
    // Step toward the clean pixel until inside (at most a couple of steps).
    const long kc = std::lround(c * 255.0);
    while (!inside(k) && k != kc) k += k > kc ? -1 : 1;
    out[i] = inside(k) ? static_cast<float>(k / 255.0) : clean[i];
  }
  return out;
}

}  // namespace advbo::experiment
