// An image classifier behind a narrow, LibTorch-free interface. The scores come from a
// pluggable back end (ScoreBackend): a local TorchScript file (LibTorch stays in
// torchscript_backend.cc), a served model over HTTP (http_backend.h, `advbo serve`), or a
// Python callable (src/python/core_module.cc). The Classifier does everything else the same way
// for every back end: the optional input normalisation, probing the input shape, output
// auto-detection (logits / probabilities) and the log-softmax.
//
// Input contract (docs/design.md, the oracle contract): float32 NCHW with pixels in [0, 1].
// A model that expects normalised input gets a Normalization, which is part of the model:
// the attack and the oracle still see pixels in [0, 1]. Output: logits or probabilities
// [N, classes].
#pragma once

#include <Eigen/Dense>
#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace advbo::oracle {

class Lockstep;  // oracle/lockstep.h

/// A missing, unreadable or unusable model (or an unreachable / misbehaving served model);
/// the message names the file or URL and the problem.
class ModelError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A served model that could not be reached or answered with a server error after all
/// retries (connection refused, timeout, 5xx). Nothing was evaluated.
class TransportError : public ModelError {
 public:
  using ModelError::ModelError;
};

/// A model that accepted the input but returned output of the wrong form (not a 2-D
/// [N, classes] array, a wrong row count, a malformed served reply).
class OutputError : public ModelError {
 public:
  using ModelError::ModelError;
};

/// What the model's output rows are.
enum class OutputKind { kAuto, kLogits, kProbabilities };

/// Parses "auto" | "logits" | "probs"; throws std::invalid_argument otherwise.
OutputKind ParseOutputKind(const std::string& s);

/// Per-channel input normalisation x' = (x - mean[c]) / std[c], applied to a copy of every
/// batch before the back end sees it (torchvision's Normalize). One value applies to every
/// channel; otherwise one value per channel.
struct Normalization {
  /// Per-channel mean and standard deviation (one value or one per channel).
  ///@{
  std::vector<float> mean, std;
  ///@}
  /// "MEAN[,MEAN,...]:STD[,STD,...]", e.g. "0.1307:0.3081" or
  /// "0.4914,0.4822,0.4465:0.2470,0.2435,0.2616". Throws std::invalid_argument on a
  /// malformed spec, non-finite values, std <= 0, or mean/std of different lengths.
  static Normalization Parse(const std::string& spec);
  /// The canonical spec (round-trips through Parse).
  std::string Spec() const;
};

/// Why the model scores an image (docs/design.md, "Query accounting"). Every image a
/// Classifier scores is counted under exactly one purpose, so a run can list all of them:
///   kAttack        an attack's query (QueryOracle: counted against the per-instance budget)
///   kShapeProbe    the two gray images Load/FromBackend scores to check the input shape,
///                  read the class count and detect logits vs probabilities
///   kSelection     clean images classified to pick the correctly classified ones
///   kCleanAccuracy clean images scored for the (defended) clean accuracy
///   kVerify        the re-query of a reported image saved as 8-bit (quantized_success)
///   kOther         anything without a context (tests, the latent game's own rounds)
enum class QueryPurpose { kAttack, kShapeProbe, kSelection, kCleanAccuracy, kVerify, kOther };
inline constexpr int kNumQueryPurposes = 6;

/// "attack" | "shape_probe" | "selection" | "clean_accuracy" | "verify" | "other".
const char* QueryPurposeName(QueryPurpose p);
/// The purpose QueryPurposeName names; throws std::invalid_argument naming the text.
QueryPurpose ParseQueryPurpose(const std::string& name);

/// Where a query's wall time went besides the model's own forward pass, for callers whose
/// model calls wait for others (filled by oracle::Lockstep; Referee::Evaluate reads it).
struct QueryTiming {
  /// Wall seconds spent waiting, not scoring: for the other lanes of a lockstep round to ask,
  /// for their images' share of the round's forward passes, and for another worker group's
  /// forward pass on a back end that is not thread-safe. >= 0, only ever added to.
  double wait_seconds = 0;
};

/// Who is querying: one attack instance of the oracle (Referee::set_context). A served
/// model uses it to keep a per-instance defense (`advbo serve --defense`): a fresh defender
/// per session, seeded like a local --defense, paid with the instance's attack objective.
/// Local back ends ignore it.
struct QueryContext {
  std::string session;        ///< unique per oracle; empty = no session
  uint64_t defense_seed = 0;  ///< seed of the instance's defense (InstanceDefenseSeed)
  int true_class = -1;        ///< the instance's label
  int target = -1;            ///< its target class, -1 = untargeted
  QueryPurpose purpose = QueryPurpose::kAttack;  ///< what the scored images are for
  /// Where waiting time is added (QueryTiming), or null: nothing is told. Not sent to a
  /// served model; the Referee points it at its own account for every batch.
  QueryTiming* timing = nullptr;
};

/// A served model's defense refused images (a stateful detector in front of it, reject
/// mode) where the caller cannot take a refusal (Classifier::LogProbabilities / RawScores;
/// an attack's queries go through Classifier::Answer, which hands refusals on). The images
/// were seen by the server's detector.
class RefusedError : public ModelError {
 public:
  using ModelError::ModelError;
};

/// A back end's answer to n images: raw scores and what a defense in front of the model (a
/// served one, `advbo serve --defense`) said of each image. A refused image has no score:
/// its row holds zeros and must not be read.
struct BackendAnswer {
  Eigen::MatrixXd scores;      ///< [n, classes] raw output (logits or probabilities)
  std::vector<bool> detected;  ///< [n] flagged by a stateful detector; empty = none watches
  std::vector<bool> refused;   ///< [n] refused (no score); empty = nothing can be refused
};

/// Where scores come from. Implementations report failures as ModelError naming their
/// source; a failed call has evaluated nothing the caller can count.
class ScoreBackend {
 public:
  virtual ~ScoreBackend() = default;
  /// Scores with the defense's verdicts (BackendAnswer). The default is Scores() with no
  /// verdicts: only a served model (http_backend.h) has a defense of its own to report.
  virtual BackendAnswer Answer(const float* images, int n, int c, int h, int w,
                               const QueryContext* context) const {
    return {Scores(images, n, c, h, w, context), {}, {}};
  }
  /// Raw model output [n, classes] (logits or probabilities, as the model gives them) for
  /// n images [n, c, h, w] stored contiguously (already normalised if the Classifier has a
  /// Normalization). `context` may be null. Throws ModelError (including when the model
  /// rejects the shape: the Classifier's shape probe relies on it).
  virtual Eigen::MatrixXd Scores(const float* images, int n, int c, int h, int w,
                                 const QueryContext* context) const = 0;
  /// The file path or URL in records and messages.
  virtual std::string name() const = 0;
  /// Whether Scores may be called from several threads at once.
  virtual bool thread_safe() const { return true; }
  /// The inference graph that answers (records' `model_graph`): "frozen" (a TorchScript
  /// module frozen and optimised for inference), "plain" (as loaded: asked for, or the
  /// fallback when freezing failed; then graph_note() says why) or "served" (an HTTP model).
  virtual std::string graph() const { return "served"; }
  /// Why the graph is not the one asked for ("" when it is), said once by the caller.
  virtual std::string graph_note() const { return ""; }
};

/// Which inference graph a TorchScript model runs.
///   kFrozen  torch::jit::freeze + optimize_for_inference (BN folded into convolutions,
///            constants inlined, oneDNN where it pays): the same logits within ~1e-6 and the
///            same argmax, in roughly half the time (docs/results/performance.md). Falls back
///            to the plain module, saying so once, when the module cannot be frozen (mutable
///            state, unsupported ops).
///   kPlain   the module as loaded (eval mode): bit for bit what earlier versions scored.
enum class ModelGraph { kFrozen, kPlain };

/// "frozen" | "plain".
const char* ModelGraphName(ModelGraph g);
/// Parses "frozen" | "plain"; throws std::invalid_argument "<option> must be frozen or
/// plain, got '<text>'" otherwise.
ModelGraph ParseModelGraph(const std::string& text, const char* option = "--model-graph");

/// Longest reply an HTTP back end reads (64 MiB: 1,024 images x 1,000 classes of JSON scores
/// fit with room to spare); a longer one is a ModelError, read no further.
inline constexpr size_t kMaxHttpReplyBytes = size_t{64} << 20;

/// Options of an HTTP back end (a --model http://host:port/predict URL).
struct HttpOptions {
  double timeout_seconds = 30;  ///< connect / read / write timeout of one request, > 0
  int retries = 3;              ///< extra attempts after a transport error, a 5xx or a 429
                                ///< (backoff 0.1 s, 0.2 s, 0.4 s, ...), 0..100
  /// Throws std::invalid_argument naming --http-timeout / --http-retries when out of range.
  void Validate() const;
};

/// Loading options.
struct ClassifierOptions {
  OutputKind output = OutputKind::kAuto;  ///< auto: probabilities iff a probe's rows are
                                          ///< non-negative and sum to 1 (within 1e-3)
  /// Expected input shape; 0 = infer by probing.
  ///@{
  int channels = 0, height = 0, width = 0;  ///< expected input shape; 0 = infer by probing
  ///@}
  ///< [1,28,28], [3,32,32], [3,224,224]
  int threads = 0;  ///< LibTorch intra-op threads (0 = its default); OpenBLAS, when
                    ///< LibTorch runs on it, always gets one thread (reproducible sums)
  std::optional<Normalization> normalize;  ///< input normalisation (part of the model)
  HttpOptions http;                        ///< used when the model is a URL
  /// Score the two-image probe batch on loading (default). false = no setup query at all:
  /// then the shape (channels/height/width) and `output` (logits or probs, not auto) must be
  /// given; `classes` may be, else the first answer sets it; a model that disagrees with a
  /// given count fails at its first query.
  bool probe = true;
  int classes = 0;  ///< number of classes when probe is false (0 = taken from the first
                    ///< answer; else >= 2); ignored otherwise
  ModelGraph graph = ModelGraph::kFrozen;  ///< TorchScript inference graph; ignored for URLs
  /// When set, a TorchScript model's back end scores in these lanes' rounds
  /// (MakeLockstepBackend); ignored for URLs (each request is one session's).
  std::shared_ptr<Lockstep> lockstep;
  /// Throws std::invalid_argument when a shape entry or `threads` is negative, the shape is
  /// given in part, `http` is out of range, or probe is false without the shape, with
  /// output auto, or with classes 1 or negative.
  void Validate() const;
};

/// The BLAS that LibTorch's linear and convolution layers run on (Debian picks it through
/// the libblas.so.3 alternative): "OpenBLAS <version/config>" or "reference BLAS". Model
/// scores differ between the two in the last float bits, so benchmark records carry it.
std::string BlasLibrary();

/// LibTorch's intra-op thread count now (at::get_num_threads), >= 1.
int InferenceThreads();
/// Sets LibTorch's intra-op thread count (at::set_num_threads) for every TorchScript model of
/// the process. Throws std::invalid_argument unless threads >= 1.
void SetInferenceThreads(int threads);

/// Whether `model` names a served model ("http://..."; "https://" is refused by Load).
bool IsModelUrl(const std::string& model);

/// The TorchScript back end of `path` (torchscript_backend.cc), running `graph` under
/// inference mode (no autograd records). Throws ModelError naming the file if it is missing
/// or not a loadable TorchScript module; a module that cannot be frozen runs plain
/// (ScoreBackend::graph_note() says why).
std::unique_ptr<ScoreBackend> MakeTorchScriptBackend(const std::string& path, int threads,
                                                     ModelGraph graph = ModelGraph::kFrozen);

/// A loaded, validated classifier.
class Classifier {
 public:
  /// Loads a TorchScript file, or connects to a served model when `model` is an
  /// http:// URL (`advbo serve`'s POST endpoint), and validates it (FromBackend). Throws
  /// ModelError naming the file or URL; std::invalid_argument on bad options.
  static std::unique_ptr<Classifier> Load(const std::string& model,
                                          const ClassifierOptions& options = {});
  /// Validates `backend` with a probe batch of two images of 0.5 (counted as kShapeProbe;
  /// with options.probe false nothing is scored and the given shape, output kind and
  /// class count are taken as they are: std::invalid_argument if one is missing): throws ModelError
  /// naming the back end if it rejects the expected input shape (or none of the probe shapes fits),
  /// does not return [N, C] with C >= 2, returns non-finite scores, or is said to return
  /// probabilities (OutputKind::kProbabilities) but returns rows that are not (a negative
  /// score, or a row sum off 1 by more than 1e-3). Normalisation must have 1 or
  /// `channels` values (std::invalid_argument otherwise).
  static std::unique_ptr<Classifier> FromBackend(std::unique_ptr<ScoreBackend> backend,
                                                 const ClassifierOptions& options = {});
  ~Classifier();

  /// Log-probabilities [N, classes] (log-softmax of logits, or log of renormalised
  /// probabilities) for n images stored contiguously as n * C*H*W floats in [0, 1].
  /// Throws ModelError if the model fails, changes its output shape or produces
  /// non-finite scores, and RefusedError when a served defense refused an image (nothing
  /// is then returned for any of them; Answer() hands refusals on instead).
  Eigen::MatrixXd LogProbabilities(const float* images, int n,
                                   const QueryContext* context = nullptr) const;
  /// The model's raw output [n, classes] for n images in [0, 1] (normalised first when a
  /// Normalization is set); checked for shape and finiteness. Throws ModelError, and
  /// RefusedError when a served defense refused an image.
  Eigen::MatrixXd RawScores(const float* images, int n,
                            const QueryContext* context = nullptr) const;
  /// LogProbabilities of already computed raw scores [n, classes]. Throws ModelError when
  /// the output is taken as probabilities but a score is negative (below -1e-6).
  Eigen::MatrixXd LogProbabilitiesOf(const Eigen::MatrixXd& raw) const;
  /// A defended answer (docs/design.md, "Served models"): log-probabilities [n, classes]
  /// as LogProbabilities, and what a served model's defense said of each image. A refused
  /// image's row is flat (log 1/classes for every class: no information, never a success),
  /// as a local --defense's detector answers it.
  struct Answered {
    Eigen::MatrixXd log_probs;   ///< [n, classes]
    std::vector<bool> detected;  ///< [n] flagged by the served detector; empty = none watches
    std::vector<bool> refused;   ///< [n] refused by it; empty = nothing was refusable
  };
  /// Answers n images as LogProbabilities does, but hands a served defense's verdicts to the
  /// caller instead of refusing them. Refused images count as scored (the server saw them).
  /// Throws ModelError as LogProbabilities.
  Answered Answer(const float* images, int n, const QueryContext* context = nullptr) const;

  /// Input channels C.
  int channels() const { return c_; }
  /// Input height H in pixels.
  int height() const { return h_; }
  /// Input width W in pixels.
  int width() const { return w_; }
  /// Pixels per image, C*H*W.
  int input_size() const { return c_ * h_ * w_; }
  /// The number of classes; 0 until the first answer when loaded without a probe and
  /// without a given count (ClassifierOptions::probe false, classes 0).
  int num_classes() const { return classes_.load(std::memory_order_relaxed); }
  /// Whether the output was taken as logits (true) or probabilities (false).
  bool outputs_logits() const { return logits_; }
  /// The output format as detected or given, for banners and records: "logits",
  /// "log_probabilities" (auto-detected: every probe row's exp sums to 1; used as logits,
  /// which gives the same log-softmax) or "probabilities".
  const std::string& output_format() const { return output_format_; }
  /// Answers (rows) so far, over all threads, of a probability output holding an exact zero:
  /// its log is clipped at log(1e-300), so losses built on it saturate there (a model that
  /// returns logits avoids this). Always 0 for logits.
  long zero_probability_rows() const { return zero_rows_.load(std::memory_order_relaxed); }
  /// The model file or URL.
  const std::string& path() const { return path_; }
  /// The inference graph that answers: ScoreBackend::graph() ("frozen", "plain", "served").
  std::string graph() const { return backend_->graph(); }
  /// Why the graph is not the one asked for ("" when it is): ScoreBackend::graph_note().
  std::string graph_note() const { return backend_->graph_note(); }
  /// The input normalisation, if any.
  const std::optional<Normalization>& normalization() const { return normalize_; }
  /// Whether LogProbabilities may be called from several threads at once.
  bool thread_safe() const { return backend_->thread_safe(); }
  /// Images scored so far for `purpose` (successful calls only; a call that threw has
  /// evaluated nothing countable), over all threads. A call without a context counts as
  /// kOther.
  long scored(QueryPurpose purpose) const {
    return scored_[static_cast<int>(purpose)].load(std::memory_order_relaxed);
  }

 private:
  Classifier() = default;
  // Normalises a copy (if set) and calls the back end; no checks.
  BackendAnswer Forward(const float* images, int n, const QueryContext* context) const;
  // The back end's answer checked for shape and finiteness (refused rows aside), counted.
  BackendAnswer CheckedAnswer(const float* images, int n, const QueryContext* context) const;
  std::unique_ptr<ScoreBackend> backend_;
  std::optional<Normalization> normalize_;
  std::string path_;
  int c_ = 0, h_ = 0, w_ = 0;
  mutable std::atomic<int> classes_{0};  // set once: by the probe, the options or the first answer
  bool logits_ = true;
  std::string output_format_ = "logits";
  mutable std::atomic<long> zero_rows_{0};
  mutable std::array<std::atomic<long>, kNumQueryPurposes> scored_{};
};

}  // namespace advbo::oracle
