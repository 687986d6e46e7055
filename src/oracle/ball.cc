#include "oracle/ball.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <stdexcept>
#include <utility>

#include "text/numbers.h"

namespace advbo::oracle {

const char* PixelSpaceName(PixelSpace p) { return p == PixelSpace::k8bit ? "8bit" : "float"; }

PixelSpace ParsePixelSpace(const std::string& v, const char* option) {
  if (v == "8bit") return PixelSpace::k8bit;
  if (v == "float") return PixelSpace::kFloat;
  throw std::invalid_argument(std::string(option) + " must be 8bit or float, got '" + v + "'");
}

const char* NormName(Norm n) { return n == Norm::kL2 ? "l2" : "linf"; }

Norm ParseNorm(const std::string& v, const char* option) {
  if (v == "linf") return Norm::kLinf;
  if (v == "l2") return Norm::kL2;
  throw std::invalid_argument(std::string(option) + " must be linf or l2, got '" + v + "'");
}

double Distance(Norm norm, const float* a, const float* b, size_t n) {
  double d = 0;
  for (size_t i = 0; i < n; ++i) {
    const double t = static_cast<double>(a[i]) - static_cast<double>(b[i]);
    d = norm == Norm::kL2 ? d + t * t : std::max(d, std::abs(t));
  }
  return norm == Norm::kL2 ? std::sqrt(d) : d;
}

bool OnPixelGrid(const float* x, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const double v = static_cast<double>(x[i]) * 255.0;
    if (!(std::abs(v - std::round(v)) <= 1e-3) || v < 0 || v > 255.0) return false;
  }
  return true;
}

float GridValue(long k) { return static_cast<float>(k) / 255.0f; }

double GridRadius(double eps) {
  if (!(eps > 0)) return 0.0;
  return std::floor(std::min(eps, 1.0) * 255.0 + 1e-9) / 255.0;
}

std::string DescribeLinfRadius(double eps) {
  const double steps = eps * 255.0;
  const double whole = std::round(steps);
  if (std::abs(steps - whole) < 1e-6)
    return text::FormatG(whole, 6) + "/255 = " + text::FormatG(eps, 4);
  return text::FormatG(eps, 6) + " = " + text::FormatG(steps, 4) + "/255";
}

std::string GridStepLossWarning(double eps) {
  if (!(eps > 0) || eps > 1) return "";
  const double next = std::ceil(eps * 255.0 - 1e-9);  // the grid step just above (or at) eps
  const double gap = next / 255.0 - eps;
  if (gap <= 1e-9 || gap >= 1e-3) return "";
  const double kept = GridRadius(eps);
  return "eps " + text::FormatG(eps, 6) + " is " + text::FormatG(eps * 255.0, 4) +
         "/255, so 8-bit queries enforce " + DescribeLinfRadius(kept) +
         ", one grid step less than " + DescribeLinfRadius(next / 255.0) + "; write --eps " +
         text::FormatG(next, 6) + "/255 if that is the radius you mean";
}

double BallShape::EnforcedRadius() const {
  const bool grid = pixels == PixelSpace::k8bit && norm == Norm::kLinf && !rescaled;
  return grid ? GridRadius(radius) : radius;
}

double BallShape::QueryRadius() const {
  return pixels == PixelSpace::k8bit ? GridRadius(radius) : radius;
}

void BallShape::Check(const char* option) const {
  char value[32];
  std::snprintf(value, sizeof value, "%g", radius);
  if (norm == Norm::kLinf && !(radius > 0 && radius <= 1))  // also refuses NaN
    throw std::invalid_argument(std::string(option) +
                                " must be an L_inf radius in (0, 1] (pixel units), got " + value);
  if (norm == Norm::kL2 && !(radius > 0 && radius <= kMaxL2Radius)) {
    char most[32];
    std::snprintf(most, sizeof most, "%g", kMaxL2Radius);
    throw std::invalid_argument(std::string(option) + " must be an L2 radius in (0, " + most +
                                "] (pixel units), got " + value);
  }
  if (norm == Norm::kL2 && rescaled)
    throw std::invalid_argument("--rescale-compat is an L_inf threat model (--norm linf)");
}

namespace {

// The grid values k (0 <= k <= 255) a pixel may take around clean value c, as [klo, khi];
// klo > khi when there is none. Around an 8-bit clean pixel (c = GridValue(kc)) the ball is
// counted in grid steps: k within GridRadius(eps) * 255 steps of kc, as the saved PNG's bytes
// differ (|k - kc| / 255 <= eps). Testing float32 values in double instead would drop the last
// step on some pixels: float(k / 255) - float(kc / 255) exceeds 8/255 in double by float
// rounding for 36 of the 248 values kc at eps = 8/255. Around an off-grid c: the k with
// |GridValue(k) - c| <= eps, tested in double.
std::pair<long, long> GridRange(double c, double eps) {
  const long kc = std::lround(c * 255.0);
  const long r = std::lround(GridRadius(eps) * 255.0);
  if (kc >= 0 && kc <= 255 && static_cast<float>(c) == GridValue(kc))
    return {std::max(0L, kc - r), std::min(255L, kc + r)};
  auto inside = [&](long k) { return k >= 0 && k <= 255 && std::abs(GridValue(k) - c) <= eps; };
  long klo = std::max(0L, kc - r - 1), khi = std::min(255L, kc + r + 1);
  while (klo <= khi && !inside(klo)) ++klo;
  while (khi >= klo && !inside(khi)) --khi;
  while (klo > 0 && inside(klo - 1)) --klo;
  while (khi < 255 && inside(khi + 1)) ++khi;
  return {klo, khi};
}

// Projects x [d] onto the L2 ball of radius eps around `clean` intersected with [0, 1] (and
// onto the grid with `grid`, `to_grid` mapping pixel i's value to its grid value).
void ProjectL2(float* x, const float* clean, size_t d, double eps, bool grid,
               const std::function<float(double, size_t)>& to_grid) {
  double norm2 = 0;
  for (size_t i = 0; i < d; ++i) {
    const float v = std::isfinite(x[i]) ? std::clamp(x[i], 0.0f, 1.0f) : clean[i];
    x[i] = v;
    const double t = static_cast<double>(v) - clean[i];
    norm2 += t * t;
  }
  // Scale the perturbation onto the ball; float rounding can leave it a hair outside, so
  // shrink until the double-precision check passes. The box holds: scaling moves towards
  // the clean pixel, which is inside it.
  for (int tries = 0; norm2 > eps * eps; ++tries) {
    const double s = eps / std::sqrt(norm2) * (1 - 1e-7 * (1 << std::min(tries, 20)));
    norm2 = 0;
    for (size_t i = 0; i < d; ++i) {
      const double t = (static_cast<double>(x[i]) - clean[i]) * s;
      x[i] = static_cast<float>(clean[i] + t);
      const double u = static_cast<double>(x[i]) - clean[i];
      norm2 += u * u;
    }
  }
  if (!grid) return;
  // Nearest grid value; then the pixels whose rounding lengthened the perturbation most go
  // to the grid value on the clean side (never longer than before rounding) until inside.
  std::vector<std::pair<double, size_t>> longer;
  norm2 = 0;
  for (size_t i = 0; i < d; ++i) {
    const double c = clean[i], before = static_cast<double>(x[i]) - c;
    x[i] = to_grid(x[i], i);
    const double after = static_cast<double>(x[i]) - c;
    if (after * after > before * before) longer.push_back({after * after - before * before, i});
    norm2 += after * after;
  }
  std::sort(longer.begin(), longer.end(), std::greater<>());
  for (const auto& [gain, i] : longer) {
    if (norm2 <= eps * eps) break;
    const double c = clean[i], old = static_cast<double>(x[i]) - c;
    const long kc = std::lround(c * 255.0), k = std::lround(static_cast<double>(x[i]) * 255.0);
    const long towards = k > kc ? k - 1 : k + 1;
    x[i] = towards == kc ? clean[i] : GridValue(towards);
    const double now = static_cast<double>(x[i]) - c;
    norm2 += now * now - old * old;
  }
}

// The clipped L_inf ball: each pixel clamped into its box (grid values in 8-bit mode).
class LinfBall final : public Ball {
 public:
  using Ball::Ball;
  void Project(float* images, int n) const override {
    const size_t d = size();
    const bool grid = shape().pixels == PixelSpace::k8bit;
    for (int b = 0; b < n; ++b) {
      float* x = images + b * d;
      for (size_t i = 0; i < d; ++i) {
        const float v = std::isfinite(x[i]) ? std::clamp(x[i], lower()[i], upper()[i]) : clean()[i];
        // The box's ends are grid values, so the rounding stays inside it.
        x[i] = grid ? ToGrid(v, i) : v;
      }
    }
  }
};

// The clipped L2 ball.
class L2Ball final : public Ball {
 public:
  using Ball::Ball;
  void Project(float* images, int n) const override {
    const size_t d = size();
    const bool grid = shape().pixels == PixelSpace::k8bit;
    for (int b = 0; b < n; ++b)
      ProjectL2(images + b * d, clean().data(), d, shape().radius, grid,
                [this](double v, size_t i) { return ToGrid(v, i); });
  }
};

// BayesOpt's rescaled L_inf ball (BallShape::rescaled): x -> (x0 + clip(x - x0) + eps) /
// (1 + 2 eps), then rounded onto the grid in 8-bit mode (what would be sent).
class RescaledBall final : public Ball {
 public:
  using Ball::Ball;
  void Project(float* images, int n) const override {
    const size_t d = size();
    const float e = static_cast<float>(shape().radius), scale = 1.0f / (1.0f + 2.0f * e);
    const bool grid = shape().pixels == PixelSpace::k8bit;
    for (int b = 0; b < n; ++b) {
      float* x = images + b * d;
      for (size_t i = 0; i < d; ++i) {
        const float c = clean()[i];
        const float delta = std::isfinite(x[i]) ? std::clamp(x[i] - c, -e, e) : 0.0f;
        const float v = std::clamp((c + delta + e) * scale, 0.0f, 1.0f);
        x[i] = grid ? GridValue(std::lround(static_cast<double>(v) * 255.0)) : v;
      }
    }
  }
};

}  // namespace

std::unique_ptr<Ball> Ball::Make(const BallShape& shape, const float* clean, size_t d) {
  if (!(shape.radius >= 0)) throw std::invalid_argument("the ball's radius must be >= 0");
  if (shape.rescaled && shape.norm == Norm::kL2)
    throw std::invalid_argument("the rescale-compat threat model is L_inf only (--norm linf)");
  if (shape.pixels == PixelSpace::k8bit) {
    if (!OnPixelGrid(clean, d))
      throw std::invalid_argument(
          "8-bit queries need a clean image on the 1/255 grid (8-bit data); this image has "
          "other pixel values (use float queries)");
    if (GridRadius(shape.radius) <= 0)
      throw std::invalid_argument("8-bit queries: eps " + std::to_string(shape.radius) +
                                  " is below one 8-bit step (1/255 = 0.00392); no 8-bit image "
                                  "other than the clean one lies in the ball (use float queries)");
  }
  if (shape.rescaled) return std::unique_ptr<Ball>(new RescaledBall(shape, clean, d));
  if (shape.norm == Norm::kL2) return std::unique_ptr<Ball>(new L2Ball(shape, clean, d));
  return std::unique_ptr<Ball>(new LinfBall(shape, clean, d));
}

Ball::Ball(const BallShape& shape, const float* clean, size_t d)
    : shape_(shape),
      clean_(clean, clean + d),
      lo_(d),
      hi_(d),
      grid_(shape.pixels == PixelSpace::k8bit) {
  const double eps = shape.radius;
  for (size_t i = 0; i < d; ++i) {
    if (grid_) {
      // The lowest and highest grid values inside the ball (GridRange); the clean pixel's own
      // grid value is the clean float.
      const long kc = std::lround(static_cast<double>(clean_[i]) * 255.0);
      const auto [klo, khi] = GridRange(clean_[i], eps);
      lo_[i] = klo >= kc ? clean_[i] : GridValue(klo);
      hi_[i] = khi <= kc ? clean_[i] : GridValue(khi);
      continue;
    }
    // float(clean +- eps) rounded inwards so the clipped query never exceeds eps.
    float lo = static_cast<float>(clean_[i] - eps), hi = static_cast<float>(clean_[i] + eps);
    if (static_cast<double>(lo) < clean_[i] - eps) lo = std::nextafter(lo, 1.0f);
    if (static_cast<double>(hi) > clean_[i] + eps) hi = std::nextafter(hi, 0.0f);
    lo_[i] = std::max(0.0f, lo);
    hi_[i] = std::min(1.0f, hi);
  }
}

float Ball::ToGrid(double v, size_t i) const {
  const long k = std::lround(v * 255.0);
  return k == std::lround(static_cast<double>(clean_[i]) * 255.0) ? clean_[i] : GridValue(k);
}

void Ball::ProjectToBox(float* images, int n) const {
  const size_t d = size();
  for (int b = 0; b < n; ++b) {
    float* x = images + b * d;
    for (size_t i = 0; i < d; ++i) {
      const float v = std::isfinite(x[i]) ? std::clamp(x[i], 0.0f, 1.0f) : clean_[i];
      x[i] = grid_ ? ToGrid(v, i) : v;
    }
  }
}

std::vector<float> Ball::Quantize(const std::vector<float>& image) const {
  if (image.size() != clean_.size())
    throw std::invalid_argument("Ball::Quantize: image and clean image differ in length");
  std::vector<float> out = image;
  const size_t d = out.size();
  if (shape_.norm == Norm::kL2) {
    ProjectL2(out.data(), clean_.data(), d, shape_.radius, true,
              [this](double v, size_t i) { return ToGrid(v, i); });
    return out;
  }
  for (size_t i = 0; i < d; ++i) {
    const auto [klo, khi] = GridRange(clean_[i], shape_.radius);
    if (klo > khi) {  // no grid value within eps of an off-grid clean pixel
      out[i] = clean_[i];
      continue;
    }
    const double v = std::clamp(static_cast<double>(image[i]), 0.0, 1.0);
    out[i] = GridValue(std::clamp(std::lround(v * 255.0), klo, khi));
  }
  return out;
}

bool Ball::Contains(const float* image) const {
  const size_t d = size();
  for (size_t i = 0; i < d; ++i)
    if (!std::isfinite(image[i]) || image[i] < 0.0f || image[i] > 1.0f) return false;
  if (grid_) {
    for (size_t i = 0; i < d; ++i)
      if (image[i] != clean_[i] && !OnPixelGrid(image + i, 1)) return false;
    // L_inf on the grid: within the box, counted in grid steps (GridRange).
    if (shape_.norm == Norm::kLinf && !shape_.rescaled) {
      for (size_t i = 0; i < d; ++i)
        if (image[i] < lo_[i] || image[i] > hi_[i]) return false;
      return true;
    }
  }
  if (shape_.rescaled) {
    const double e = shape_.radius;
    return oracle::Distance(Norm::kLinf, image, clean_.data(), d) <= 2 * e / (1 + 2 * e) + 1e-6;
  }
  return Distance(image) <= shape_.radius;
}

double Ball::Distance(const float* image) const {
  return oracle::Distance(shape_.norm, image, clean_.data(), clean_.size());
}

}  // namespace advbo::oracle
