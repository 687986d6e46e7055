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

Referee::Referee(const Classifier& model, const float* clean, int true_class, int target,
                 double epsilon, long budget)
    : QueryOracle(this),
      model_(model),
      true_class_(true_class),
      target_(target),
      epsilon_(epsilon),
      budget_(budget),
      defense_(Undefended(model)) {
  const int k = model.num_classes();
  // k = 0: a model loaded without a probe, whose class count comes with its first answer
  // (checked against the label and target in QueryBatch).
  if (true_class < 0 || (k > 0 && true_class >= k))
    throw std::invalid_argument("Referee: true class " + std::to_string(true_class) +
                                " outside 0.." + std::to_string(k - 1));
  if ((k > 0 && target >= k) || target < -1 || target == true_class)
    throw std::invalid_argument("Referee: target " + std::to_string(target) +
                                " must be -1 (untargeted) or a class != the true class");
  if (!(epsilon >= 0)) throw std::invalid_argument("Referee: epsilon must be >= 0");
  if (budget < 1) throw std::invalid_argument("Referee: budget must be >= 1");
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

void Referee::set_pixel_space(PixelSpace p) {
  if (queries_ > 0)
    throw std::logic_error("Referee: the pixel space is set before the first query");
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

double Referee::query_radius() const {
  return pixel_space_ == PixelSpace::k8bit ? GridRadius(epsilon_) : epsilon_;
}

void Referee::set_norm(Norm n) {
  if (queries_ > 0) throw std::logic_error("Referee: the norm is set before the first query");
  if (n == Norm::kL2 && rescale_compat_)
    throw std::invalid_argument("the rescale-compat threat model is L_inf only (--norm linf)");
  norm_ = n;
}

void Referee::set_feedback_type(Feedback f) {
  if (queries_ > 0)
    throw std::logic_error("Referee: the feedback type is set before the first query");
  if (f == Feedback::kLabel && rescale_compat_)
    throw std::invalid_argument("label feedback does not combine with rescale compat");
  if (f != Feedback::kLabel && min_distance_)
    throw std::invalid_argument("the min-distance goal needs label feedback");
  feedback_type_ = f;
}

void Referee::set_start_image(std::vector<float> image) {
  if (image.size() != clean_.size())
    throw std::invalid_argument("start image: " + std::to_string(image.size()) +
                                " pixels, the clean image has " + std::to_string(clean_.size()));
  for (float v : image)
    if (!std::isfinite(v)) throw std::invalid_argument("start image: non-finite pixel");
  start_image_ = std::move(image);
}

void Referee::set_min_distance(bool on) {
  if (queries_ > 0) throw std::logic_error("Referee: the goal is set before the first query");
  if (on && feedback_type_ != Feedback::kLabel)
    throw std::invalid_argument(
        "the min-distance goal is for hard-label attacks (label feedback): score-based "
        "attacks stay inside the ball");
  min_distance_ = on;
}

double Referee::DistanceToClean(const float* image) const {
  return Distance(norm_, image, clean_.data(), clean_.size());
}

void Referee::Project(float* images, int n) const {
  ProjectImpl(images, n, feedback_type_ == Feedback::kScores);
}

void Referee::ProjectToBall(float* images, int n) const { ProjectImpl(images, n, true); }

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

void Referee::ProjectL2(float* x) const {
  ProjectOntoL2Ball(x, clean_.data(), clean_.size(), epsilon_, pixel_space_ == PixelSpace::k8bit);
}

void Referee::ProjectImpl(float* images, int n, bool ball) const {
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

void Referee::set_defense(std::unique_ptr<DefendedModel> defense) {
  if (queries_ > 0) throw std::logic_error("Referee: the defense is set before the first query");
  if (!defense) throw std::invalid_argument("Referee: a null defense (use Undefended)");
  if (&defense->classifier() != &model_)
    throw std::invalid_argument("Referee: the defense ends in another classifier");
  defense_ = std::move(defense);
}

DefendedAnswer Referee::Evaluate(float* images, int n) {
  if (n <= 0) return {};
  if (n > remaining())
    throw BudgetExhausted("query budget of " + std::to_string(budget_) + " exhausted (" +
                          std::to_string(queries_) + " used, " + std::to_string(n) + " requested)");
  Project(images, n);
  DefendedAnswer a = defense_->Evaluate(images, n, &context_);
  model_seconds_ += a.model_seconds;
  const Eigen::Index classes = a.log_probs.cols();
  if (true_class_ >= classes || target_ >= classes)
    throw ModelError(model_.path() + ": the model answers with " + std::to_string(classes) +
                     " classes, but the instance's " +
                     (true_class_ >= classes ? "label is " + std::to_string(true_class_)
                                             : "target is " + std::to_string(target_)));
  const size_t d = clean_.size();
  for (int b = 0; b < n; ++b) {
    ++queries_;
    if (observer_) observer_(images + b * d, queries_);
  }
  if (batch_observer_) batch_observer_(ScoreBatch(a.log_probs, true_class_, target_));
  return a;
}

QueryResult Referee::Judge(const float* images, int n, const DefendedAnswer& a, long stride,
                           bool provisional) {
  if (n <= 0) return {};
  QueryResult r = ScoreBatch(a.log_probs, true_class_, target_);
  if (!a.refused.empty()) {
    // A refused answer is never a success.
    r.rejected = a.refused;
    for (int b = 0; b < n; ++b)
      if (r.rejected[b]) r.success[b] = false;
  }
  r.adversarial = r.success;
  const size_t d = clean_.size();
  const long before = queries_ - n * stride;
  for (int b = 0; b < n; ++b)
    TrackQuery(images + b * d, b, before + (b + 1) * stride, !provisional, &r);
  if (feedback_type_ == Feedback::kLabel) r.log_probs.resize(n, 0);  // the label, nothing more
  return r;
}

void Referee::TrackQuery(const float* x, int b, long index, bool record, QueryResult* r) {
  const size_t d = clean_.size();
  const bool label = feedback_type_ == Feedback::kLabel;
  if (label) {
    const bool adversarial = r->adversarial[b];
    const double dist = DistanceToClean(x);
    r->success[b] = adversarial && dist <= epsilon_ && !min_distance_;
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
  // A provisional success (a confirming view's, attacks/adaptive) waits for ClaimSuccess under
  // either feedback.
  if (r->success[b] && first_success_ < 0 && record) {
    first_success_ = index;
    success_image_.assign(x, x + d);
    if (!label) success_log_probs_ = r->log_probs.row(b);
  }
}

}  // namespace advbo::oracle

namespace advbo::oracle {

void Referee::ClaimSuccess(const float* image, const Eigen::RowVectorXd& log_probs) {
  if (first_success_ >= 0) return;
  first_success_ = queries_;
  success_image_.assign(image, image + clean_.size());
  success_log_probs_ = log_probs;
}

QueryResult QueryOracle::Ask(float* images, int n, bool provisional) {
  const DefendedAnswer a = Evaluate(images, n);
  return referee_->Judge(images, n, a, stride(), provisional);
}

// The attack's view of the referee: every getter reads the referee's state.
void QueryOracle::ClaimSuccess(const float* image, const Eigen::RowVectorXd& log_probs) {
  referee_->ClaimSuccess(image, log_probs);
}
void QueryOracle::Project(float* images, int n) const { referee_->Project(images, n); }
void QueryOracle::ProjectToBall(float* images, int n) const { referee_->ProjectToBall(images, n); }
Norm QueryOracle::norm() const { return referee_->norm(); }
Feedback QueryOracle::feedback_type() const { return referee_->feedback_type(); }
bool QueryOracle::min_distance() const { return referee_->min_distance(); }
double QueryOracle::DistanceToClean(const float* image) const {
  return referee_->DistanceToClean(image);
}
double QueryOracle::best_distance() const { return referee_->best_distance(); }
const std::vector<std::pair<long, double>>& QueryOracle::distance_trace() const {
  return referee_->distance_trace();
}
PixelSpace QueryOracle::pixel_space() const { return referee_->pixel_space(); }
double QueryOracle::query_radius() const { return referee_->query_radius(); }
bool QueryOracle::rescale_compat() const { return referee_->rescale_compat(); }
long QueryOracle::queries() const { return referee_->queries() / stride(); }
long QueryOracle::budget() const { return referee_->budget() / stride(); }
long QueryOracle::first_success_query() const {
  const long first = referee_->first_success_query();
  return first > 0 ? first / stride() : -1;
}
double QueryOracle::best_objective() const { return referee_->best_objective(); }
const std::vector<float>& QueryOracle::best_image() const { return referee_->best_image(); }
const std::vector<float>& QueryOracle::success_image() const { return referee_->success_image(); }
const Eigen::RowVectorXd& QueryOracle::best_log_probs() const { return referee_->best_log_probs(); }
const Eigen::RowVectorXd& QueryOracle::success_log_probs() const {
  return referee_->success_log_probs();
}
const std::vector<float>& QueryOracle::clean() const { return referee_->clean(); }
const std::vector<float>& QueryOracle::start_image() const { return referee_->start_image(); }
double QueryOracle::epsilon() const { return referee_->epsilon(); }
int QueryOracle::true_class() const { return referee_->true_class(); }
int QueryOracle::target() const { return referee_->target(); }
const Classifier& QueryOracle::model() const { return referee_->model(); }
double QueryOracle::model_seconds() const { return referee_->model_seconds(); }

}  // namespace advbo::oracle
