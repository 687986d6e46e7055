#include "oracle/oracle.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace advbo::oracle {

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
    : model_(model), true_class_(true_class), target_(target), epsilon_(epsilon), budget_(budget) {
  const int k = model.num_classes();
  if (true_class < 0 || true_class >= k)
    throw std::invalid_argument("QueryOracle: true class " + std::to_string(true_class) +
                                " outside 0.." + std::to_string(k - 1));
  if (target >= k || target < -1 || target == true_class)
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

void QueryOracle::Project(float* images, int n) const {
  const size_t d = clean_.size();
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

QueryResult QueryOracle::Query(float* images, int n) {
  if (n <= 0) return {};
  if (n > remaining())
    throw BudgetExhausted("query budget of " + std::to_string(budget_) + " exhausted (" +
                          std::to_string(queries_) + " used, " + std::to_string(n) + " requested)");
  Project(images, n);
  const size_t d = clean_.size();
  std::vector<float> transformed;
  if (input_transform_) {
    transformed.assign(images, images + static_cast<size_t>(n) * d);
    input_transform_(transformed.data(), n);
  }
  const auto t0 = std::chrono::steady_clock::now();
  Eigen::MatrixXd lp = model_.LogProbabilities(input_transform_ ? transformed.data() : images, n,
                                                context_.session.empty() ? nullptr : &context_);
  model_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  QueryResult r = ScoreBatch(lp, true_class_, target_);
  for (int b = 0; b < n; ++b) {
    const long index = ++queries_;
    if (observer_) observer_(images + b * d, index);
    const double y = r.objective(b);
    if (y > best_objective_) {
      best_objective_ = y;
      best_image_.assign(images + b * d, images + (b + 1) * d);
    }
    if (r.success[b] && first_success_ < 0) {
      first_success_ = index;
      success_image_.assign(images + b * d, images + (b + 1) * d);
    }
  }
  if (feedback_) feedback_(r);
  return r;
}

}  // namespace advbo::oracle
