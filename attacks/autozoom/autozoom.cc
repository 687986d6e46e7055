#include "attacks/autozoom/autozoom.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "attacks/common/cw_loss.h"
#include "attacks/common/latent.h"

namespace advbo::attacks {

void AutoZoomOptions::Validate() const {
  if (latent_side < 1 || directions < 1)
    throw std::invalid_argument("AutoZOOM: latent_side and directions (q) must be >= 1");
  if (!(learning_rate > 0) || !(c > 0) || !(kappa >= 0) || !std::isfinite(learning_rate) ||
      !std::isfinite(c) || !std::isfinite(kappa))
    throw std::invalid_argument("AutoZOOM: learning_rate and c must be > 0, kappa >= 0");
}

AttackResult AutoZoomAttack::Run(oracle::QueryOracle& oracle, bo::Rng& rng,
                                 const AttackProgress& progress) const {
  const AutoZoomOptions& o = options_;
  o.Validate();
  const int c = oracle.model().channels(), h = oracle.model().height(), w = oracle.model().width();
  const int s = std::min({o.latent_side, h, w});
  if (s < 1 || o.directions < 1) throw std::invalid_argument("AutoZOOM: bad latent side or q");
  const double t0 = NowSeconds();
  const std::vector<float>& x0 = oracle.clean();
  const size_t d = x0.size();
  const int dz = s * s * c;
  const double eps = oracle.query_radius();
  // Smoothing step beta = 1/dz (Tu et al. 2019); with 8-bit queries at least one grid step
  // (1/255 in pixels), else the probes round back onto the base image and estimate nothing.
  const double beta = oracle.pixel_space() == oracle::PixelSpace::k8bit
                          ? std::max(1.0 / dz, (1.0 / 255.0) / eps)
                          : 1.0 / dz,
               b = dz;
  const int q = o.directions;
  // Latent u in [-1, 1]^dz; perturbation = eps * upsample(u).
  Eigen::VectorXd u = Eigen::VectorXd::Zero(dz), m = u, v = u;
  std::normal_distribution<double> n01(0.0, 1.0);
  auto image = [&](const Eigen::VectorXd& z, float* out) {
    const std::vector<float> up = UpsampleLatent(z * eps, c, s, h, w);
    for (size_t k = 0; k < d; ++k) out[k] = x0[k] + up[k];
  };
  std::vector<float> batch;
  int t = 0;
  while (oracle.remaining() >= 2 && !oracle.succeeded()) {
    const int nq = static_cast<int>(std::min<long>(q, oracle.remaining() - 1));
    std::vector<Eigen::VectorXd> dirs(nq);
    batch.resize((nq + 1) * d);
    image(u, batch.data());
    for (int j = 0; j < nq; ++j) {
      dirs[j] = Eigen::VectorXd::NullaryExpr(dz, [&]() { return n01(rng); });
      dirs[j].normalize();
      image(u + beta * dirs[j], batch.data() + (j + 1) * d);
    }
    const oracle::QueryResult qr = oracle.Query(batch.data(), nq + 1);
    const Eigen::VectorXd f = CwLoss(qr.log_probs, oracle.true_class(), oracle.target(), o.kappa);
    auto total = [&](int row) {  // c f + ||x - x0||^2 on the clipped evaluated image
      double l2 = 0;
      for (size_t k = 0; k < d; ++k) {
        const double diff = batch[row * d + k] - x0[k];
        l2 += diff * diff;
      }
      return o.c * f(row) + l2;
    };
    const double base = total(0);
    Eigen::VectorXd g = Eigen::VectorXd::Zero(dz);
    for (int j = 0; j < nq; ++j) g += (total(j + 1) - base) / beta * dirs[j];
    g *= b / nq;
    ++t;
    m = 0.9 * m + 0.1 * g;
    v = 0.999 * v + 0.001 * g.cwiseAbs2();
    const Eigen::VectorXd mh = m / (1 - std::pow(0.9, t)), vh = v / (1 - std::pow(0.999, t));
    u = (u.array() - o.learning_rate * mh.array() / (vh.array().sqrt() + 1e-8))
            .cwiseMax(-1.0)
            .cwiseMin(1.0)
            .matrix();
    if (progress) progress(oracle.queries(), oracle.best_objective());
  }
  AttackResult r;
  FinishResult(oracle, t0, &r);
  return r;
}

}  // namespace advbo::attacks
