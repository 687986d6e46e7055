#include "attacks/nes/nes.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <vector>

namespace advbo::attacks {

void NesOptions::Validate(const std::string& name) const {
  if (samples < 1 || samples > 100000)
    throw std::invalid_argument("attack '" + name + "': samples must be in [1, 100000]");
  if (!(sigma > 0 && sigma <= 1))
    throw std::invalid_argument("attack '" + name + "': sigma must be in (0, 1]");
  if (!(lr_ratio > 0 && lr_ratio <= 1))
    throw std::invalid_argument("attack '" + name + "': lr_ratio must be in (0, 1]");
  if (unsigned_steps != 0 && unsigned_steps != 1)
    throw std::invalid_argument("attack '" + name + "': unsigned must be 0 or 1");
}

NesAttack::NesAttack(NesOptions options, std::string name)
    : options_(options), name_(std::move(name)) {
  options_.Validate(name_);
}

AttackResult NesAttack::Run(oracle::QueryOracle& oracle, bo::Rng& rng,
                            const AttackProgress& progress) const {
  const double t0 = NowSeconds();
  const std::vector<float>& x0 = oracle.clean();
  const size_t d = x0.size();
  const bool grid = oracle.pixel_space() == oracle::PixelSpace::k8bit;
  const float sigma =
      static_cast<float>(grid ? std::max(options_.sigma, 1.0 / 255.0) : options_.sigma);
  const float lr = static_cast<float>(options_.lr_ratio * oracle.query_radius());
  std::normal_distribution<float> g(0.0f, 1.0f);
  std::vector<float> x = x0, u, batch, grad(d);
  const double budget = static_cast<double>(std::max<long>(1, oracle.budget()));
  while (oracle.remaining() > 0 && !oracle.succeeded()) {
    // One estimate: as many antithetic pairs as the budget allows, keeping one query for
    // the new iterate.
    const int pairs =
        static_cast<int>(std::min<long>(options_.samples, (oracle.remaining() - 1) / 2));
    if (pairs < 1) break;
    u.resize(static_cast<size_t>(pairs) * d);
    batch.resize(2 * u.size());
    for (auto& v : u) v = g(rng);
    for (int p = 0; p < pairs; ++p)
      for (size_t k = 0; k < d; ++k) {
        batch[(2 * p) * d + k] = x[k] + sigma * u[p * d + k];
        batch[(2 * p + 1) * d + k] = x[k] - sigma * u[p * d + k];
      }
    const Eigen::VectorXd y = oracle.Query(batch.data(), 2 * pairs).objective;
    std::fill(grad.begin(), grad.end(), 0.0f);
    for (int p = 0; p < pairs; ++p) {
      const float diff = static_cast<float>(y(2 * p) - y(2 * p + 1));
      if (!std::isfinite(diff)) continue;
      for (size_t k = 0; k < d; ++k) grad[k] += diff * u[p * d + k];
    }
    if (options_.unsigned_steps) {
      float top = 0.0f;
      for (float v : grad) top = std::max(top, std::fabs(v));
      const double used = static_cast<double>(oracle.queries()) / budget;
      const float step = lr * (used < 0.5 ? 1.0f : used < 0.75 ? 0.5f : 0.25f);
      if (top > 0)
        for (size_t k = 0; k < d; ++k) x[k] += step * grad[k] / top;
    } else {
      for (size_t k = 0; k < d; ++k) x[k] += lr * static_cast<float>((grad[k] > 0) - (grad[k] < 0));
    }
    oracle.Query(x.data(), 1);  // the iterate itself (projected in place): a success?
    if (progress) progress(oracle.queries(), oracle.best_objective());
  }
  AttackResult r;
  FinishResult(oracle, t0, &r);
  return r;
}

}  // namespace advbo::attacks
