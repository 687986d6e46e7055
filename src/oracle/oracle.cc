#include "oracle/oracle.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <string>

#include "text/numbers.h"

namespace advbo::oracle {
namespace {

// The grid value k/255 exactly as 8-bit data are read (byte / 255.0f).
float GridValue(long k) { return static_cast<float>(k) / 255.0f; }

}  // namespace

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

const char* FeedbackName(Feedback f) { return f == Feedback::kLabel ? "label" : "scores"; }

Feedback ParseFeedback(const std::string& v, const char* option) {
  if (v == "scores") return Feedback::kScores;
  if (v == "label") return Feedback::kLabel;
  throw std::invalid_argument(std::string(option) + " must be scores or label, got '" + v + "'");
}

bool OnPixelGrid(const float* x, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const double v = static_cast<double>(x[i]) * 255.0;
    if (!(std::abs(v - std::round(v)) <= 1e-3) || v < 0 || v > 255.0) return false;
  }
  return true;
}

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

QueryResult ScoreBatch(const Eigen::MatrixXd& lp, int true_class, int target) {
  const int n = static_cast<int>(lp.rows());
  QueryResult r;
  r.objective.resize(n);
  r.log_probs = lp;
  for (int b = 0; b < n; ++b) {
    Eigen::RowVectorXd row = lp.row(b);
    Eigen::Index arg;
    row.maxCoeff(&arg);
    const int pred = static_cast<int>(arg);
    double y;
    bool ok;
    if (target >= 0) {
      // log sum_{c != t} p_c via a stable log-sum-exp over the other classes.
      double m = -std::numeric_limits<double>::infinity();
      for (int c = 0; c < row.size(); ++c)
        if (c != target) m = std::max(m, row(c));
      double s = 0;
      for (int c = 0; c < row.size(); ++c)
        if (c != target) s += std::exp(row(c) - m);
      y = row(target) - (m + std::log(s));
      ok = pred == target;
    } else {
      double m = -std::numeric_limits<double>::infinity();
      for (int c = 0; c < row.size(); ++c)
        if (c != true_class) m = std::max(m, row(c));
      y = m - row(true_class);
      ok = pred != true_class;
    }
    r.objective(b) = y;
    r.predicted.push_back(pred);
    r.success.push_back(ok);
  }
  return r;
}

QueryOracle::QueryOracle(const Classifier& model, const float* clean, int true_class, int target,
                         double epsilon, long budget)
    : model_(model),
      true_class_(true_class),
      target_(target),
      epsilon_(epsilon),
      budget_(budget),
      defense_(Undefended(model)),
      model_budget_(budget) {
  const int k = model.num_classes();
  // k = 0: a model loaded without a probe, whose class count comes with its first answer
  // (checked against the label and target in QueryBatch).
  if (true_class < 0 || (k > 0 && true_class >= k))
    throw std::invalid_argument("QueryOracle: true class " + std::to_string(true_class) +
                                " outside 0.." + std::to_string(k - 1));
  if ((k > 0 && target >= k) || target < -1 || target == true_class)
    throw std::invalid_argument("QueryOracle: target " + std::to_string(target) +
                                " must be -1 (untargeted) or a class != the true class");
  if (!(epsilon >= 0)) throw std::invalid_argument("QueryOracle: epsilon must be >= 0");
  if (budget < 1) throw std::invalid_argument("QueryOracle: budget must be >= 1");
  const int d = model.input_size();
  clean_.assign(clean, clean + d);
  lo_.resize(d);
  hi_.resize(d);
  for (int i = 0; i < d; ++i) {
    // float(clean +- eps) rounded inwards so the clipped query never exceeds eps.
    float lo = static_cast<float>(clean_[i] - epsilon),
          hi = static_cast<float>(clean_[i] + epsilon);
    if (static_cast<double>(lo) < clean_[i] - epsilon) lo = std::nextafter(lo, 1.0f);
    if (static_cast<double>(hi) > clean_[i] + epsilon) hi = std::nextafter(hi, 0.0f);
    lo_[i] = std::max(0.0f, lo);
    hi_[i] = std::min(1.0f, hi);
  }
}

void QueryOracle::set_pixel_space(PixelSpace p) {
  if (queries_ > 0)
    throw std::logic_error("QueryOracle: the pixel space is set before the first query");
  pixel_space_ = p;
  const int d = static_cast<int>(clean_.size());
  if (p == PixelSpace::kFloat) {
    for (int i = 0; i < d; ++i) {  // as in the constructor
      float lo = static_cast<float>(clean_[i] - epsilon_),
            hi = static_cast<float>(clean_[i] + epsilon_);
      if (static_cast<double>(lo) < clean_[i] - epsilon_) lo = std::nextafter(lo, 1.0f);
      if (static_cast<double>(hi) > clean_[i] + epsilon_) hi = std::nextafter(hi, 0.0f);
      lo_[i] = std::max(0.0f, lo);
      hi_[i] = std::min(1.0f, hi);
    }
    return;
  }
  if (!OnPixelGrid(clean_.data(), clean_.size())) {
    pixel_space_ = PixelSpace::kFloat;
    throw std::invalid_argument(
        "8-bit queries need a clean image on the 1/255 grid (8-bit data); this image has "
        "other pixel values (use float queries)");
  }
  if (GridRadius(epsilon_) <= 0) {
    pixel_space_ = PixelSpace::kFloat;
    throw std::invalid_argument("8-bit queries: eps " + std::to_string(epsilon_) +
                                " is below one 8-bit step (1/255 = 0.00392); no 8-bit image "
                                "other than the clean one lies in the ball (use float queries)");
  }
  // The grid values inside [clean - eps, clean + eps] and [0, 1], checked in doubles as the
  // threat-model test checks them: lo_/hi_ become the lowest and highest such grid values.
  const long r = std::lround(GridRadius(epsilon_) * 255.0);
  for (int i = 0; i < d; ++i) {
    const double c = clean_[i];
    const long kc = std::lround(c * 255.0);
    auto inside = [&](long k) {
      const double v = GridValue(k);
      return k >= 0 && k <= 255 && std::abs(v - c) <= epsilon_;
    };
    long klo = std::max(0L, kc - r), khi = std::min(255L, kc + r);
    while (klo < kc && !inside(klo)) ++klo;
    while (khi > kc && !inside(khi)) --khi;
    while (klo > 0 && inside(klo - 1)) --klo;
    while (khi < 255 && inside(khi + 1)) ++khi;
    lo_[i] = klo == kc ? clean_[i] : GridValue(klo);
    hi_[i] = khi == kc ? clean_[i] : GridValue(khi);
  }
}

double QueryOracle::query_radius() const {
  return pixel_space_ == PixelSpace::k8bit ? GridRadius(epsilon_) : epsilon_;
}

void QueryOracle::set_norm(Norm n) {
  if (queries_ > 0) throw std::logic_error("QueryOracle: the norm is set before the first query");
  if (n == Norm::kL2 && rescale_compat_)
    throw std::invalid_argument("the rescale-compat threat model is L_inf only (--norm linf)");
  norm_ = n;
}

void QueryOracle::set_feedback_type(Feedback f) {
  if (queries_ > 0)
    throw std::logic_error("QueryOracle: the feedback type is set before the first query");
  if (f == Feedback::kLabel && (samples_ > 1 || confirm_ > 0 || resample_ || rescale_compat_))
    throw std::invalid_argument(
        "label feedback does not combine with EOT, confirmations, resampling or rescale compat");
  feedback_type_ = f;
}

double QueryOracle::DistanceToClean(const float* image) const {
  return Distance(norm_, image, clean_.data(), clean_.size());
}

void QueryOracle::Project(float* images, int n) const {
  ProjectImpl(images, n, feedback_type_ == Feedback::kScores);
}

void QueryOracle::ProjectToBall(float* images, int n) const { ProjectImpl(images, n, true); }

void ProjectOntoL2Ball(float* x, const float* clean, size_t d, double eps, bool grid) {
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
    const long kc = std::lround(c * 255.0), k = std::lround(static_cast<double>(x[i]) * 255.0);
    x[i] = k == kc ? clean[i] : GridValue(k);
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

void QueryOracle::ProjectL2(float* x) const {
  ProjectOntoL2Ball(x, clean_.data(), clean_.size(), epsilon_, pixel_space_ == PixelSpace::k8bit);
}

void QueryOracle::ProjectImpl(float* images, int n, bool ball) const {
  const size_t d = clean_.size();
  if (!ball || norm_ == Norm::kL2) {
    for (int b = 0; b < n; ++b) {
      float* x = images + b * d;
      if (ball) {
        ProjectL2(x);
        continue;
      }
      // Label feedback: the box [0, 1] only (and the grid in 8-bit mode).
      for (size_t i = 0; i < d; ++i) {
        const float v = std::isfinite(x[i]) ? std::clamp(x[i], 0.0f, 1.0f) : clean_[i];
        if (pixel_space_ != PixelSpace::k8bit) {
          x[i] = v;
          continue;
        }
        const long k = std::lround(static_cast<double>(v) * 255.0);
        x[i] = k == std::lround(static_cast<double>(clean_[i]) * 255.0) ? clean_[i] : GridValue(k);
      }
    }
    return;
  }
  if (rescale_compat_ && pixel_space_ == PixelSpace::k8bit) {
    // The reference code's rescaled image, then rounded onto the grid (what would be sent).
    const float e = static_cast<float>(epsilon_), scale = 1.0f / (1.0f + 2.0f * e);
    for (int b = 0; b < n; ++b) {
      float* x = images + b * d;
      for (size_t i = 0; i < d; ++i) {
        const float delta = std::isfinite(x[i]) ? std::clamp(x[i] - clean_[i], -e, e) : 0.0f;
        const float v = std::clamp((clean_[i] + delta + e) * scale, 0.0f, 1.0f);
        x[i] = GridValue(std::lround(static_cast<double>(v) * 255.0));
      }
    }
    return;
  }
  if (pixel_space_ == PixelSpace::k8bit) {
    for (int b = 0; b < n; ++b) {
      float* x = images + b * d;
      for (size_t i = 0; i < d; ++i) {
        const float v = std::isfinite(x[i]) ? std::clamp(x[i], lo_[i], hi_[i]) : clean_[i];
        const long k = std::lround(static_cast<double>(v) * 255.0);
        // lo_/hi_ are grid values, so k lies in the ball's grid range; the clean pixel's
        // own grid value is the clean float itself.
        x[i] = k == std::lround(static_cast<double>(clean_[i]) * 255.0) ? clean_[i] : GridValue(k);
      }
    }
    return;
  }
  if (rescale_compat_) {
    const float e = static_cast<float>(epsilon_), scale = 1.0f / (1.0f + 2.0f * e);
    for (int b = 0; b < n; ++b) {
      float* x = images + b * d;
      for (size_t i = 0; i < d; ++i) {
        const float delta = std::isfinite(x[i]) ? std::clamp(x[i] - clean_[i], -e, e) : 0.0f;
        x[i] = std::clamp((clean_[i] + delta + e) * scale, 0.0f, 1.0f);
      }
    }
    return;
  }
  for (int b = 0; b < n; ++b) {
    float* x = images + b * d;
    for (size_t i = 0; i < d; ++i) {
      float v = std::isfinite(x[i]) ? x[i] : clean_[i];
      x[i] = std::clamp(v, lo_[i], hi_[i]);
    }
  }
}

void QueryOracle::set_samples_per_query(int k) {
  if (queries_ > 0) throw std::invalid_argument("QueryOracle: EOT samples set after a query");
  if (k > 1 && feedback_type_ == Feedback::kLabel)
    throw std::invalid_argument("eot: needs score feedback (--feedback scores)");
  if (k < 1 || k > model_budget_)
    throw std::invalid_argument("eot: k = " + std::to_string(k) +
                                " samples per query must be in [1, the budget " +
                                std::to_string(model_budget_) + "]");
  samples_ = k;
  budget_ = model_budget_ / k;
}

namespace {

// Each of the n images (d floats each) k times in a row: the EOT samples [n * k, d].
std::vector<float> EotCopies(const float* images, int n, int k, size_t d) {
  std::vector<float> out(static_cast<size_t>(n) * k * d);
  for (int b = 0; b < n; ++b)
    for (int s = 0; s < k; ++s)
      std::copy(images + b * d, images + (b + 1) * d, out.data() + (b * k + s) * d);
  return out;
}

// The EOT answer of n images from their k samples' log-probabilities lp [n * k, classes]:
// the log of each image's mean probability vector, renormalised [n, classes].
Eigen::MatrixXd EotMean(const Eigen::MatrixXd& lp, int n, int k) {
  Eigen::MatrixXd mean(n, lp.cols());
  for (int b = 0; b < n; ++b) {
    const double mx = lp.middleRows(b * k, k).maxCoeff();
    Eigen::RowVectorXd p = (lp.middleRows(b * k, k).array() - mx).exp().colwise().sum() / k;
    mean.row(b) = p.array().log() + mx;
    const double lse = mean.row(b).maxCoeff() +
                       std::log((mean.row(b).array() - mean.row(b).maxCoeff()).exp().sum());
    mean.row(b).array() -= lse;
  }
  return mean;
}

}  // namespace

void QueryOracle::set_defense(std::unique_ptr<DefendedModel> defense) {
  if (queries_ > 0)
    throw std::logic_error("QueryOracle: the defense is set before the first query");
  if (!defense) throw std::invalid_argument("QueryOracle: a null defense (use Undefended)");
  if (&defense->classifier() != &model_)
    throw std::invalid_argument("QueryOracle: the defense ends in another classifier");
  defense_ = std::move(defense);
}

QueryResult QueryOracle::QueryBatch(float* images, int n) {
  if (n <= 0) return {};
  if (n > remaining())
    throw BudgetExhausted("query budget of " + std::to_string(budget_) + " exhausted (" +
                          std::to_string(queries_) + " used, " + std::to_string(n) + " requested)");
  Project(images, n);
  const size_t d = clean_.size();
  const int k = samples_, total = n * k;
  // Each image k times in a row (EOT), then through the defense's stages.
  std::vector<float> copies;
  if (k > 1) copies = EotCopies(images, n, k, d);
  DefendedAnswer a = defense_->Evaluate(k > 1 ? copies.data() : images, total, &context_);
  model_seconds_ += a.model_seconds;
  Eigen::MatrixXd& lp = a.log_probs;
  if (true_class_ >= lp.cols() || target_ >= lp.cols())
    throw ModelError(model_.path() + ": the model answers with " + std::to_string(lp.cols()) +
                     " classes, but the instance's " +
                     (true_class_ >= lp.cols() ? "label is " + std::to_string(true_class_)
                                               : "target is " + std::to_string(target_)));
  if (score_correction_) score_correction_(&lp);
  // A batch observer sees every model evaluation (EOT samples one by one) and the scores
  // that label feedback hides from the attack.
  std::optional<QueryResult> observed;
  if (batch_observer_ && k > 1) observed = ScoreBatch(lp, true_class_, target_);
  if (k > 1) lp = EotMean(lp, n, k);
  QueryResult r = ScoreBatch(lp, true_class_, target_);
  const bool label = feedback_type_ == Feedback::kLabel;
  if (batch_observer_ && label && !observed) observed = r;
  if (!a.refused.empty()) {
    // A refused answer (any of its EOT samples refused) is never a success.
    r.rejected.assign(n, false);
    for (int q = 0; q < total; ++q)
      if (a.refused[q]) r.rejected[q / k] = true;
    for (int b = 0; b < n; ++b)
      if (r.rejected[b]) r.success[b] = false;
  }
  r.adversarial = r.success;
  for (int b = 0; b < n; ++b) TrackQuery(images + b * d, b, &r);
  if (batch_observer_) batch_observer_(observed ? *observed : r);
  if (label) r.log_probs.resize(n, 0);  // the label, nothing more
  return r;
}

void QueryOracle::TrackQuery(const float* x, int b, QueryResult* r) {
  const size_t d = clean_.size();
  const long index = ++queries_;
  if (observer_) observer_(x, index);
  const bool label = feedback_type_ == Feedback::kLabel;
  if (label) {
    const bool adversarial = r->adversarial[b];
    const double dist = DistanceToClean(x);
    r->success[b] = adversarial && dist <= epsilon_;
    r->objective(b) = adversarial ? 1.0 : -1.0;
    if (adversarial && dist < best_distance_) {
      best_distance_ = dist;
      best_objective_ = -dist;
      best_image_.assign(x, x + d);
      distance_trace_.push_back({index, dist});
    }
  } else if (r->objective(b) > best_objective_) {
    best_objective_ = r->objective(b);
    best_image_.assign(x, x + d);
    best_log_probs_ = r->log_probs.row(b);
  }
  if (r->success[b] && first_success_ < 0 && (label || record_success_)) {
    first_success_ = index;
    success_image_.assign(x, x + d);
    if (!label) success_log_probs_ = r->log_probs.row(b);
  }
}

}  // namespace advbo::oracle

namespace advbo::oracle {

void QueryOracle::set_resampling(double scale, int max_tries, uint64_t seed, int quantization) {
  if (feedback_type_ == Feedback::kLabel)
    throw std::invalid_argument("resampling needs score feedback (--feedback scores)");
  if (!(scale > 0 && scale <= 1) || max_tries < 0 || quantization < 0 || quantization > 255)
    throw std::invalid_argument(
        "resampling: scale in (0, 1], tries >= 0 and quantization in [0, 255] needed");
  resample_ = true;
  resample_quant_ = quantization;
  resample_scale_ = scale;
  resample_tries_ = max_tries;
  resample_rng_.seed(seed);
}

void QueryOracle::AddResamplingNoise(float* image) {
  const size_t d = clean_.size();
  // In 8-bit mode noise below half a grid step would round away: at least one step.
  const double radius = query_radius();
  const double floor = pixel_space_ == PixelSpace::k8bit && radius > 0 ? 1.0 / (255.0 * radius) : 0;
  const double amp = std::max(resample_scale_, floor) * radius;
  if (resample_quant_ == 0) {
    std::uniform_real_distribution<double> u(-amp, amp);
    for (size_t i = 0; i < d; ++i) image[i] = static_cast<float>(image[i] + u(resample_rng_));
    return;
  }
  // The detector's quantisation is known: only pixels within amp of a bin boundary move,
  // each with probability 1/2, just across it (to the boundary level b or b - 1 on the
  // 0..255 scale) -- the smallest change that alters the fingerprint's windows.
  const double q = resample_quant_, amp_levels = amp * 255.0;
  std::bernoulli_distribution coin(0.5);
  for (size_t i = 0; i < d; ++i) {
    const double level = static_cast<double>(image[i]) * 255.0;
    const double b = std::round(level / q) * q;
    if (b <= 0 || b > 255 || std::abs(level - b) > amp_levels || !coin(resample_rng_)) continue;
    image[i] = static_cast<float>((level >= b ? b - 1 : b) / 255.0);
  }
}

void QueryOracle::set_confirmations(int n) {
  if (n < 0 || n > 1000)
    throw std::invalid_argument("confirmations must be in [0, 1000], got " + std::to_string(n));
  if (n > 0 && feedback_type_ == Feedback::kLabel)
    throw std::invalid_argument("confirmations need score feedback (--feedback scores)");
  confirm_ = n;
}

void QueryOracle::Confirm(float* images, int n, QueryResult* r) {
  const size_t d = clean_.size();
  for (int b = 0; b < n; ++b) {
    if (!r->success[b] || first_success_ >= 0) continue;
    // The image as evaluated (projected; with OARS, with its noise): sent again.
    std::vector<float> x(images + b * d, images + (b + 1) * d);
    double sum = r->objective(b);
    int evals = 1;
    bool confirmed = true;
    QueryResult last;
    for (int c = 0; c < confirm_ && confirmed; ++c) {
      if (remaining() <= 0) {
        confirmed = false;
        break;
      }
      std::vector<float> again = x;
      last = QueryBatch(again.data(), 1);
      ++confirm_queries_;
      sum += last.objective(0);
      ++evals;
      confirmed = last.success[0];
    }
    if (confirmed) {
      first_success_ = queries_;
      success_image_ = x;
      success_log_probs_ = confirm_ > 0 ? last.log_probs.row(0) : r->log_probs.row(b);
    } else {
      ++refuted_;
      r->success[b] = false;
      r->objective(b) = sum / evals;
    }
  }
}

QueryResult QueryOracle::Query(float* images, int n) {
  if (confirm_ > 0 && n > 0) {
    // Successes are recorded only once confirmed (set_confirmations), by Confirm.
    struct Restore {
      bool& flag;
      ~Restore() { flag = true; }
    } restore{record_success_};
    record_success_ = false;
    QueryResult r = resample_ ? ResampledQuery(images, n) : QueryBatch(images, n);
    Confirm(images, n, &r);
    r.adversarial = r.success;  // score feedback: the confirmed verdict
    return r;
  }
  QueryResult r = resample_ ? ResampledQuery(images, n) : QueryBatch(images, n);
  if (feedback_type_ == Feedback::kScores) r.adversarial = r.success;
  return r;
}

QueryResult QueryOracle::ResampledQuery(float* images, int n) {
  if (!resample_ || n <= 0) return QueryBatch(images, n);
  // Detection-aware resampling (OARS-style, Feng et al., CCS 2023): every query goes out
  // with random noise at the current scale; a refused one is resampled with doubled noise
  // until it passes (each try a counted query); the scale decays while queries pass.
  const size_t d = clean_.size();
  std::vector<float> proposals(images, images + static_cast<size_t>(n) * d);
  for (int b = 0; b < n; ++b) AddResamplingNoise(images + b * d);
  QueryResult r = QueryBatch(images, n);
  bool any = false;
  for (int b = 0; b < n && !r.rejected.empty(); ++b) {
    for (int t = 0; r.rejected[b] && t < resample_tries_ && remaining() > 0; ++t) {
      any = true;
      ++resampled_;
      resample_scale_ = std::min(1.0, 2 * resample_scale_);
      std::vector<float> x(proposals.begin() + b * d, proposals.begin() + (b + 1) * d);
      AddResamplingNoise(x.data());
      const QueryResult one = QueryBatch(x.data(), 1);
      std::copy(x.begin(), x.end(), images + b * d);
      r.objective(b) = one.objective(0);
      r.predicted[b] = one.predicted[0];
      r.success[b] = one.success[0];
      r.log_probs.row(b) = one.log_probs.row(0);
      r.rejected[b] = !one.rejected.empty() && one.rejected[0];
    }
    any = any || r.rejected[b];
  }
  if (!any) resample_scale_ = std::max(1e-3, 0.9 * resample_scale_);
  return r;
}

}  // namespace advbo::oracle
