// The eps-ball of a threat model (docs/design.md, "The eps-ball"): its norm, its radius as
// given and as enforced, the query space (the 8-bit grid or floats) and the pixel box [0, 1].
// A BallShape is what a threat model resolves to, once, where the options enter; a Ball is that
// shape around one clean image, built once per attack instance. The Referee projects every query
// with it, the runner rounds the saved image with it (Quantize) and the white-box reference takes
// its box from it, so the set of images an attack may send is written in one place.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace advbo::oracle {

/// The space queries live in (docs/design.md, "8-bit queries").
///   kFloat: any float32 pixel in the eps-ball intersected with [0, 1] (the papers' setting).
///   k8bit:  only multiples of 1/255 (what a PNG, JPEG or upload form can carry): every query
///           is rounded onto the 1/255 grid inside the ball before the model sees it, so the
///           query that succeeds is exactly the image a user saves. Needs a clean image whose
///           pixels are themselves on the grid (8-bit data).
enum class PixelSpace { kFloat, k8bit };

/// "float" | "8bit".
const char* PixelSpaceName(PixelSpace p);
/// Parses "float" | "8bit"; throws std::invalid_argument naming `option` and the value.
PixelSpace ParsePixelSpace(const std::string& value, const char* option = "--pixels");

/// True when each of the n pixels (in [0, 1]) is k/255 for an integer k (within 1e-3 of a
/// grid step, so values written as k/255.0f or read from 8-bit files all qualify).
bool OnPixelGrid(const float* pixels, size_t n);

/// The grid value k/255 as 8-bit data are read (byte / 255.0f), k in 0..255.
float GridValue(long k);

/// The largest multiple of 1/255 that is <= eps (pixel units): the largest perturbation an
/// 8-bit query can make per pixel around an 8-bit clean pixel, e.g. 76/255 at eps = 0.3 and
/// 12/255 at eps = 0.05. eps >= 0; 0 when eps < 1/255.
double GridRadius(double eps);

/// A radius in 1/255 steps and as a decimal, e.g. "8/255 = 0.03137" (on the grid) or
/// "0.3 = 76.5/255" (off it); for banners and tables.
std::string DescribeLinfRadius(double eps);

/// The warning for an L_inf radius that lies less than 1e-3 below a multiple k/255 (by more
/// than rounding), so that 8-bit queries lose that grid step: eps 0.031 (= 7.905/255)
/// enforces 7/255, not the 8/255 its writer most likely meant. The text names the radius
/// enforced and suggests the fraction (--eps 8/255). "" when no step is lost that way.
/// eps in pixel units, >= 0.
std::string GridStepLossWarning(double eps);

/// The norm of the threat model's eps-ball (docs/design.md, "Threat models").
///   kLinf: max_i |x_i - x0_i| <= eps (the papers' setting; the default).
///   kL2:   sqrt(sum_i (x_i - x0_i)^2) <= eps, pixels in [0, 1] (eps in the same units).
enum class Norm { kLinf, kL2 };

/// "linf" | "l2".
const char* NormName(Norm n);
/// Parses "linf" | "l2"; throws std::invalid_argument naming `option` and the value.
Norm ParseNorm(const std::string& value, const char* option = "--norm");

/// The distance between n-pixel images a and b in norm `norm` (computed in double).
double Distance(Norm norm, const float* a, const float* b, size_t n);

/// The largest L2 radius accepted (pixel units): sqrt(3 * 512 * 512), the diameter of
/// [0, 1]^(3x512x512).
inline constexpr double kMaxL2Radius = 886.81;

/// A ball without its centre: what a threat model resolves to (experiment::ThreatModel::ball).
struct BallShape {
  Norm norm = Norm::kLinf;                 ///< the ball's norm
  double radius = 0.3;                     ///< eps as given, pixel units (pixels in [0, 1])
  PixelSpace pixels = PixelSpace::kFloat;  ///< the query space
  /// BayesOpt's rescaled ball instead of the clipped one (L_inf only): a query x becomes
  /// (x0 + clip(x - x0, -eps, eps) + eps) / (1 + 2 eps), a *looser* threat model (the image
  /// can be up to 2 eps / (1 + 2 eps) from the clean one); only for reproducing published
  /// numbers (docs/design.md, "Clip, don't rescale").
  bool rescaled = false;

  /// The radius queries are held to: with 8-bit L_inf clipping the largest multiple of 1/255
  /// not above eps (GridRadius), else eps itself. What records call epsilon_effective.
  double EnforcedRadius() const;
  /// The largest per-pixel step of a query: GridRadius(radius) with 8-bit queries (any
  /// norm, rescaled or not), else radius. Attacks that saturate perturbations (Square's
  /// +-eps stripes, BOS^2's saturation) scale by it, so an 8-bit query is not rounded past
  /// the ball and then pulled back.
  double QueryRadius() const;
  /// Throws std::invalid_argument naming `option` unless the radius is in the norm's range
  /// (L_inf (0, 1], L2 (0, kMaxL2Radius]; NaN refused), and for a rescaled L2 ball.
  void Check(const char* option = "--eps") const;
};

/// A BallShape around one clean image: the set of images an attack may send, and the rules
/// that put an image into it. Built once per attack instance (Referee, the runner's saved
/// image, the white-box reference); immutable.
///
/// The 8-bit L_inf ball's box is counted in grid steps, as the saved PNG's bytes differ: the
/// grid values k/255 (as float, as data are read) with |k - k0| <= GridRadius(eps) * 255 and
/// 0 <= k <= 255 around an 8-bit clean pixel k0/255 (8 steps at eps = 8/255 around every clean
/// value, although float(k/255) - float(k0/255) exceeds 8/255 in double by float rounding for
/// some k0); around an off-grid clean pixel, the k with |k/255 - x0| <= eps in double.
class Ball {
 public:
  /// The ball `shape` around `clean` [d] (pixels in [0, 1]). Throws std::invalid_argument for
  /// a negative or NaN radius, a rescaled L2 ball, and with 8-bit queries a clean image off
  /// the 1/255 grid (OnPixelGrid) or a radius below one grid step (1/255) -- no 8-bit image
  /// but the clean one lies in such a ball.
  static std::unique_ptr<Ball> Make(const BallShape& shape, const float* clean, size_t d);
  virtual ~Ball() = default;
  Ball(const Ball&) = delete;
  Ball& operator=(const Ball&) = delete;

  /// Projects n images [n, d] in place into the ball intersected with [0, 1] and, in 8-bit
  /// mode, onto the 1/255 grid inside it (a pixel left on its clean grid value keeps the clean
  /// float bit for bit). Non-finite pixels become the clean pixel. L_inf clips each pixel;
  /// L2 clips the perturbation to [0, 1] and scales it onto the ball, and its 8-bit rounding
  /// goes to the nearest grid value except that the pixels whose rounding lengthened the
  /// perturbation most are rounded towards the clean pixel until the image is inside again
  /// (checked in double). The rescaled ball maps instead of clipping (BallShape::rescaled).
  virtual void Project(float* images, int n) const = 0;
  /// Projects n images [n, d] in place onto [0, 1] only (and the grid in 8-bit mode), not
  /// into the ball: where label-feedback queries may go.
  void ProjectToBox(float* images, int n) const;
  /// The image a user saves [d]: `image` [d] rounded onto the 8-bit grid inside the *clipped*
  /// ball of this shape's norm and radius, whatever the query space (a float run's result
  /// is saved as 8-bit too). L_inf: each pixel to its nearest grid value in the box (the
  /// ball's grid box; for a clean pixel off the grid, the grid values within eps of it, or
  /// the clean pixel when there are none); L2: as Project in 8-bit mode. Throws
  /// std::invalid_argument when image.size() != d.
  std::vector<float> Quantize(const std::vector<float>& image) const;
  /// Whether `image` [d] lies in the query set: every pixel finite and in [0, 1], within the
  /// ball (in double; in 8-bit L_inf mode within the grid box, counted in steps) and, in 8-bit
  /// mode, on the grid. The rescaled ball contains what its map
  /// produces: within 2 eps / (1 + 2 eps) of the clean image in L_inf.
  bool Contains(const float* image) const;
  /// Distance of `image` [d] from the clean image in the ball's norm (double).
  double Distance(const float* image) const;

  /// The shape this ball was built from.
  const BallShape& shape() const { return shape_; }
  /// The clean image [d], pixels in [0, 1].
  const std::vector<float>& clean() const { return clean_; }
  /// d, pixels per image.
  size_t size() const { return clean_.size(); }
  /// BallShape::EnforcedRadius.
  double EnforcedRadius() const { return shape_.EnforcedRadius(); }
  /// BallShape::QueryRadius.
  double QueryRadius() const { return shape_.QueryRadius(); }
  /// The per-pixel box [d] of the clipped L_inf ball: the lowest and highest value a query's
  /// pixel can take (grid values in 8-bit mode). For an L2 ball: the box [0, 1] intersected
  /// with the L_inf ball of the same radius (no pixel of an L2 query leaves it).
  const std::vector<float>& lower() const { return lo_; }
  /// The box's upper end [d] (see lower()).
  const std::vector<float>& upper() const { return hi_; }

 protected:
  /// Stores the shape, the clean image and the clipped ball's box; `Make` checks the input.
  Ball(const BallShape& shape, const float* clean, size_t d);
  /// Maps pixel i's value v in [0, 1] to its grid value (the clean float for the clean
  /// pixel's own grid value).
  float ToGrid(double v, size_t i) const;

 private:
  BallShape shape_;
  std::vector<float> clean_, lo_, hi_;
  bool grid_;
};

}  // namespace advbo::oracle
