#include "oracle/defended_model.h"

#include <chrono>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "oracle/oracle.h"

namespace advbo::oracle {
namespace {

// The classifier itself. A served model may have a defense of its own in front of it (`advbo
// serve --defense`): its detector's verdicts come back with the scores and are handed on
// exactly as a local detector stage's are (refused rows flat and marked, detections counted).
class UndefendedModel final : public DefendedModel {
 public:
  explicit UndefendedModel(const Classifier& model) : model_(model) {}
  DefendedAnswer Evaluate(const float* images, int n, const QueryContext* context) override {
    DefendedAnswer a;
    const auto t0 = std::chrono::steady_clock::now();
    Classifier::Answered answer = model_.Answer(images, n, context);
    a.model_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    a.log_probs = std::move(answer.log_probs);
    if (!answer.detected.empty()) {
      counts_.monitored = true;
      for (int q = 0; q < n; ++q)
        if (answer.detected[q]) {
          ++counts_.detections;
          if (counts_.first_detection < 0) counts_.first_detection = seen_ + q + 1;
        }
      seen_ += n;
    }
    // A rejecting detector marks every batch (all false when it refused none), as a local one.
    a.refused = std::move(answer.refused);
    return a;
  }
  const Classifier& classifier() const override { return model_; }
  DetectorCounts detector() const override { return counts_; }

 private:
  const Classifier& model_;
  DetectorCounts counts_;  // a served detector's verdicts (monitored once one is reported)
  long seen_ = 0;
};

// A stage: forwards the classifier and the detector counts to the model it wraps.
class Stage : public DefendedModel {
 public:
  explicit Stage(std::unique_ptr<DefendedModel> inner) : inner_(std::move(inner)) {
    if (!inner_) throw std::invalid_argument("a defense stage needs a model to wrap");
  }
  const Classifier& classifier() const override { return inner_->classifier(); }
  DetectorCounts detector() const override { return inner_->detector(); }

 protected:
  std::unique_ptr<DefendedModel> inner_;
};

class InputStage final : public Stage {
 public:
  InputStage(std::unique_ptr<DefendedModel> inner, std::function<void(float*, int)> f)
      : Stage(std::move(inner)), transform_(std::move(f)) {}
  DefendedAnswer Evaluate(const float* images, int n, const QueryContext* context) override {
    const size_t d = static_cast<size_t>(classifier().input_size());
    copy_.assign(images, images + static_cast<size_t>(n) * d);
    transform_(copy_.data(), n);
    return inner_->Evaluate(copy_.data(), n, context);
  }

 private:
  std::function<void(float*, int)> transform_;
  std::vector<float> copy_;
};

class OutputStage final : public Stage {
 public:
  OutputStage(std::unique_ptr<DefendedModel> inner, std::function<void(Eigen::MatrixXd*)> f)
      : Stage(std::move(inner)), post_(std::move(f)) {}
  DefendedAnswer Evaluate(const float* images, int n, const QueryContext* context) override {
    DefendedAnswer a = inner_->Evaluate(images, n, context);
    post_(&a.log_probs);
    return a;
  }

 private:
  std::function<void(Eigen::MatrixXd*)> post_;
};

class DetectorStage final : public Stage {
 public:
  DetectorStage(std::unique_ptr<DefendedModel> inner,
                std::function<std::vector<bool>(const float*, int)> monitor, bool reject)
      : Stage(std::move(inner)), monitor_(std::move(monitor)), reject_(reject) {
    if (!monitor_) throw std::invalid_argument("a detector stage needs a monitor");
    counts_.monitored = true;
  }
  DefendedAnswer Evaluate(const float* images, int n, const QueryContext* context) override {
    const std::vector<bool> detected = monitor_(images, n);
    if (static_cast<int>(detected.size()) != n)
      throw std::logic_error("the query monitor returned a wrong-sized verdict");
    for (int q = 0; q < n; ++q)
      if (detected[q]) {
        ++counts_.detections;
        if (counts_.first_detection < 0) counts_.first_detection = seen_ + q + 1;
      }
    seen_ += n;
    DefendedAnswer a = inner_->Evaluate(images, n, context);
    if (!reject_) return a;
    // Refusals from inside (a served model's own detector) stay refused.
    if (static_cast<int>(a.refused.size()) != n) a.refused.assign(n, false);
    const double flat = -std::log(static_cast<double>(a.log_probs.cols()));
    for (int q = 0; q < n; ++q)
      if (detected[q]) {
        a.log_probs.row(q).setConstant(flat);
        a.refused[q] = true;
      }
    return a;
  }
  DetectorCounts detector() const override { return counts_; }

 private:
  std::function<std::vector<bool>(const float*, int)> monitor_;
  bool reject_;
  DetectorCounts counts_;
  long seen_ = 0;
};

class LearnerStage final : public Stage {
 public:
  LearnerStage(std::unique_ptr<DefendedModel> inner, std::function<void(const QueryResult&)> f,
               int true_class, int target)
      : Stage(std::move(inner)), learn_(std::move(f)), true_class_(true_class), target_(target) {}
  DefendedAnswer Evaluate(const float* images, int n, const QueryContext* context) override {
    DefendedAnswer a = inner_->Evaluate(images, n, context);
    // The class-count check is the referee's (Referee); score only what it can score.
    if (true_class_ < a.log_probs.cols() && target_ < a.log_probs.cols())
      learn_(ScoreBatch(a.log_probs, true_class_, target_));
    return a;
  }

 private:
  std::function<void(const QueryResult&)> learn_;
  int true_class_, target_;
};

}  // namespace

std::unique_ptr<DefendedModel> Undefended(const Classifier& model) {
  return std::make_unique<UndefendedModel>(model);
}

std::unique_ptr<DefendedModel> WithInputStage(std::unique_ptr<DefendedModel> inner,
                                              std::function<void(float*, int)> transform) {
  if (!transform) return inner;
  return std::make_unique<InputStage>(std::move(inner), std::move(transform));
}

std::unique_ptr<DefendedModel> WithOutputStage(std::unique_ptr<DefendedModel> inner,
                                               std::function<void(Eigen::MatrixXd*)> post) {
  if (!post) return inner;
  return std::make_unique<OutputStage>(std::move(inner), std::move(post));
}

std::unique_ptr<DefendedModel> WithDetector(
    std::unique_ptr<DefendedModel> inner,
    std::function<std::vector<bool>(const float*, int)> monitor, bool reject) {
  return std::make_unique<DetectorStage>(std::move(inner), std::move(monitor), reject);
}

std::unique_ptr<DefendedModel> WithLearner(std::unique_ptr<DefendedModel> inner,
                                           std::function<void(const QueryResult&)> learn,
                                           int true_class, int target) {
  if (!learn) return inner;
  return std::make_unique<LearnerStage>(std::move(inner), std::move(learn), true_class, target);
}

}  // namespace advbo::oracle
