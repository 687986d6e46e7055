#include "attacks/zoo/zoo.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "attacks/common/cw_loss.h"

namespace advbo::attacks {

void ZooOptions::Validate() const {
  if (!(h > 0) || !(learning_rate > 0) || !(c > 0) || coordinates < 1)
    throw std::invalid_argument("ZOO: h, learning_rate and c must be > 0, coordinates >= 1");
  if (!(beta1 >= 0 && beta1 < 1) || !(beta2 >= 0 && beta2 < 1) || !(kappa >= 0))
    throw std::invalid_argument("ZOO: beta1 and beta2 must be in [0, 1), kappa >= 0");
}

AttackResult ZooAttack::Run(oracle::QueryOracle& oracle, bo::Rng& rng,
                            const AttackProgress& progress) const {
  options_.Validate();
  const ZooOptions& o = options_;
  const double t0 = NowSeconds();
  const std::vector<float>& x0 = oracle.clean();
  const size_t d = x0.size();
  const float eps = static_cast<float>(oracle.query_radius());
  std::vector<float> lo(d), hi(d), x = x0;
  for (size_t k = 0; k < d; ++k) {
    lo[k] = std::max(0.0f, x0[k] - eps);
    hi[k] = std::min(1.0f, x0[k] + eps);
  }
  std::vector<double> m(d, 0.0), v(d, 0.0);
  std::vector<int> steps(d, 0);
  std::vector<int> coords(d);
  std::iota(coords.begin(), coords.end(), 0);
  std::vector<float> batch;
  // Coordinate step h (Chen et al. 2017); with 8-bit queries at least one grid step (1/255),
  // else both probes round back onto x and the difference is always 0.
  const bool grid = oracle.pixel_space() == oracle::PixelSpace::k8bit;
  const double h = grid ? std::max(o.h, 1.0 / 255.0) : o.h;
  while (oracle.remaining() >= 2 && !oracle.succeeded()) {
    const int b = static_cast<int>(std::min<long>(o.coordinates, oracle.remaining() / 2));
    std::shuffle(coords.begin(), coords.end(), rng);
    batch.assign(2 * b * d, 0.0f);
    for (int j = 0; j < b; ++j) {
      std::copy(x.begin(), x.end(), batch.begin() + (2 * j) * d);
      std::copy(x.begin(), x.end(), batch.begin() + (2 * j + 1) * d);
      batch[(2 * j) * d + coords[j]] += static_cast<float>(h);
      batch[(2 * j + 1) * d + coords[j]] -= static_cast<float>(h);
    }
    const oracle::QueryResult qr = oracle.Query(batch.data(), 2 * b);
    const Eigen::VectorXd f = CwLoss(qr.log_probs, oracle.true_class(), oracle.target(), o.kappa);
    for (int j = 0; j < b; ++j) {
      const int i = coords[j];
      // Loss = c f + ||x - x0||^2 on the (clipped) evaluated points.
      auto total = [&](int row) {
        const double diff = batch[row * d + i] - x0[i];
        return o.c * f(row) + diff * diff;  // other coordinates cancel in the difference
      };
      // 8-bit: divide by the step the projected probes really took (0 at a face: no update).
      const double span =
          grid ? static_cast<double>(batch[(2 * j) * d + i]) - batch[(2 * j + 1) * d + i] : 2 * o.h;
      if (span == 0) continue;
      const double g = (total(2 * j) - total(2 * j + 1)) / span;
      ++steps[i];
      m[i] = o.beta1 * m[i] + (1 - o.beta1) * g;
      v[i] = o.beta2 * v[i] + (1 - o.beta2) * g * g;
      const double mh = m[i] / (1 - std::pow(o.beta1, steps[i]));
      const double vh = v[i] / (1 - std::pow(o.beta2, steps[i]));
      x[i] = std::clamp(static_cast<float>(x[i] - o.learning_rate * mh / (std::sqrt(vh) + 1e-8)),
                        lo[i], hi[i]);
    }
    if (progress) progress(oracle.queries(), oracle.best_objective());
  }
  AttackResult r;
  FinishResult(oracle, t0, &r);
  return r;
}

}  // namespace advbo::attacks
