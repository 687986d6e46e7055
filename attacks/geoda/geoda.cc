#include "attacks/geoda/geoda.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <stdexcept>
#include <vector>

#include "attacks/common/dct.h"
#include "attacks/common/ray.h"

namespace advbo::attacks {
namespace {

// Queries of one GeoDA instance: adversarial checks along rays and probes around x_B.
class Geometry {
 public:
  explicit Geometry(oracle::QueryOracle& o) : o_(o), probe_(o), x0_(o.clean()), x_(x0_.size()) {}

  bool done() const { return probe_.done(); }

  // Whether x0 + r v is adversarial (one query).
  bool Along(const std::vector<double>& v, double r) { return probe_.Adversarial(v, r); }

  // The smallest adversarial radius along v: checked at `guess`, expanded x1.5 (up to 10
  // times) until adversarial, then bisected to a relative 1e-3 (one grid step at 8 bits).
  double Radius(const std::vector<double>& v, double guess) {
    double hi = guess, lo = 0;
    int grow = 0;
    while (!Along(v, hi)) {
      if (done() || ++grow > 10) return std::numeric_limits<double>::infinity();
      lo = hi;
      hi *= 1.5;
    }
    const double tol = std::max(hi * 1e-3, o_.pixel_space() == oracle::PixelSpace::k8bit
                                               ? 1.0 / 255.0 / std::max(MaxAbs(v), 1e-12)
                                               : 0.0);
    return probe_.Bisect(v, lo, hi, tol);
  }

  // Eq. 9: the normal estimate at boundary point xb from n probes xb + eta, eta Gaussian
  // (standard deviation `sigma`) on the coefficients of `basis`: sum_i z_i eta_i, z_i = +1 for
  // an adversarial probe and -1 otherwise. [d].
  // The normal estimate at xb from n probes xb + eta, eta with i.i.d. N(0, sigma^2)
  // coefficients on the lowest DCT frequencies of each channel (rows_h [mh, height], rows_w
  // [mw, width] from DctRows): sum of sign(adversarial) eta.
  std::vector<double> Normal(const std::vector<double>& xb, long n, int channels,
                             const Eigen::MatrixXd& rows_h, const Eigen::MatrixXd& rows_w,
                             double sigma, bo::Rng& rng) {
    std::normal_distribution<double> g(0.0, sigma);
    const Eigen::Index mh = rows_h.rows(), mw = rows_w.rows();
    std::vector<Eigen::MatrixXd> coef(channels, Eigen::MatrixXd(mh, mw));
    std::vector<double> normal(x0_.size(), 0.0), eta;
    for (long q = 0; q < n && !done(); ++q) {
      for (auto& block : coef)  // row by row: the order of the basis-image sum it replaced
        for (Eigen::Index a = 0; a < mh; ++a)
          for (Eigen::Index b = 0; b < mw; ++b) block(a, b) = g(rng);
      InverseDctLowFrequency(coef, rows_h, rows_w, &eta);
      for (size_t k = 0; k < eta.size(); ++k) x_[k] = static_cast<float>(xb[k] + eta[k]);
      const double sign = o_.Query(x_.data(), 1).adversarial[0] ? 1.0 : -1.0;
      for (size_t k = 0; k < eta.size(); ++k) normal[k] += sign * eta[k];
    }
    return normal;
  }

  // v scaled to unit L2 length (L2) or replaced by its signs (L_inf, the L_p solution for
  // p = inf); a zero vector stays zero.
  static void Normalise(bool l2, std::vector<double>* v) {
    double n2 = 0;
    for (double x : *v) n2 += x * x;
    if (!(n2 > 0)) return;
    for (auto& x : *v) x = l2 ? x / std::sqrt(n2) : static_cast<double>((x > 0) - (x < 0));
  }

  static double MaxAbs(const std::vector<double>& v) {
    double m = 0;
    for (double t : v) m = std::max(m, std::abs(t));
    return m;
  }

 private:
  oracle::QueryOracle& o_;
  RayProbe probe_;
  const std::vector<float>& x0_;
  std::vector<float> x_;
};

}  // namespace

std::vector<long> GeodaAllocation(long total, int iterations, double lambda) {
  std::vector<double> w(iterations);
  double sum = 0;
  for (int t = 0; t < iterations; ++t) sum += w[t] = std::pow(lambda, -2.0 * (t + 1) / 3.0);
  std::vector<long> n(iterations);
  for (int t = 0; t < iterations; ++t)
    n[t] = std::max(1L, static_cast<long>(std::floor(total * w[t] / sum)));
  return n;
}

void GeodaOptions::Validate(const std::string& name) const {
  if (iterations < 1 || iterations > 10000)
    throw std::invalid_argument("attack '" + name + "': iterations must be in [1, 10000]");
  if (!(lambda > 0 && lambda < 1))
    throw std::invalid_argument("attack '" + name + "': lambda must be in (0, 1)");
  if (!(sigma > 0 && sigma <= 1))
    throw std::invalid_argument("attack '" + name + "': sigma must be in (0, 1]");
  if (subspace < 0 || subspace > 4096)
    throw std::invalid_argument("attack '" + name + "': subspace must be in [0, 4096]");
}

GeodaAttack::GeodaAttack(GeodaOptions options, std::string name)
    : LabelAttack(std::move(name), {oracle::Norm::kL2, oracle::Norm::kLinf}), options_(options) {
  options_.Validate(this->name());
}

AttackResult GeodaAttack::Run(oracle::QueryOracle& oracle, bo::Rng& rng,
                              const AttackProgress& progress) const {
  const double t0 = NowSeconds();
  const int c = oracle.model().channels(), h = oracle.model().height(), w = oracle.model().width();
  const std::vector<float>& x0 = oracle.clean();
  const size_t d = x0.size();
  const bool l2 = oracle.norm() == oracle::Norm::kL2;
  const int m =
      options_.subspace > 0 ? std::min({options_.subspace, h, w}) : std::max(1, std::max(h, w) / 3);
  Geometry geo(oracle);
  // Start: uniform noise until adversarial; its direction's boundary radius is x_B.
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<double> v(d);
  double dist = std::numeric_limits<double>::infinity();
  for (int tries = 0; tries < 100 && !geo.done() && !std::isfinite(dist); ++tries) {
    for (size_t k = 0; k < d; ++k) v[k] = u(rng) - x0[k];
    // Unit length in the run's norm, so radii are distances; the noise image is at `far`.
    const double far = l2 ? std::sqrt(std::inner_product(v.begin(), v.end(), v.begin(), 0.0))
                          : Geometry::MaxAbs(v);
    if (!(far > 0)) continue;
    for (auto& x : v) x /= far;
    if (geo.Along(v, far)) dist = geo.Radius(v, far);
  }
  std::vector<double> xb(d);
  for (size_t k = 0; k < d; ++k) xb[k] = x0[k] + dist * v[k];
  // Probes: Gaussian coefficients on the m x m lowest DCT frequencies of each channel.
  const Eigen::MatrixXd rows_h = DctRows(h, std::min(m, h)), rows_w = DctRows(w, std::min(m, w));
  const double per_pixel = oracle.pixel_space() == oracle::PixelSpace::k8bit
                               ? std::max(options_.sigma, 1.0 / 255.0)
                               : options_.sigma;
  // A coefficient of standard deviation s moves a pixel by about s * sqrt(|basis| / d).
  const double basis_size = static_cast<double>(c) * rows_h.rows() * rows_w.rows();
  const double coef_sigma = per_pixel * std::sqrt(static_cast<double>(d) / basis_size);
  const auto alloc = GeodaAllocation(oracle.remaining(), options_.iterations, options_.lambda);
  for (int t = 0; t < options_.iterations && std::isfinite(dist) && !geo.done(); ++t) {
    v = geo.Normal(xb, alloc[t], c, rows_h, rows_w, coef_sigma, rng);
    Geometry::Normalise(l2, &v);
    if (Geometry::MaxAbs(v) == 0) continue;
    const double r = geo.Radius(v, dist);
    if (r < dist) {
      dist = r;
      for (size_t k = 0; k < d; ++k) xb[k] = x0[k] + r * v[k];
    }
    if (progress) progress(oracle.queries(), oracle.best_objective());
  }
  AttackResult res;
  FinishResult(oracle, t0, &res);
  return res;
}

}  // namespace advbo::attacks
