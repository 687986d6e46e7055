#include "attacks/simba/simba.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>

namespace advbo::attacks {

void SimbaOptions::Validate(const std::string& name) const {
  if (!(step > 0 && step <= 100))
    throw std::invalid_argument("attack '" + name + "': step must be in (0, 100]");
  if (initial < 0 || initial > 4096 || stride < 0 || stride > 4096)
    throw std::invalid_argument("attack '" + name +
                                "': initial and stride must be in [0, 4096] (0 = side / 8)");
}

std::vector<std::array<int, 3>> SimbaOrder(int channels, int height, int width, int initial,
                                           int stride, bo::Rng& rng) {
  const int side = std::max(height, width);
  std::vector<std::array<int, 3>> order;
  order.reserve(static_cast<size_t>(channels) * height * width);
  for (int lo = 0, hi = std::max(1, initial); lo < side; lo = hi, hi += std::max(1, stride)) {
    const size_t band = order.size();
    for (int c = 0; c < channels; ++c)
      for (int u = 0; u < height; ++u)
        for (int v = 0; v < width; ++v)
          if (std::max(u, v) >= lo && std::max(u, v) < hi) order.push_back({c, u, v});
    std::shuffle(order.begin() + band, order.end(), rng);
  }
  return order;
}

SimbaDctAttack::SimbaDctAttack(SimbaOptions options, std::string name)
    : options_(options), name_(std::move(name)) {
  options_.Validate(name_);
}

AttackResult SimbaDctAttack::Run(oracle::QueryOracle& oracle, bo::Rng& rng,
                                 const AttackProgress& progress) const {
  const double t0 = NowSeconds();
  const int c = oracle.model().channels(), h = oracle.model().height(), w = oracle.model().width();
  const int side = std::max(h, w);
  const int initial = options_.initial > 0 ? options_.initial : std::max(1, side / 8);
  const int stride = options_.stride > 0 ? options_.stride : std::max(1, side / 8);
  const bool targeted = oracle.target() >= 0;
  const int cls = targeted ? oracle.target() : oracle.true_class();
  // The paper's score: the probability of the true class (to lower) or the target (to
  // raise), compared as log-probabilities; higher is better here.
  auto score = [&](const oracle::QueryResult& r) {
    return targeted ? r.log_probs(0, cls) : -r.log_probs(0, cls);
  };
  std::vector<float> x = oracle.clean(), q, y;
  double best = score(oracle.Query(x.data(), 1));
  const float step = static_cast<float>(options_.step);
  while (oracle.remaining() > 0 && !oracle.succeeded()) {
    for (const auto& [ch, u, v] : SimbaOrder(c, h, w, initial, stride, rng)) {
      if (oracle.remaining() <= 0 || oracle.succeeded()) break;
      DctBasis(c, h, w, ch, u, v, &q);
      for (float sign : {-1.0f, 1.0f}) {
        if (oracle.remaining() <= 0 || oracle.succeeded()) break;
        y = x;
        for (size_t k = 0; k < y.size(); ++k) y[k] += sign * step * q[k];
        const double s = score(oracle.Query(y.data(), 1));  // y: as evaluated
        if (s > best) {
          best = s;
          x.swap(y);
          break;
        }
      }
      if (progress) progress(oracle.queries(), oracle.best_objective());
    }
  }
  AttackResult r;
  FinishResult(oracle, t0, &r);
  return r;
}

}  // namespace advbo::attacks
