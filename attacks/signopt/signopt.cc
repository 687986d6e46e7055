#include "attacks/signopt/signopt.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

#include "attacks/common/ray.h"

namespace advbo::attacks {
namespace {

using Dir = std::vector<double>;

// g(theta): the distance to the boundary along a direction, by queries to the oracle.
class BoundarySearch {
 public:
  explicit BoundarySearch(oracle::QueryOracle& o)
      : probe_(o), norm_(o.norm()), grid_(o.pixel_space() == oracle::PixelSpace::k8bit) {}

  bool done() const { return probe_.done(); }

  // theta scaled to unit L2 length (the paper's parametrisation, whatever the norm).
  static void Normalise(Dir* t) {
    double n = 0;
    for (double v : *t) n += v * v;
    for (auto& v : *t) v /= std::sqrt(std::max(n, 1e-60));
  }

  // Whether the point at distance r (the oracle's norm) along direction t is adversarial;
  // one query.
  bool Adversarial(const Dir& t, double r) { return probe_.Adversarial(t, r, Length(t)); }

  // g(theta) if below `bound` (binary search on [0, bound]), else +inf.
  double Below(const Dir& t, double bound) {
    const double length = Length(t);
    if (!probe_.Adversarial(t, bound, length)) return std::numeric_limits<double>::infinity();
    const double tol = std::max(bound * 1e-3, grid_ ? 1.0 / 255.0 : 0.0);
    return probe_.Bisect(t, 0, bound, tol, length);
  }

 private:
  // |t| in the oracle's norm (L2 or L_inf), at least 1e-30.
  double Length(const Dir& t) const {
    double n = 0;
    for (double v : t) n = norm_ == oracle::Norm::kL2 ? n + v * v : std::max(n, std::abs(v));
    return std::max(norm_ == oracle::Norm::kL2 ? std::sqrt(n) : n, 1e-30);
  }

  RayProbe probe_;
  oracle::Norm norm_;
  bool grid_;
};

double MaxAbs(const Dir& v) {
  double m = 0;
  for (double x : v) m = std::max(m, std::abs(x));
  return m;
}

// g(theta - step grad) if it is below g (the step's direction left in *t), else +inf.
double TryStep(BoundarySearch* search, const Dir& theta, const Dir& grad, double step, double g,
               Dir* t) {
  for (size_t k = 0; k < theta.size(); ++k) (*t)[k] = theta[k] - step * grad[k];
  BoundarySearch::Normalise(t);
  return search->Below(*t, g);
}

}  // namespace

void SignOptOptions::Validate(const std::string& name) const {
  if (probes < 1 || probes > 100000)
    throw std::invalid_argument("attack '" + name + "': probes must be in [1, 100000]");
  if (!(h > 0 && h <= 10) || !(alpha > 0 && alpha <= 100))
    throw std::invalid_argument("attack '" + name + "': h in (0, 10] and alpha in (0, 100]");
  if (initial_tries < 1 || initial_tries > 100000)
    throw std::invalid_argument("attack '" + name + "': initial_tries must be in [1, 100000]");
}

SignOptAttack::SignOptAttack(SignOptOptions options, std::string name)
    : LabelAttack(std::move(name), {oracle::Norm::kL2, oracle::Norm::kLinf}, true),
      options_(options) {
  options_.Validate(this->name());
}

AttackResult SignOptAttack::Run(oracle::QueryOracle& oracle, bo::Rng& rng,
                                const AttackProgress& progress) const {
  const double t0 = NowSeconds();
  const size_t d = oracle.clean().size();
  const double far = oracle.norm() == oracle::Norm::kL2 ? std::sqrt(static_cast<double>(d)) : 1.0;
  BoundarySearch search(oracle);
  std::normal_distribution<double> gauss(0.0, 1.0);
  Dir theta(d), t(d), u(d), grad(d);
  double g = std::numeric_limits<double>::infinity();
  // Start: the closest boundary of `initial_tries` random directions (the paper's code's
  // num_trial = 100): each is tested at the best distance so far (the box's size before
  // one), so a direction that does not improve costs one query.
  // Targeted (Sec. 4): the direction of the given image of the target class, searched below
  // its distance.
  if (oracle.target() >= 0) {
    const std::vector<float>& xt = TargetStart(oracle);
    for (size_t k = 0; k < d; ++k) t[k] = xt[k] - oracle.clean()[k];
    const double dist = oracle.DistanceToClean(xt.data());
    search.Normalise(&t);
    if (dist > 0) g = search.Below(t, dist), theta = t;
  }
  for (int i = 0; oracle.target() < 0 && i < options_.initial_tries && !search.done(); ++i) {
    for (auto& v : t) v = gauss(rng);
    search.Normalise(&t);
    const double r = search.Below(t, std::isfinite(g) ? g : far);
    if (r < g) g = r, theta = t;
  }
  const bool grid = oracle.pixel_space() == oracle::PixelSpace::k8bit;
  double alpha = options_.alpha, h_scale = 1.0;
  long iterations = 0;
  while (std::isfinite(g) && !search.done()) {
    ++iterations;
    std::fill(grad.begin(), grad.end(), 0.0);
    for (int q = 0; q < options_.probes && !search.done(); ++q) {
      double umax = 0, un = 0;
      for (auto& v : u) v = gauss(rng), un += v * v;
      for (auto& v : u) v /= std::sqrt(un), umax = std::max(umax, std::abs(v));
      const double h =
          grid ? std::max(options_.h * h_scale, 2.0 / (255.0 * g * umax)) : options_.h * h_scale;
      for (size_t k = 0; k < d; ++k) t[k] = theta[k] + h * u[k];
      search.Normalise(&t);
      const double sign = search.Adversarial(t, g) ? -1.0 : 1.0;
      for (size_t k = 0; k < d; ++k) grad[k] += sign * u[k];
    }
    // Line search on alpha (the schedule of the paper's code): double alpha while
    // theta - alpha grad keeps improving g; if the first step does not improve, shrink alpha
    // by 4 until one does. A step size that has fallen below 1e-4 is restarted at 1 with a
    // probe step h ten times smaller.
    bool improved = false;
    for (int tries = 0; tries < 15 && !search.done(); ++tries) {
      const double r = TryStep(&search, theta, grad, alpha / options_.probes, g, &t);
      alpha *= 2;
      if (!(r < g)) break;
      g = r, theta = t, improved = true;
    }
    // 8-bit queries: a step that moves no pixel by half a grid step queries the same image
    // again, so the shrinking stops there (and alpha restarts as below).
    const double grad_max = MaxAbs(grad) / options_.probes;
    bool invisible = false;
    for (int tries = 0; !improved && tries < 15 && !search.done(); ++tries) {
      alpha /= 4;
      if (grid && g * alpha * grad_max < 0.5 / 255.0) {
        invisible = true;
        break;
      }
      const double r = TryStep(&search, theta, grad, alpha / options_.probes, g, &t);
      if (r < g) g = r, theta = t, improved = true;
    }
    if (alpha < 1e-4 || invisible) alpha = 1.0, h_scale *= 0.1;
    if (progress) progress(oracle.queries(), oracle.best_objective());
  }
  AttackResult r;
  FinishResult(oracle, t0, &r);
  r.details["sign_opt_iterations"] = iterations;
  return r;
}

}  // namespace advbo::attacks
