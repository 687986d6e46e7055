// The black-box query oracle and threat model (docs/design.md, "The oracle contract").
// Every image evaluated by the model is one query; the oracle itself enforces the
// per-instance budget (a batch that would exceed it is refused whole) and the threat model:
// the norm of the eps-ball (L_inf by default, or L2), the query space (float or 8-bit) and
// what the attack is told (the model's scores, or only its top-1 label).
#pragma once

#include <Eigen/Dense>
#include <chrono>
#include <functional>
#include <limits>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "oracle/ball.h"
#include "oracle/classifier.h"
#include "oracle/defended_model.h"

namespace advbo::oracle {

/// What an attack is told of each query (docs/design.md, "Threat models").
///   kScores: the model's log-probabilities (score-based attacks; the default).
///   kLabel:  only the top-1 label (hard-label / decision-based attacks). Queries may lie
///            anywhere in [0, 1] (outside the eps-ball too); a query is a success only when
///            it is adversarial *and* inside the ball, and the oracle records the closest
///            adversarial query (best_distance()).
enum class Feedback { kScores, kLabel };

/// "scores" | "label".
const char* FeedbackName(Feedback f);
/// Parses "scores" | "label"; throws std::invalid_argument naming `option` and the value.
Feedback ParseFeedback(const std::string& value, const char* option = "--feedback");

/// Thrown when a batch would take the query count past the budget; nothing was evaluated.
class BudgetExhausted : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Result of one batch of queries.
struct QueryResult {
  /// [n] attack objective, > 0 on the success side. With label feedback: +1 for an
  /// adversarial label, -1 otherwise (nothing but the label).
  Eigen::VectorXd objective;
  std::vector<int> predicted;  ///< [n] argmax classes
  /// [n] argmax == target (targeted) / != true (untargeted); with label feedback also
  /// inside the eps-ball (an adversarial query outside it is `adversarial` only).
  std::vector<bool> success;
  /// [n, classes] log-softmax scores (for losses like C&W's); [n, 0] with label feedback.
  Eigen::MatrixXd log_probs;
  /// [n] the label alone is adversarial (argmax == target / != true), wherever the query
  /// lies. Equal to `success` with score feedback.
  std::vector<bool> adversarial;
  /// [n] refused by a stateful detector (a WithDetector stage with reject): a flat
  /// answer, never a success. Empty when nothing was refused.
  std::vector<bool> rejected;
};

/// Scores a batch for one goal from its log-probabilities [n, classes]: the objective of
/// QueryOracle (eq. 5.3 below), argmax classes and success flags; log_probs is kept.
/// target = -1 means untargeted. Used by the oracle and by a served model's per-instance
/// defense (serve/server.h), so both compute the defender's payoff identically.
QueryResult ScoreBatch(const Eigen::MatrixXd& log_probs, int true_class, int target);

class Referee;

/// What an attack sees of the black box for one clean image and one goal: its queries and
/// everything the threat model lets it know. Abstract: the Referee (below) answers, and an
/// attacker-side strategy (attacks/adaptive: EOT, AAA's score correction, confirmations,
/// OARS resampling) is a view that asks the oracle it wraps like any attack does and shows
/// the same face to the attack inside it (docs/design.md, "The oracle contract").
/// Every getter reads the referee's state, in this oracle's units (stride()).
///
/// Two levels: Evaluate answers images without a verdict (what EOT averages and a score
/// correction rewrites; views acting there must sit next to the referee), Ask answers and
/// judges them (what confirmations and resampling act on: query_level() views, which sit
/// above every evaluation-level one).
///
/// Objective (Kharkovskii 2020 thesis eq. 5.3, computed from log-softmax):
///   targeted:   y = log p_target - log sum_{c != target} p_c     (y > 0 => success)
///   untargeted: y = max_{c != true} log p_c - log p_true          (y > 0 <=> success)
class QueryOracle {
 public:
  virtual ~QueryOracle() = default;
  QueryOracle(const QueryOracle&) = delete;
  QueryOracle& operator=(const QueryOracle&) = delete;

  /// Clips each of the n images (n * C*H*W floats, modified in place) into the eps-ball
  /// around the clean image intersected with [0, 1], evaluates them in one batch and
  /// counts n queries. Throws BudgetExhausted (evaluating nothing) if n > remaining().
  QueryResult Query(float* images, int n) { return Ask(images, n, false); }
  /// Query, but with `provisional` a success answered is not recorded as the instance's
  /// (first_success_query() stays) until ClaimSuccess: what a confirming view asks. By
  /// default (the referee and the evaluation-level views) this oracle's own answers
  /// (Evaluate) judged by the referee (Referee::Judge at this oracle's stride());
  /// query-level views override it.
  virtual QueryResult Ask(float* images, int n, bool provisional);
  /// Records `image` [C*H*W] with its answer `log_probs` [classes] as the instance's
  /// success at the current query count, when none is recorded yet (a confirmed success).
  void ClaimSuccess(const float* image, const Eigen::RowVectorXd& log_probs);
  /// Answers without a verdict: projects the n images in place, evaluates them through the
  /// defended model (stride() counted model evaluations each) and returns their
  /// log-probabilities [n, classes] as this oracle presents them, with the refusals [n].
  /// Nothing is judged or recorded. Throws BudgetExhausted (evaluating nothing) if
  /// n > remaining().
  virtual DefendedAnswer Evaluate(float* images, int n) = 0;
  /// Model evaluations one query of this oracle costs: 1 for the referee, the product of
  /// the EOT samples of the views below.
  virtual long stride() const = 0;
  /// Whether this view acts on whole queries (confirm, oars): no evaluation-level view may
  /// wrap it.
  virtual bool query_level() const { return false; }

  /// Projects n images in place onto the threat model (what Query does first): clip into the
  /// eps-ball intersected with [0, 1] and, in 8-bit mode, round onto the 1/255 grid inside
  /// it (a pixel left on its clean grid value keeps the clean float bit for bit). Non-finite
  /// pixels become the clean pixel. L2: the perturbation is clipped to [0, 1] and scaled
  /// onto the ball; 8-bit rounding goes to the nearest grid value, except that pixels whose
  /// rounding lengthened the perturbation are rounded towards the clean pixel (largest
  /// lengthening first) until the image is inside the ball again. Label feedback: queries
  /// are only clipped to [0, 1] (and rounded in 8-bit mode), not into the ball.
  void Project(float* images, int n) const;
  /// Project as for score feedback: into the ball whatever the feedback (the image a
  /// label-feedback run reports as its answer at eps).
  void ProjectToBall(float* images, int n) const;
  /// The ball's norm, and what the attack is told (scores or the label).
  Norm norm() const;
  /// What a query returns: scores or the label.
  Feedback feedback_type() const;
  /// Whether the run minimises the distance (Referee::set_min_distance): no query is ever
  /// answered as a success, so the attack spends its budget.
  bool min_distance() const;
  /// Distance of an image [C*H*W] from the clean one in the ball's norm.
  double DistanceToClean(const float* image) const;
  /// Label feedback: the distance of the closest adversarial query so far (+inf before
  /// one); its image is best_image(). Score feedback: +inf.
  double best_distance() const;
  /// Label feedback: (query index, best_distance()) each time the closest adversarial query
  /// improved -- the distance-vs-queries curve of a hard-label run. Empty with scores.
  const std::vector<std::pair<long, double>>& distance_trace() const;
  /// The query space (float or 8-bit).
  PixelSpace pixel_space() const;
  /// The largest per-pixel perturbation a query can carry: epsilon() in float mode,
  /// GridRadius(epsilon()) in 8-bit mode. Attacks that saturate perturbations (Square's
  /// +-eps stripes, BOS^2's saturation) scale by this radius, so an 8-bit query is not
  /// rounded past the ball and then pulled back.
  double query_radius() const;
  /// Whether the rescale-compat threat model is on (Referee::set_rescale_compat).
  bool rescale_compat() const;
  /// Queries made and the budget, in this oracle's units (referee queries / stride(): EOT
  /// queries behind EOT).
  long queries() const;
  /// The attack's query budget.
  long budget() const;
  /// Queries left in the budget.
  long remaining() const { return budget() - queries(); }
  /// 1-based index of the first successful query, or -1.
  long first_success_query() const;
  /// Whether a query has met the goal.
  bool succeeded() const { return first_success_query() > 0; }
  /// Best (largest) objective seen, -inf before any query, and its (clipped) image. With
  /// label feedback: minus the distance of the closest adversarial query (-inf before one).
  double best_objective() const;
  /// The best image so far (the successful one after a success), C*H*W in [0, 1].
  const std::vector<float>& best_image() const;
  /// The first successful image (empty if none).
  const std::vector<float>& success_image() const;
  /// The model's answers (log-softmax scores [classes]) to best_image() and
  /// success_image() when they were queried (empty before, and always with label feedback):
  /// what a run without setup queries reports for the saved image instead of scoring it
  /// again.
  const Eigen::RowVectorXd& best_log_probs() const;
  /// Log-probabilities of the successful query (empty before a success).
  const Eigen::RowVectorXd& success_log_probs() const;
  /// The clean image, C*H*W in [0, 1].
  const std::vector<float>& clean() const;
  /// A starting image for a targeted hard-label attack (C*H*W in [0, 1]): an image the model
  /// puts in the target class, which the attack walks towards the clean one (HopSkipJump
  /// Sec. 4, Sign-OPT Sec. 4); empty when none was given (Referee::set_start_image).
  const std::vector<float>& start_image() const;
  /// The ball's radius as enforced (pixel units).
  double epsilon() const;
  /// The image's true class.
  int true_class() const;
  /// Target class (-1 untargeted).
  int target() const;
  /// The model (behind its defense).
  const Classifier& model() const;
  /// Wall seconds of the model's forward passes for this instance (Referee::model_seconds:
  /// its own share, without waiting for other lockstep lanes).
  double model_seconds() const;
  /// Wall seconds its model calls waited for other lockstep lanes or worker groups.
  double wait_seconds() const;
  /// The referee that answers (this object for the Referee itself).
  Referee& referee() const { return *referee_; }

 protected:
  /// A view onto `referee` (the Referee passes itself).
  explicit QueryOracle(Referee* referee) : referee_(referee) {}

 private:
  Referee* referee_;
};

/// The referee of one attack instance (docs/design.md, "The oracle contract"): holds the
/// budget, the ball, the 8-bit grid, the counting and the records, and sends every
/// projected query through the defended model (oracle/defended_model.h). Attacks get it
/// as a QueryOracle.
class Referee final : public QueryOracle {
 public:
  /// @param model      the classifier; must outlive the referee.
  /// @param clean      C*H*W pixels in [0, 1] of the clean image.
  /// @param true_class its label, 0 <= true_class < classes.
  /// @param target     target class for a targeted attack (!= true_class), or -1 for
  ///                   an untargeted attack.
  /// @param epsilon    radius of the ball (pixel units, [0, 1] scale), >= 0.
  /// @param budget     maximum number of queries (images evaluated), >= 1.
  /// Throws std::invalid_argument on bad arguments.
  Referee(const Classifier& model, const float* clean, int true_class, int target, double epsilon,
          long budget);
  /// As above with the whole ball: `ball` (norm, radius, query space, rescaling) around
  /// `clean`, built once (Ball::Make; its errors are std::invalid_argument).
  Referee(const Classifier& model, const float* clean, int true_class, int target,
          const BallShape& ball, long budget);
  /// With a ball built by the caller (Ball::Make around the clean image, which is the ball's
  /// clean(); its size must be the model's input size). Throws std::invalid_argument on bad
  /// arguments or a null ball.
  Referee(const Classifier& model, std::unique_ptr<Ball> ball, int true_class, int target,
          long budget);

  DefendedAnswer Evaluate(float* images, int n) override;
  long stride() const override { return 1; }
  /// The verdict on n evaluated images [n, C*H*W] (as projected and sent) given their
  /// answers (`answer.log_probs` [n, classes], refusals): scores them for the goal, records
  /// the best and first successful image (unless `provisional`) at query index
  /// (queries before the batch) + (b + 1) * stride for image b -- the batch's evaluations
  /// are already counted -- and hides the scores under label feedback. What Ask and an
  /// evaluation-level view's Ask return.
  QueryResult Judge(const float* images, int n, const DefendedAnswer& answer, long stride,
                    bool provisional);
  /// Records `image` with `log_probs` as the instance's success (a wrapper confirmed it).
  void ClaimSuccess(const float* image, const Eigen::RowVectorXd& log_probs);
  /// Projects n images in place onto the query set: the eps-ball and the pixel box (and the 8-bit
  /// grid in 8-bit mode).
  void Project(float* images, int n) const;
  /// Projects n images in place onto the eps-ball and the pixel box only (no grid).
  void ProjectToBall(float* images, int n) const;

  /// Switches the ball's norm (before the first query; default kLinf). kL2 is refused with
  /// the rescale-compat threat model. Throws std::invalid_argument / std::logic_error.
  void set_norm(Norm n);
  /// The ball's norm.
  Norm norm() const { return shape_.norm; }
  /// Switches what the attack is told (before the first query; default kScores). Label
  /// feedback is refused with rescale compat (std::invalid_argument), and the attacker-side
  /// views (EOT, confirmations, resampling) refuse it: attacks on randomised defenses are
  /// score-based here. Throws std::logic_error after a query.
  void set_feedback_type(Feedback f);
  /// What a query returns: scores or the label.
  Feedback feedback_type() const { return feedback_type_; }
  /// The distance goal of hard-label runs (`--goal min-distance`): no query is
  /// answered (nor recorded) as a success, so the attack spends its whole budget shrinking
  /// its closest adversarial query (best_distance(), distance_trace()); whether and when it
  /// came within eps is read off the trace afterwards (attacks::FinishResult). Label feedback
  /// only: set after set_feedback_type(kLabel) and before the first query. Throws
  /// std::invalid_argument with score feedback, std::logic_error after a query.
  void set_min_distance(bool on);
  /// Whether the run spends the whole budget shrinking its closest adversarial query (--goal
  /// min-distance).
  bool min_distance() const { return min_distance_; }
  /// Distance of an image [C*H*W] from the clean one in the ball's norm.
  double DistanceToClean(const float* image) const;
  /// Label feedback: the distance of the closest adversarial query so far (+inf before
  /// one); its image is best_image(). Score feedback: +inf.
  double best_distance() const { return best_distance_; }
  /// Label feedback: (query index, best_distance()) each time the closest adversarial query
  /// improved -- the distance-vs-queries curve of a hard-label run. Empty with scores.
  const std::vector<std::pair<long, double>>& distance_trace() const { return distance_trace_; }

  /// Switches the query space (before the first query). k8bit needs every clean pixel on the
  /// 1/255 grid (OnPixelGrid) and eps >= 1/255 (one grid step); throws std::invalid_argument
  /// otherwise, naming the problem. Default kFloat, whose queries are those of earlier
  /// versions bit for bit.
  void set_pixel_space(PixelSpace p);
  /// Where queries live: the 8-bit grid or floats.
  PixelSpace pixel_space() const { return shape_.pixels; }
  /// The largest per-pixel perturbation a query can carry: epsilon() in float mode,
  /// GridRadius(epsilon()) in 8-bit mode. Attacks that saturate perturbations (Square's
  /// +-eps stripes, BOS^2's saturation) scale by this radius, so an 8-bit query is not
  /// rounded past the ball and then pulled back.
  double query_radius() const { return shape_.QueryRadius(); }

  /// Compatibility with the BayesOpt-attack reference code (docs/design.md "Clip, don't
  /// rescale"): when on, a query x becomes (x0 + clip(x - x0, -eps, eps) + eps) / (1 + 2 eps)
  /// instead of being clipped. This is a *different, looser* threat model: the evaluated
  /// image can be up to 2 eps / (1 + 2 eps) from the clean one (0.375 for eps = 0.3).
  /// Off by default; only for reproducing published numbers.
  /// Before the first query; refused (std::invalid_argument) with an L2 ball.
  void set_rescale_compat(bool on);
  /// BayesOpt's rescaling instead of clipping (--rescale-compat).
  bool rescale_compat() const { return shape_.rescaled; }
  /// The ball queries are projected onto (norm, radius, query space, box).
  const Ball& ball() const { return *ball_; }

  /// Attack queries made so far.
  long queries() const { return queries_; }
  /// The attack's query budget.
  long budget() const { return budget_; }
  /// Queries left in the budget.
  long remaining() const { return budget_ - queries_; }
  /// 1-based index of the first successful query, or -1.
  long first_success_query() const { return first_success_; }
  /// Whether a query has met the goal.
  bool succeeded() const { return first_success_ > 0; }
  /// Best (largest) objective seen, -inf before any query, and its (clipped) image. With
  /// label feedback: minus the distance of the closest adversarial query (-inf before one).
  double best_objective() const { return best_objective_; }
  /// The best image so far (the successful one after a success), C*H*W in [0, 1].
  const std::vector<float>& best_image() const { return best_image_; }
  /// The first successful image (empty if none).
  const std::vector<float>& success_image() const { return success_image_; }
  /// The model's answers (log-softmax scores [classes]) to best_image() and
  /// success_image() when they were queried (empty before, and always with label feedback):
  /// what a run without setup queries reports for the saved image instead of scoring it
  /// again.
  const Eigen::RowVectorXd& best_log_probs() const { return best_log_probs_; }
  /// Log-probabilities of the successful query (empty before a success).
  const Eigen::RowVectorXd& success_log_probs() const { return success_log_probs_; }
  /// The clean image, C*H*W in [0, 1].
  const std::vector<float>& clean() const { return clean_; }
  /// Gives targeted hard-label attacks their start (QueryOracle::start_image): C*H*W pixels
  /// in [0, 1]. Throws std::invalid_argument on a size mismatch or a non-finite pixel.
  void set_start_image(std::vector<float> image);
  /// Targeted hard-label start image (empty: none), C*H*W in [0, 1].
  const std::vector<float>& start_image() const { return start_image_; }
  /// The ball's radius as enforced (pixel units).
  double epsilon() const { return shape_.radius; }
  /// The image's true class.
  int true_class() const { return true_class_; }
  /// Target class (-1 untargeted).
  int target() const { return target_; }
  /// The model (behind its defense).
  const Classifier& model() const { return model_; }
  /// Wall seconds of the model's forward passes for this instance's queries: its own share
  /// (under lockstep, its images' share of each round's batched forward passes), without the
  /// waiting of wait_seconds().
  double model_seconds() const { return model_seconds_; }
  /// Wall seconds this instance's model calls waited for other lockstep lanes or worker
  /// groups (QueryTiming); 0 outside lockstep.
  double wait_seconds() const { return timing_.wait_seconds; }
  /// The defense in front of the classifier (oracle/defended_model.h): every query goes
  /// through `defense`'s stages (input transforms on a copy, the classifier, output
  /// post-processing, a stateful detector, a learning defender), so the attack only ever
  /// sees the defended answers while its own images, best_image() and success_image() stay
  /// as sent. Set before the first query; `defense` must end in this oracle's classifier.
  /// Throws std::logic_error after a query, std::invalid_argument for a null defense or
  /// another classifier. Default: Undefended(model).
  void set_defense(std::unique_ptr<DefendedModel> defense);
  /// The defended model the queries go through.
  const DefendedModel& defense() const { return *defense_; }
  /// Model evaluations made so far and the budget (model evaluations, as given).
  long model_queries() const { return queries_; }
  /// The model-query budget of the instance (wrappers may spend several per attack query).
  long model_budget() const { return budget_; }
  /// What the defense's stateful detector has seen (DetectorCounts: monitored, detections,
  /// first_detection as a 1-based model-query index); zeros without a detector.
  DetectorCounts detector() const { return defense_->detector(); }
  /// Who is asking, passed with every batch to the classifier (a served model keeps the
  /// instance's defense by it; local models ignore it). Empty session = none. Its purpose
  /// (kAttack by default) is what the classifier counts the batch as: QueryPurpose::kVerify
  /// for a re-query of a reported image.
  void set_context(QueryContext context) { context_ = std::move(context); }
  /// The query's context (instance seed, session, purpose).
  const QueryContext& context() const { return context_; }
  /// Optional observer of every evaluated batch: called once the batch is counted
  /// (queries() includes it) with its defended answers scored for the goal (ScoreBatch),
  /// before any verdict, correction or hiding -- behind EOT every model evaluation, [n * k]
  /// rows (each image's k samples in a row). For records and game studies; a learning
  /// defender learns through its own stage (WithLearner).
  void set_batch_observer(std::function<void(const QueryResult&)> f) {
    batch_observer_ = std::move(f);
  }
  /// Optional observer called with every image actually evaluated (after clipping) and
  /// its 1-based model-evaluation index (used by tests to check the threat model
  /// independently).
  void set_observer(std::function<void(const float*, long)> f) { observer_ = std::move(f); }

 private:
  const Classifier& model_;
  std::vector<float> clean_, start_image_;
  int true_class_, target_;
  BallShape shape_;
  std::unique_ptr<Ball> ball_;
  long budget_, queries_ = 0, first_success_ = -1;
  double best_objective_ = -std::numeric_limits<double>::infinity();
  std::vector<float> best_image_, success_image_;
  Eigen::RowVectorXd best_log_probs_, success_log_probs_;
  double model_seconds_ = 0.0;
  QueryTiming timing_;  // where the model calls' waiting is added (context_.timing)
  std::function<void(const float*, long)> observer_;
  std::unique_ptr<DefendedModel> defense_;
  std::function<void(const QueryResult&)> batch_observer_;
  QueryContext context_;
  Feedback feedback_type_ = Feedback::kScores;
  bool min_distance_ = false;
  double best_distance_ = std::numeric_limits<double>::infinity();
  std::vector<std::pair<long, double>> distance_trace_;
  // Rebuilds the ball with `shape` (before the first query; `what` names the setting).
  void Reshape(const BallShape& shape, const char* what);
  // Updates the best / first-success tracking with image b of a batch (image x, query index
  // `index`; a success is recorded only when `record`). Label feedback: success only inside
  // the ball, best = the closest adversarial query, the objective replaced by +-1 (the
  // caller hides the scores). Scores: best = highest objective.
  void TrackQuery(const float* x, int b, long index, bool record, QueryResult* r);
};

}  // namespace advbo::oracle
