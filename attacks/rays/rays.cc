#include "attacks/rays/rays.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "attacks/signhunter/signhunter.h"

namespace advbo::attacks {
RaySearch::RaySearch(oracle::QueryOracle& oracle, double tolerance)
    : oracle_(oracle),
      x0_(oracle.clean()),
      grid_(oracle.pixel_space() == oracle::PixelSpace::k8bit),
      step_(grid_ ? 1.0 / 255.0 : tolerance),
      x_(x0_.size()) {}

bool RaySearch::Adversarial(const std::vector<float>& d, double r) {
  if (oracle_.remaining() <= 0) return false;
  for (size_t k = 0; k < x0_.size(); ++k)
    x_[k] = x0_[k] + static_cast<float>(r) * d[k];  // clipped (and rounded) by the oracle
  return oracle_.Query(x_.data(), 1).adversarial[0];
}

double RaySearch::Search(const std::vector<float>& d, double best) {
  const double start = std::isfinite(best) ? best : 1.0;
  if (!Adversarial(d, start)) return best;
  // Radii in whole steps: lo is not adversarial (or 0), hi is.
  long lo = 0, hi = std::max(1L, static_cast<long>(std::ceil(start / step_ - 1e-9)));
  if (grid_) hi = std::lround(start * 255.0);
  while (hi - lo > 1 && oracle_.remaining() > 0 && !oracle_.succeeded()) {
    const long mid = (lo + hi) / 2;
    (Adversarial(d, mid * step_) ? hi : lo) = mid;
  }
  return std::min(start, hi * step_);
}

double RaySearch::Hierarchical(std::vector<float>* d, double best, const AttackProgress& progress,
                               long patience) {
  const size_t n = d->size();
  int h = 0;
  long i = 0, improved_at = oracle_.queries();
  while (oracle_.remaining() > 0 && !oracle_.succeeded() &&
         (patience <= 0 || oracle_.queries() - improved_at < patience)) {
    const auto [begin, end] = SignHunterChunk(n, h, i);
    for (size_t k = begin; k < end; ++k) (*d)[k] = -(*d)[k];
    const double r = Search(*d, best);
    if (r < best)
      best = r, improved_at = oracle_.queries();
    else
      for (size_t k = begin; k < end; ++k) (*d)[k] = -(*d)[k];  // keep the better direction
    if (++i == (1L << h)) {
      i = 0;
      h = (size_t{1} << (h + 1)) > n ? 0 : h + 1;
    }
    if (progress) progress(oracle_.queries(), oracle_.best_objective());
  }
  return best;
}

RaysAttack::RaysAttack(RaysOptions options, std::string name)
    : LabelAttack(std::move(name), {oracle::Norm::kLinf}), options_(options) {
  if (!(options_.tolerance > 0 && options_.tolerance <= 1))
    throw std::invalid_argument("attack '" + this->name() + "': tolerance must be in (0, 1]");
}

AttackResult RaysAttack::Run(oracle::QueryOracle& oracle, bo::Rng& /*rng*/,
                             const AttackProgress& progress) const {
  const double t0 = NowSeconds();
  const size_t n = oracle.clean().size();
  RaySearch search(oracle, options_.tolerance);
  std::vector<float> d(n, 1.0f);
  double best = search.Search(d, std::numeric_limits<double>::infinity());
  best = search.Hierarchical(&d, best, progress);
  AttackResult r;
  FinishResult(oracle, t0, &r);
  r.details["rays_radius"] = std::isfinite(best) ? nlohmann::json(best) : nlohmann::json(nullptr);
  return r;
}

}  // namespace advbo::attacks
