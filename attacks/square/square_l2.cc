#include "attacks/square/square_l2.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>
#include <vector>

#include "attacks/square/square.h"

namespace advbo::attacks {
namespace {

// The concentric-rectangle bump on an r x c window: ring k (Chebyshev distance k from the
// centre) gets sum_{j >= k} 1 / (j + 1)^2 (Sec. 3.2, eta^(r, c)).
void Bump(int r, int c, float sign, int row0, int stride, std::vector<float>* out) {
  const int cr = r / 2, cc = c / 2, rings = std::max(cr, cc) + 1;
  for (int i = 0; i < r; ++i)
    for (int j = 0; j < c; ++j) {
      const int k = std::max(std::abs(i - cr), std::abs(j - cc));
      double w = 0;
      for (int q = k; q < rings; ++q) w += 1.0 / ((q + 1.0) * (q + 1.0));
      (*out)[(row0 + i) * stride + j] = sign * static_cast<float>(w);
    }
}

// Squared L2 norm of channel ch's s x s window at (r0, c0) of v [C, h, w].
double WindowNorm2(const std::vector<float>& v, int h, int w, int ch, int r0, int c0, int s) {
  double n = 0;
  for (int i = 0; i < s; ++i)
    for (int j = 0; j < s; ++j) {
      const double t = v[(static_cast<size_t>(ch) * h + r0 + i) * w + c0 + j];
      n += t * t;
    }
  return n;
}

// The start: 5 x 5 tiles, each a meta-pattern with a random sign per channel, scaled to an
// L2 norm of eps. [C * h * w].
std::vector<float> InitialPerturbation(int c, int h, int w, double eps, bo::Rng& rng) {
  std::bernoulli_distribution coin(0.5);
  std::vector<float> nu(static_cast<size_t>(c) * h * w, 0.0f);
  const int tile = std::max(1, h / 5);
  const std::vector<float> eta = SquareL2MetaPattern(tile, false);
  for (int r0 = 0; r0 + tile <= h; r0 += tile)
    for (int c0 = 0; c0 + tile <= w; c0 += tile)
      for (int ch = 0; ch < c; ++ch) {
        const float sign = coin(rng) ? 1.0f : -1.0f;
        for (int i = 0; i < tile; ++i)
          for (int j = 0; j < tile; ++j)
            nu[(static_cast<size_t>(ch) * h + r0 + i) * w + c0 + j] = sign * eta[i * tile + j];
      }
  double n = 0;
  for (float v : nu) n += static_cast<double>(v) * v;
  for (auto& v : nu) v = static_cast<float>(v * eps / std::sqrt(n));
  return nu;
}

// Algorithm 3: one update of the perturbation nu [C, h, w] with windows of side s.
void MoveMass(int c, int h, int w, int s, double eps, bo::Rng& rng, std::vector<float>* nu) {
  std::bernoulli_distribution coin(0.5);
  std::uniform_int_distribution<int> pos_h(0, h - s), pos_w(0, w - s);
  const int r1 = pos_h(rng), c1 = pos_w(rng), r2 = pos_h(rng), c2 = pos_w(rng);
  double total = 0;
  for (float v : *nu) total += static_cast<double>(v) * v;
  const double unused2 = std::max(0.0, eps * eps - total);
  const std::vector<float> eta = SquareL2MetaPattern(s, coin(rng));
  auto at = [&](int ch, int i, int j) -> float& {
    return (*nu)[(static_cast<size_t>(ch) * h + i) * w + j];
  };
  auto in = [&](int i, int j, int r0, int c0) {
    return i >= r0 && i < r0 + s && j >= c0 && j < c0 + s;
  };
  std::vector<double> tmp(static_cast<size_t>(s) * s);
  for (int ch = 0; ch < c; ++ch) {
    const float sign = coin(rng) ? 1.0f : -1.0f;
    const double n1 = std::sqrt(WindowNorm2(*nu, h, w, ch, r1, c1, s));
    double avail2 = unused2 / c;  // the unused budget's share plus W1 u W2's mass
    for (int i = std::min(r1, r2); i < std::max(r1, r2) + s; ++i)
      for (int j = std::min(c1, c2); j < std::max(c1, c2) + s; ++j)
        if (in(i, j, r1, c1) || in(i, j, r2, c2)) avail2 += std::pow(at(ch, i, j), 2);
    double tn = 0;
    for (int i = 0; i < s; ++i)
      for (int j = 0; j < s; ++j) {
        tmp[i * s + j] = sign * eta[i * s + j] + (n1 > 0 ? at(ch, r1 + i, c1 + j) / n1 : 0.0);
        tn += tmp[i * s + j] * tmp[i * s + j];
      }
    for (int i = 0; i < s; ++i)
      for (int j = 0; j < s; ++j) at(ch, r2 + i, c2 + j) = 0;
    const double scale = std::sqrt(avail2 / std::max(tn, 1e-30));
    for (int i = 0; i < s; ++i)
      for (int j = 0; j < s; ++j)
        at(ch, r1 + i, c1 + j) = static_cast<float>(tmp[i * s + j] * scale);
  }
}

}  // namespace

std::vector<float> SquareL2MetaPattern(int s, bool transpose) {
  std::vector<float> p(static_cast<size_t>(s) * s, 0.0f);
  const int top = s / 2;
  if (top > 0) Bump(top, s, 1.0f, 0, s, &p);
  Bump(s - top, s, -1.0f, top, s, &p);
  double n = 0;
  for (float v : p) n += static_cast<double>(v) * v;
  for (auto& v : p) v = static_cast<float>(v / std::sqrt(n));
  if (transpose)
    for (int i = 0; i < s; ++i)
      for (int j = i + 1; j < s; ++j) std::swap(p[i * s + j], p[j * s + i]);
  return p;
}

SquareL2Attack::SquareL2Attack(double p_init, std::string name)
    : p_init_(p_init), name_(std::move(name)) {
  if (!(p_init > 0 && p_init <= 1))
    throw std::invalid_argument("attack '" + name_ + "': p_init must be in (0, 1]");
}

AttackResult SquareL2Attack::Run(oracle::QueryOracle& oracle, bo::Rng& rng,
                                 const AttackProgress& progress) const {
  const double t0 = NowSeconds();
  const std::vector<float>& x0 = oracle.clean();
  const int c = oracle.model().channels(), h = oracle.model().height(), w = oracle.model().width();
  const double eps = oracle.epsilon();
  std::vector<float> nu = InitialPerturbation(c, h, w, eps, rng), best(x0.size());
  for (size_t k = 0; k < x0.size(); ++k) best[k] = x0[k] + nu[k];
  const double best_obj = oracle.Query(best.data(), 1).objective(0);  // projected in place
  const long n_iters = oracle.budget();
  SquareRandomSearch(
      oracle, 1, std::move(best), best_obj,
      [&](long it, const std::vector<float>& incumbent, std::vector<float>* cand) {
        const double p = SquareSchedule(p_init_, it, n_iters);
        const int s = std::clamp(static_cast<int>(std::lround(std::sqrt(p * h * w))), 3,
                                 std::max(1, std::min(h, w) - 1));
        for (size_t k = 0; k < x0.size(); ++k) nu[k] = incumbent[k] - x0[k];
        MoveMass(c, h, w, s, eps, rng, &nu);
        cand->resize(x0.size());
        for (size_t k = 0; k < x0.size(); ++k) (*cand)[k] = x0[k] + nu[k];
      },
      progress);
  AttackResult r;
  FinishResult(oracle, t0, &r);
  return r;
}

}  // namespace advbo::attacks
