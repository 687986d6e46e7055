#include "oracle/oracle.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <string>

#include "text/numbers.h"

namespace advbo::oracle {
const char* FeedbackName(Feedback f) { return f == Feedback::kLabel ? "label" : "scores"; }

Feedback ParseFeedback(const std::string& v, const char* option) {
  if (v == "scores") return Feedback::kScores;
  if (v == "label") return Feedback::kLabel;
  throw std::invalid_argument(std::string(option) + " must be scores or label, got '" + v + "'");
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
    : Referee(model, clean, true_class, target, BallShape{Norm::kLinf, epsilon}, budget) {}

Referee::Referee(const Classifier& model, const float* clean, int true_class, int target,
                 const BallShape& ball, long budget)
    : Referee(model, Ball::Make(ball, clean, static_cast<size_t>(std::max(0, model.input_size()))),
              true_class, target, budget) {}

Referee::Referee(const Classifier& model, std::unique_ptr<Ball> ball, int true_class, int target,
                 long budget)
    : QueryOracle(this),
      model_(model),
      true_class_(true_class),
      target_(target),
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
  if (!ball) throw std::invalid_argument("Referee: no ball");
  if (static_cast<long>(ball->size()) != model.input_size())
    throw std::invalid_argument("Referee: the ball has " + std::to_string(ball->size()) +
                                " pixels, the model takes " + std::to_string(model.input_size()));
  if (budget < 1) throw std::invalid_argument("Referee: budget must be >= 1");
  shape_ = ball->shape();
  clean_ = ball->clean();
  ball_ = std::move(ball);
}

void Referee::Reshape(const BallShape& shape, const char* what) {
  if (queries_ > 0)
    throw std::logic_error(std::string("Referee: the ") + what + " is set before the first query");
  ball_ = Ball::Make(shape, clean_.data(), clean_.size());  // throws leaving the old ball
  shape_ = shape;
}

void Referee::set_pixel_space(PixelSpace p) {
  BallShape s = shape_;
  s.pixels = p;
  Reshape(s, "pixel space");
}

void Referee::set_rescale_compat(bool on) {
  BallShape s = shape_;
  s.rescaled = on;
  Reshape(s, "threat model");
}

void Referee::set_norm(Norm n) {
  BallShape s = shape_;
  s.norm = n;
  Reshape(s, "norm");
}

void Referee::set_feedback_type(Feedback f) {
  if (queries_ > 0)
    throw std::logic_error("Referee: the feedback type is set before the first query");
  if (f == Feedback::kLabel && shape_.rescaled)
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

double Referee::DistanceToClean(const float* image) const { return ball_->Distance(image); }

void Referee::Project(float* images, int n) const {
  if (feedback_type_ == Feedback::kScores)
    ball_->Project(images, n);
  else
    ball_->ProjectToBox(images, n);  // label feedback: queries may leave the ball
}

void Referee::ProjectToBall(float* images, int n) const { ball_->Project(images, n); }

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
  context_.timing = &timing_;
  const double waited_before = timing_.wait_seconds;
  DefendedAnswer a = defense_->Evaluate(images, n, &context_);
  // The forward passes' wall time less what this instance spent waiting for other lockstep
  // lanes or worker groups: its own model time.
  const double waited = timing_.wait_seconds - waited_before;
  model_seconds_ += std::max(0.0, a.model_seconds - waited);
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
    r->success[b] = adversarial && dist <= shape_.radius && !min_distance_;
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
double QueryOracle::wait_seconds() const { return referee_->wait_seconds(); }

}  // namespace advbo::oracle
