#include "attacks/hsja/hsja.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "attacks/tangent/tangent_point.h"

namespace advbo::attacks {
namespace {

using Image = std::vector<float>;

// One instance: the oracle, the clean image and the threat model's geometry.
class Walker {
 public:
  Walker(oracle::QueryOracle& oracle, const HsjaOptions& options, bo::Rng& rng)
      : o_(oracle),
        x0_(oracle.clean()),
        d_(x0_.size()),
        l2_(oracle.norm() == oracle::Norm::kL2),
        grid_(oracle.pixel_space() == oracle::PixelSpace::k8bit),
        theta_(l2_ ? options.gamma / std::pow(static_cast<double>(d_), 1.5)
                   : options.gamma / (static_cast<double>(d_) * d_)),
        rng_(rng) {}

  bool done() const { return o_.remaining() <= 0 || o_.succeeded(); }
  double Dist(const Image& x) const { return o_.DistanceToClean(x.data()); }

  // Queries x (projected in place by the oracle); whether its label is adversarial.
  bool Adversarial(Image* x) {
    if (o_.remaining() <= 0) return false;
    return o_.Query(x->data(), 1).adversarial[0];
  }

  // The point between x0 and x at a: the blend (1 - a) x0 + a x (L2, a in [0, 1]) or the
  // clip of x to the L_inf ball of radius a around x0.
  Image Between(const Image& x, double a) const {
    Image y(d_);
    for (size_t k = 0; k < d_; ++k)
      y[k] = l2_ ? static_cast<float>((1 - a) * x0_[k] + a * x[k])
                 : std::clamp(x[k], static_cast<float>(x0_[k] - a), static_cast<float>(x0_[k] + a));
    return y;
  }

  // Algorithm 1: the boundary point on the adversarial side between x0 and adversarial x.
  Image BinarySearch(const Image& x) {
    const double linf = oracle::Distance(oracle::Norm::kLinf, x.data(), x0_.data(), d_);
    double lo = 0, hi = l2_ ? 1.0 : linf;
    double threshold = l2_ ? theta_ : std::min(linf * theta_, theta_);
    if (grid_)  // stop once the two ends differ by about one grid step
      threshold = std::max(threshold, l2_ ? 1.0 / (255.0 * std::max(linf, 1e-12)) : 1.0 / 255.0);
    Image best = x;
    while (hi - lo > threshold && !done()) {
      const double mid = (lo + hi) / 2;
      Image y = Between(x, mid);
      if (Adversarial(&y)) {
        hi = mid;
        best = std::move(y);
      } else {
        lo = mid;
      }
    }
    return best;
  }

  // A start: uniform noise until adversarial (untargeted), or the given image of the target
  // class (targeted, Sec. 4: "initialized with a sample of the target class"), then the
  // blend's binary search towards x0 (to 1e-3).
  bool Start(int tries, const std::vector<float>* target_start, Image* x) {
    std::uniform_real_distribution<float> u(0.0f, 1.0f);
    if (target_start) tries = 1;
    for (int t = 0; t < tries && !done(); ++t) {
      if (target_start)
        *x = *target_start;
      else
        for (auto& v : *x) v = u(rng_);
      if (!Adversarial(x)) continue;
      double lo = 0, hi = 1;
      Image best = *x;
      while (hi - lo > 1e-3 && !done()) {
        const double mid = (lo + hi) / 2;
        Image y(d_);
        for (size_t k = 0; k < d_; ++k)
          y[k] = static_cast<float>((1 - mid) * x0_[k] + mid * (*x)[k]);
        (Adversarial(&y) ? hi : lo) = mid;
        if (hi == mid) best = std::move(y);
      }
      *x = std::move(best);
      return true;
    }
    return false;
  }

  // Eqs. 9-10: the direction towards the adversarial side at boundary point xb, from
  // `probes` random unit directions at radius delta (cut to the remaining budget).
  Image Direction(const Image& xb, double delta, int probes) {
    probes = static_cast<int>(std::min<long>(probes, o_.remaining()));
    Image batch(static_cast<size_t>(probes) * d_);
    std::normal_distribution<float> g(0.0f, 1.0f);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    for (int b = 0; b < probes; ++b) {
      float* p = batch.data() + b * d_;
      double norm = 0;
      for (size_t k = 0; k < d_; ++k) {
        p[k] = l2_ ? g(rng_) : u(rng_);
        norm += static_cast<double>(p[k]) * p[k];
      }
      const double s = delta / std::sqrt(std::max(norm, 1e-30));
      for (size_t k = 0; k < d_; ++k) p[k] = static_cast<float>(xb[k] + s * p[k]);
    }
    const std::vector<bool> adv = o_.Query(batch.data(), probes).adversarial;
    double mean = 0;
    for (bool a : adv) mean += a ? 1.0 : -1.0;
    mean /= probes;
    std::vector<double> grad(d_, 0.0);
    for (int b = 0; b < probes; ++b) {
      // The probe as evaluated (clipped, rounded): its actual direction.
      const double phi = std::abs(mean) == 1.0 ? mean : (adv[b] ? 1.0 : -1.0) - mean;
      const float* p = batch.data() + b * d_;
      for (size_t k = 0; k < d_; ++k) grad[k] += phi * (p[k] - xb[k]) / delta;
    }
    double norm = 0;
    for (double v : grad) norm += v * v;
    norm = std::sqrt(norm);
    Image v(d_);
    for (size_t k = 0; k < d_; ++k)
      v[k] = l2_ ? static_cast<float>(grad[k] / std::max(norm, 1e-30))
                 : static_cast<float>((grad[k] > 0) - (grad[k] < 0));
    return v;
  }

  // Sec. 4.3: the step xi = dist / sqrt(t), halved until xb + xi v is adversarial; that
  // point (projected by the oracle), or xb when the step vanished or the budget ran out.
  // TA / G-TA (Ma et al., NeurIPS 2021, Alg. 1): the same radius schedule, but the query is
  // the tangent point of the hemisphere / semi-ellipsoid of that radius around xb.
  Image Step(const Image& xb, const Image& v, double dist, int t, HsjaStep step, double ratio) {
    const std::vector<double> normal(v.begin(), v.end());
    for (double xi = dist / std::sqrt(static_cast<double>(t)); xi > 1e-10 && !done(); xi /= 2) {
      Image y(d_);
      if (step == HsjaStep::kGeometric) {
        for (size_t k = 0; k < d_; ++k) y[k] = xb[k] + static_cast<float>(xi) * v[k];
      } else {
        const double across = step == HsjaStep::kTangentHemisphere ? xi : xi / ratio;
        const std::vector<double> k = TangentPoint(x0_, xb, normal, xi, across);
        for (size_t i = 0; i < d_; ++i) y[i] = static_cast<float>(k[i]);
      }
      if (Adversarial(&y)) return y;
    }
    return xb;
  }

  double theta() const { return theta_; }
  size_t dim() const { return d_; }
  bool l2() const { return l2_; }
  bool grid() const { return grid_; }

 private:
  oracle::QueryOracle& o_;
  const Image& x0_;
  size_t d_;
  bool l2_, grid_;
  double theta_;
  bo::Rng& rng_;
};

}  // namespace

void HsjaOptions::Validate(const std::string& name) const {
  if (initial_probes < 1 || initial_probes > 100000)
    throw std::invalid_argument("attack '" + name + "': initial_probes must be in [1, 100000]");
  if (max_probes < initial_probes || max_probes > 1000000)
    throw std::invalid_argument("attack '" + name +
                                "': max_probes must be in [initial_probes, 1000000]");
  if (!(gamma > 0 && gamma <= 1e6))
    throw std::invalid_argument("attack '" + name + "': gamma must be in (0, 1e6]");
  if (initial_noise_tries < 1 || initial_noise_tries > 100000)
    throw std::invalid_argument("attack '" + name +
                                "': initial_noise_tries must be in [1, 100000]");
  if (!(radius_ratio >= 1 && radius_ratio <= 100))
    throw std::invalid_argument("attack '" + name + "': radius_ratio must be in [1, 100]");
}

HsjaAttack::HsjaAttack(HsjaOptions options, std::string name)
    : LabelAttack(std::move(name),
                  options.step == HsjaStep::kGeometric
                      ? std::vector<oracle::Norm>{oracle::Norm::kL2, oracle::Norm::kLinf}
                      : std::vector<oracle::Norm>{oracle::Norm::kL2},
                  true),
      options_(options) {
  options_.Validate(this->name());
}

int HsjaIterate(oracle::QueryOracle& oracle, const HsjaOptions& options, std::vector<float> x,
                bo::Rng& rng, const AttackProgress& progress) {
  Walker w(oracle, options, rng);
  if (x.size() != w.dim())
    throw std::invalid_argument("HsjaIterate: the start image has " + std::to_string(x.size()) +
                                " values, the model's input " + std::to_string(w.dim()));
  x = w.BinarySearch(x);
  double dist = w.Dist(x);
  const double d = static_cast<double>(w.dim());
  int t = 0;
  for (t = 1; !w.done(); ++t) {
    double delta = t == 1 ? 0.1 : (w.l2() ? std::sqrt(d) : d) * w.theta() * dist;
    if (w.grid()) delta = std::max(delta, std::sqrt(d) / 255.0);
    const int probes = static_cast<int>(
        std::min<double>(options.max_probes, options.initial_probes * std::sqrt(t)));
    const Image v = w.Direction(x, delta, probes);
    if (w.done()) break;
    const Image y = w.Step(x, v, dist, t, options.step, options.radius_ratio);
    if (w.done()) break;
    x = w.BinarySearch(y);
    dist = w.Dist(x);
    if (progress) progress(oracle.queries(), oracle.best_objective());
  }
  return t;
}

AttackResult HsjaAttack::Run(oracle::QueryOracle& oracle, bo::Rng& rng,
                             const AttackProgress& progress) const {
  return RunFromStart(
      oracle, "hsja",
      [&](Image* x) {
        Walker w(oracle, options_, rng);
        return w.Start(options_.initial_noise_tries,
                       oracle.target() >= 0 ? &TargetStart(oracle) : nullptr, x);
      },
      [&](Image x) { return HsjaIterate(oracle, options_, std::move(x), rng, progress); });
}

}  // namespace advbo::attacks
