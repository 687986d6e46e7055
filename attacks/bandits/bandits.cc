#include "attacks/bandits/bandits.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <vector>

namespace advbo::attacks {
namespace {

// The latent grid [c, gh, gw] upsampled by repetition to the image [c, h, w].
void Upsample(const std::vector<double>& z, int c, int h, int w, int tile, int gh, int gw,
              std::vector<double>* out) {
  out->resize(static_cast<size_t>(c) * h * w);
  for (int ch = 0; ch < c; ++ch)
    for (int i = 0; i < h; ++i)
      for (int j = 0; j < w; ++j)
        (*out)[(static_cast<size_t>(ch) * h + i) * w + j] =
            z[(static_cast<size_t>(ch) * gh + std::min(i / tile, gh - 1)) * gw +
              std::min(j / tile, gw - 1)];
}

double Norm(const std::vector<double>& v) {
  double n = 0;
  for (double t : v) n += t * t;
  return std::sqrt(n);
}

}  // namespace

void BanditsOptions::Validate(const std::string& name) const {
  auto positive = [&](double v, const char* field) {
    if (!(v > 0 && v <= 1e6))
      throw std::invalid_argument("attack '" + name + "': " + field + " must be in (0, 1e6]");
  };
  positive(exploration, "exploration");
  positive(fd_eta, "fd_eta");
  positive(online_lr, "online_lr");
  if (!(lr_ratio > 0 && lr_ratio <= 1))
    throw std::invalid_argument("attack '" + name + "': lr_ratio must be in (0, 1]");
  if (tile < 0 || tile > 4096)
    throw std::invalid_argument("attack '" + name + "': tile must be in [0, 4096]");
}

BanditsAttack::BanditsAttack(BanditsOptions options, std::string name)
    : options_(options), name_(std::move(name)) {
  options_.Validate(name_);
}

AttackResult BanditsAttack::Run(oracle::QueryOracle& oracle, bo::Rng& rng,
                                const AttackProgress& progress) const {
  const double t0 = NowSeconds();
  const std::vector<float>& x0 = oracle.clean();
  const int c = oracle.model().channels(), h = oracle.model().height(), w = oracle.model().width();
  const int tile = options_.tile > 0 ? options_.tile : std::max(1, std::max(h, w) / 8);
  const int gh = (h + tile - 1) / tile, gw = (w + tile - 1) / tile;
  const size_t m = static_cast<size_t>(c) * gh * gw, d = x0.size();
  const double delta = options_.exploration, eta = options_.online_lr;
  // Under 8-bit queries a probe below half a grid step per pixel rounds away: fd is at least
  // sqrt(d) / 255 there (a typical pixel moves about one step).
  const double fd = oracle.pixel_space() == oracle::PixelSpace::k8bit
                        ? std::max(options_.fd_eta, std::sqrt(static_cast<double>(x0.size())) / 255)
                        : options_.fd_eta;
  const float lr = static_cast<float>(options_.lr_ratio * oracle.query_radius());
  std::normal_distribution<double> g(0.0, 1.0);
  std::vector<double> v(m, 0.0), u(m), q(m), up1, up2;
  std::vector<float> x = x0, batch(2 * d);
  while (oracle.remaining() >= 3 && !oracle.succeeded()) {
    // Exploration noise delta u, u ~ N(0, I / m) (the paper's 1/d scaling on the latent).
    for (auto& t : u) t = delta * g(rng) / std::sqrt(static_cast<double>(m));
    for (size_t k = 0; k < m; ++k) q[k] = v[k] + u[k];
    Upsample(q, c, h, w, tile, gh, gw, &up1);
    for (size_t k = 0; k < m; ++k) q[k] = v[k] - u[k];
    Upsample(q, c, h, w, tile, gh, gw, &up2);
    const double n1 = std::max(Norm(up1), 1e-12), n2 = std::max(Norm(up2), 1e-12);
    for (size_t k = 0; k < d; ++k) {
      batch[k] = x[k] + static_cast<float>(fd * up1[k] / n1);
      batch[d + k] = x[k] + static_cast<float>(fd * up2[k] / n2);
    }
    const Eigen::VectorXd y = oracle.Query(batch.data(), 2).objective;
    const double deriv = std::isfinite(y(0) - y(1)) ? (y(0) - y(1)) / (delta * fd) : 0.0;
    for (size_t k = 0; k < m; ++k) {  // exponentiated gradient on p = (v + 1) / 2
      const double p = std::clamp((v[k] + 1) / 2, 1e-12, 1 - 1e-12);
      const double step = std::clamp(eta * deriv * u[k], -50.0, 50.0);
      const double plus = p * std::exp(step), minus = (1 - p) * std::exp(-step);
      v[k] = 2 * plus / (plus + minus) - 1;
    }
    Upsample(v, c, h, w, tile, gh, gw, &up1);
    for (size_t k = 0; k < d; ++k) x[k] += lr * static_cast<float>((up1[k] > 0) - (up1[k] < 0));
    oracle.Query(x.data(), 1);  // the iterate (projected in place): a success?
    if (progress) progress(oracle.queries(), oracle.best_objective());
  }
  AttackResult r;
  FinishResult(oracle, t0, &r);
  return r;
}

}  // namespace advbo::attacks
