#include "attacks/cgba/cgba.h"

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "attacks/common/dct.h"

namespace advbo::attacks {
namespace {

using Image = std::vector<float>;

double L2(const Image& a, const Image& b) {
  double s = 0;
  for (size_t k = 0; k < a.size(); ++k) {
    const double e = static_cast<double>(a[k]) - b[k];
    s += e * e;
  }
  return std::sqrt(s);
}

// Queries of one CGBA instance: boundary searches and the normal's probes.
class Searcher {
 public:
  Searcher(oracle::QueryOracle& o, const CgbaOptions& options)
      : o_(o),
        opt_(options),
        x0_(o.clean()),
        d_(x0_.size()),
        tol_(o.pixel_space() == oracle::PixelSpace::k8bit ? std::max(options.tolerance, 1 / 255.0)
                                                          : options.tolerance) {}

  bool done() const { return o_.remaining() <= 0 || o_.succeeded(); }

  // Queries x (projected in place by the oracle); whether it is adversarial.
  bool Adversarial(Image* x) {
    if (o_.remaining() <= 0) return false;
    return o_.Query(x->data(), 1).adversarial[0];
  }

  // Binary search on the line from x0 to adversarial x: the point on the adversarial side once
  // the two ends are within the tolerance (L2).
  Image LineSearch(const Image& x) {
    const double len = L2(x, x0_);
    double lo = 0, hi = 1;  // positions on the line x0 + a (x - x0)
    Image best = x;
    for (int calls = 0; (hi - lo) * len > tol_ && calls < 100 && !done(); ++calls) {
      const double mid = (lo + hi) / 2;
      Image y(d_);
      for (size_t k = 0; k < d_; ++k) y[k] = static_cast<float>((1 - mid) * x0_[k] + mid * x[k]);
      if (Adversarial(&y)) {
        hi = mid;
        best = std::move(y);
      } else {
        lo = mid;
      }
    }
    return best;
  }

  // The start (module comment): the target image, or Gaussian noise of growing scale (the
  // line search to the boundary follows in CgbaIterate). False when nothing adversarial was
  // found.
  bool Start(const Image* target, bo::Rng& rng, Image* xb) {
    Image x(d_);
    bool adversarial = false;
    if (target) {
      x = *target;
      adversarial = Adversarial(&x);
    } else {
      std::normal_distribution<double> g(0.0, 1.0);
      for (int k = 1; k <= 100 && !adversarial && !done(); ++k) {
        for (size_t i = 0; i < d_; ++i) x[i] = static_cast<float>(x0_[i] + 0.02 * k * g(rng));
        adversarial = Adversarial(&x);
      }
    }
    if (!adversarial) return false;
    *xb = std::move(x);
    return true;
  }

  // The normal estimate at xb from n probes xb + eta (one batch), eta with i.i.d. N(0, sigma^2)
  // coefficients on the lowest DCT frequencies of each channel: sum of sign(adversarial) eta.
  std::vector<double> Normal(const Image& xb, long n, int channels, const Eigen::MatrixXd& rows_h,
                             const Eigen::MatrixXd& rows_w, double sigma, bo::Rng& rng) {
    n = std::min<long>(n, o_.remaining());
    std::vector<double> normal(d_, 0.0);
    if (n <= 0) return normal;
    std::normal_distribution<double> g(0.0, sigma);
    std::vector<Eigen::MatrixXd> coef(channels, Eigen::MatrixXd(rows_h.rows(), rows_w.rows()));
    std::vector<std::vector<double>> etas(n);
    Image batch(static_cast<size_t>(n) * d_);
    for (long q = 0; q < n; ++q) {
      for (auto& block : coef)
        for (Eigen::Index a = 0; a < block.rows(); ++a)
          for (Eigen::Index b = 0; b < block.cols(); ++b) block(a, b) = g(rng);
      InverseDctLowFrequency(coef, rows_h, rows_w, &etas[q]);
      for (size_t k = 0; k < d_; ++k) batch[q * d_ + k] = static_cast<float>(xb[k] + etas[q][k]);
    }
    const std::vector<bool> adv = o_.Query(batch.data(), static_cast<int>(n)).adversarial;
    for (long q = 0; q < n; ++q) {
      const double sign = adv[q] ? 1.0 : -1.0;
      for (size_t k = 0; k < d_; ++k) normal[k] += sign * etas[q][k];
    }
    return normal;
  }

  // CGBA's step: the angle sweep omega_k = (pi/2)(1 - 2^-k) until a clean point, then the
  // bisection of the angle; the last adversarial point (xb when nothing moved).
  Image SemicircleStep(const Image& xb, const std::vector<double>& normal) {
    const Semicircle circle(x0_, xb, normal);
    if (!circle.valid()) return xb;
    Image adv = xb, clean, p;
    double lo = 0, hi = -1;
    for (int k = 1; k <= opt_.max_search && !done(); ++k) {
      const double omega = M_PI / 2 * (1 - std::pow(2.0, -k));
      circle.Point(omega, &p);
      if (Adversarial(&p)) {
        lo = omega;
        adv = p;
      } else {
        hi = omega;
        clean = p;
        break;
      }
    }
    if (hi < 0) return adv;
    for (int calls = 0; calls < 100 && !done() && L2(adv, clean) > tol_; ++calls) {
      const double mid = (lo + hi) / 2;
      circle.Point(mid, &p);
      if (Adversarial(&p)) {
        lo = mid;
        adv = p;
      } else {
        hi = mid;
        clean = p;
      }
    }
    return adv;
  }

  // CGBA-H's step: omega_k = theta / 2^k until P(omega_k) is adversarial, then the line
  // search from x0 to it (xb when none was).
  Image HighCurvatureStep(const Image& xb, const std::vector<double>& normal) {
    const double theta = SemicircleAngle(x0_, xb, normal);
    const Semicircle circle(x0_, xb, normal);
    if (!(theta > 0) || !circle.valid()) return xb;
    Image p;
    for (int k = 1; k <= opt_.max_search && !done(); ++k) {
      circle.Point(theta / std::pow(2.0, k), &p);
      if (Adversarial(&p)) return LineSearch(p);
    }
    return xb;
  }

 private:
  oracle::QueryOracle& o_;
  const CgbaOptions& opt_;
  const Image& x0_;
  size_t d_;
  double tol_;
};

}  // namespace

Semicircle::Semicircle(const std::vector<float>& x0, const std::vector<float>& xb,
                       const std::vector<double>& normal)
    : x0_(x0) {
  const size_t d = x0.size();
  if (xb.size() != d || normal.size() != d)
    throw std::invalid_argument("Semicircle: x0, x_b and the normal differ in size (" +
                                std::to_string(d) + ", " + std::to_string(xb.size()) + ", " +
                                std::to_string(normal.size()) + ")");
  v_.resize(d);
  double nn = 0;
  for (size_t k = 0; k < d; ++k) {
    v_[k] = static_cast<double>(xb[k]) - x0[k];
    r_ += v_[k] * v_[k];
    nn += normal[k] * normal[k];
  }
  r_ = std::sqrt(r_);
  if (!(r_ > 0) || !(nn > 0)) return;
  double nv = 0;
  for (size_t k = 0; k < d; ++k) nv += normal[k] * (v_[k] /= r_);
  w_.resize(d);
  double wn = 0;
  for (size_t k = 0; k < d; ++k) {
    w_[k] = normal[k] - nv * v_[k];
    wn += w_[k] * w_[k];
  }
  wn = std::sqrt(wn);
  if (!(wn > 1e-6 * std::sqrt(nn))) return;
  for (double& e : w_) e /= wn;
  valid_ = true;
}

void Semicircle::Point(double omega, std::vector<float>* out) const {
  const double c = std::cos(omega), s = std::sin(omega);
  out->resize(x0_.size());
  for (size_t k = 0; k < x0_.size(); ++k)
    (*out)[k] = static_cast<float>(x0_[k] + r_ * c * (c * v_[k] + s * w_[k]));
}

bool SemicirclePoint(const std::vector<float>& x0, const std::vector<float>& xb,
                     const std::vector<double>& normal, double omega, std::vector<float>* out) {
  const Semicircle circle(x0, xb, normal);
  if (!circle.valid()) return false;
  circle.Point(omega, out);
  return true;
}

double SemicircleAngle(const std::vector<float>& x0, const std::vector<float>& xb,
                       const std::vector<double>& normal) {
  double dot = 0, r = 0, nn = 0;
  for (size_t k = 0; k < x0.size() && k < xb.size() && k < normal.size(); ++k) {
    const double e = static_cast<double>(xb[k]) - x0[k];
    dot += e * normal[k];
    r += e * e;
    nn += normal[k] * normal[k];
  }
  if (!(r > 0) || !(nn > 0)) return std::nan("");
  return std::acos(std::clamp(dot / std::sqrt(r * nn), -1.0, 1.0));
}

void CgbaOptions::Validate(const std::string& name) const {
  if (initial_probes < 1 || initial_probes > 100000)
    throw std::invalid_argument("attack '" + name + "': initial_probes must be in [1, 100000]");
  if (!(dim_reduction >= 1 && dim_reduction <= 64))
    throw std::invalid_argument("attack '" + name + "': dim_reduction must be in [1, 64]");
  if (!(sigma > 0 && sigma <= 1))
    throw std::invalid_argument("attack '" + name + "': sigma must be in (0, 1]");
  if (!(tolerance > 0 && tolerance <= 1))
    throw std::invalid_argument("attack '" + name + "': tolerance must be in (0, 1]");
  if (max_search < 1 || max_search > 1000)
    throw std::invalid_argument("attack '" + name + "': max_search must be in [1, 1000]");
}

CgbaAttack::CgbaAttack(CgbaOptions options, std::string name)
    : LabelAttack(std::move(name), {oracle::Norm::kL2}, true), options_(options) {
  options_.Validate(this->name());
}

int CgbaIterate(oracle::QueryOracle& oracle, const CgbaOptions& options, std::vector<float> x,
                bo::Rng& rng, const AttackProgress& progress, long patience,
                std::vector<float>* boundary) {
  const int c = oracle.model().channels(), h = oracle.model().height(), w = oracle.model().width();
  const size_t d = oracle.clean().size();
  if (x.size() != d)
    throw std::invalid_argument("CgbaIterate: the start image has " + std::to_string(x.size()) +
                                " values, the model's input " + std::to_string(d));
  const auto side = [&](int n) {
    return std::clamp(static_cast<int>(std::lround(n / options.dim_reduction)), std::min(n, 4), n);
  };
  const Eigen::MatrixXd rows_h = DctRows(h, side(h)), rows_w = DctRows(w, side(w));
  // A coefficient of standard deviation s moves a pixel by about s * sqrt(|basis| / d); 8-bit
  // queries need about one grid step per pixel.
  const double basis = static_cast<double>(c) * rows_h.rows() * rows_w.rows();
  const double sigma =
      oracle.pixel_space() == oracle::PixelSpace::k8bit
          ? std::max(options.sigma, 1 / 255.0 * std::sqrt(static_cast<double>(d) / basis))
          : options.sigma;
  Searcher s(oracle, options);
  Image xb = s.LineSearch(x);
  int iterations = 0;
  std::vector<std::pair<long, double>> history{
      {oracle.queries(), oracle.DistanceToClean(xb.data())}};
  for (int t = 1; !s.done(); ++t) {
    const long n = static_cast<long>(options.initial_probes * std::sqrt(static_cast<double>(t)));
    const std::vector<double> normal = s.Normal(xb, n, c, rows_h, rows_w, sigma, rng);
    if (s.done()) break;
    Image y =
        options.high_curvature ? s.HighCurvatureStep(xb, normal) : s.SemicircleStep(xb, normal);
    if (oracle.DistanceToClean(y.data()) <= oracle.DistanceToClean(xb.data())) xb = std::move(y);
    iterations = t;
    if (progress) progress(oracle.queries(), oracle.best_objective());
    if (patience > 0) {  // the distance `patience` queries ago, against now
      const long now = oracle.queries();
      const double dist = oracle.DistanceToClean(xb.data());
      history.emplace_back(now, dist);
      double then = -1;
      for (const auto& [q, dq] : history)
        if (q <= now - patience) then = dq;
      if (then > 0 && dist > 0.99 * then) break;
    }
  }
  if (boundary) *boundary = std::move(xb);
  return iterations;
}

AttackResult CgbaAttack::Run(oracle::QueryOracle& oracle, bo::Rng& rng,
                             const AttackProgress& progress) const {
  return RunFromStart(
      oracle, "cgba",
      [&](Image* x) {
        Searcher s(oracle, options_);
        return s.Start(oracle.target() >= 0 ? &TargetStart(oracle) : nullptr, rng, x);
      },
      [&](Image x) { return CgbaIterate(oracle, options_, std::move(x), rng, progress); });
}

}  // namespace advbo::attacks
