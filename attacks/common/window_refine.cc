#include "attacks/common/window_refine.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "attacks/square/square.h"

namespace advbo::attacks {

void ProposeSquareWindow(const std::vector<float>& x0, const std::vector<float>& best, int c, int h,
                         int w, int s, float radius, bo::Rng& rng, std::vector<float>* cand,
                         float min_magnitude) {
  std::uniform_int_distribution<int> rh(0, h - s), rw(0, w - s);
  std::bernoulli_distribution coin(0.5);
  std::uniform_real_distribution<float> mag(std::clamp(min_magnitude, 0.0f, 1.0f), 1.0f);
  *cand = best;
  for (int attempt = 0; attempt < 10; ++attempt) {
    const int r0 = rh(rng), c0 = rw(rng);
    bool changed = false;
    for (int ch = 0; ch < c; ++ch) {
      float sgn = coin(rng) ? radius : -radius;
      if (min_magnitude < 1.0f) sgn *= mag(rng);
      for (int row = r0; row < r0 + s; ++row)
        for (int col = c0; col < c0 + s; ++col) {
          const size_t k = (static_cast<size_t>(ch) * h + row) * w + col;
          const float v = std::clamp(x0[k] + sgn, 0.0f, 1.0f);
          changed |= std::abs(v - best[k]) > 1e-7f;
          (*cand)[k] = v;
        }
    }
    if (changed) return;
    *cand = best;
  }
}

std::vector<float> SquareStripes(const std::vector<float>& x0, int c, int h, int w, float radius,
                                 bo::Rng& rng, float min_magnitude) {
  std::bernoulli_distribution coin(0.5);
  std::uniform_real_distribution<float> mag(std::clamp(min_magnitude, 0.0f, 1.0f), 1.0f);
  std::vector<float> out(x0.size());
  for (int ch = 0; ch < c; ++ch)
    for (int col = 0; col < w; ++col) {
      float s = coin(rng) ? radius : -radius;
      if (min_magnitude < 1.0f) s *= mag(rng);
      for (int row = 0; row < h; ++row) {
        const size_t k = (static_cast<size_t>(ch) * h + row) * w + col;
        out[k] = std::clamp(x0[k] + s, 0.0f, 1.0f);
      }
    }
  return out;
}

void RefineWithWindows(oracle::QueryOracle& oracle, long queries, double p_init, bo::Rng& rng,
                       const std::function<void(long, double)>& progress) {
  if (oracle.queries() == 0)
    throw std::invalid_argument("RefineWithWindows: no best image yet (query something first)");
  if (!(p_init > 0 && p_init <= 1))
    throw std::invalid_argument("RefineWithWindows: p_init must be in (0, 1]");
  const std::vector<float>& x0 = oracle.clean();
  const int c = oracle.model().channels(), h = oracle.model().height(), w = oracle.model().width();
  const float r = static_cast<float>(oracle.query_radius());
  const long n = std::min(queries, oracle.remaining());
  std::vector<float> best = oracle.best_image(), cand;
  double best_obj = oracle.best_objective();
  for (long i = 1; i <= n && !oracle.succeeded(); ++i) {
    const double p = SquareSchedule(p_init, i, n);
    const int s = std::clamp(static_cast<int>(std::lround(std::sqrt(p * h * w))), 1,
                             std::max(1, std::min(h, w) - 1));
    ProposeSquareWindow(x0, best, c, h, w, s, r, rng, &cand);
    const double y = oracle.Query(cand.data(), 1).objective(0);  // cand is now projected
    if (y > best_obj) {
      best_obj = y;
      best.swap(cand);
    }
    if (progress) progress(oracle.queries(), oracle.best_objective());
  }
}

}  // namespace advbo::attacks
