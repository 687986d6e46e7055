#include "oracle/classifier.h"

#include <array>
#include <cmath>
#include <limits>
#include <sstream>
#include <vector>

#include "oracle/http_backend.h"
#include "oracle/lockstep.h"

namespace advbo::oracle {
namespace {

std::vector<float> ParseFloatList(const std::string& s, const std::string& spec) {
  std::vector<float> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    size_t used = 0;
    double v;
    try {
      v = std::stod(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (item.empty() || used != item.size() || !std::isfinite(v))
      throw std::invalid_argument("--normalize '" + spec + "': '" + item +
                                  "' is not a finite number");
    out.push_back(static_cast<float>(v));
  }
  if (s.empty() || s.back() == ',')
    throw std::invalid_argument("--normalize '" + spec + "': empty value");
  return out;
}

}  // namespace

const char* QueryPurposeName(QueryPurpose p) {
  switch (p) {
    case QueryPurpose::kAttack:
      return "attack";
    case QueryPurpose::kShapeProbe:
      return "shape_probe";
    case QueryPurpose::kSelection:
      return "selection";
    case QueryPurpose::kCleanAccuracy:
      return "clean_accuracy";
    case QueryPurpose::kVerify:
      return "verify";
    case QueryPurpose::kOther:
      return "other";
  }
  return "other";
}

OutputKind ParseOutputKind(const std::string& s) {
  if (s == "auto") return OutputKind::kAuto;
  if (s == "logits") return OutputKind::kLogits;
  if (s == "probs" || s == "probabilities") return OutputKind::kProbabilities;
  throw std::invalid_argument("unknown output kind '" + s + "' (use auto, logits or probs)");
}

Normalization Normalization::Parse(const std::string& spec) {
  const auto colon = spec.find(':');
  if (colon == std::string::npos || spec.find(':', colon + 1) != std::string::npos)
    throw std::invalid_argument("--normalize '" + spec +
                                "': expected MEAN[,MEAN,MEAN]:STD[,STD,STD], e.g. "
                                "0.1307:0.3081");
  Normalization n;
  n.mean = ParseFloatList(spec.substr(0, colon), spec);
  n.std = ParseFloatList(spec.substr(colon + 1), spec);
  if (n.mean.size() != n.std.size())
    throw std::invalid_argument("--normalize '" + spec + "': " + std::to_string(n.mean.size()) +
                                " mean(s) but " + std::to_string(n.std.size()) + " std(s)");
  for (float s : n.std)
    if (!(s > 0)) throw std::invalid_argument("--normalize '" + spec + "': std must be > 0");
  return n;
}

namespace {
// The shortest decimal that reads back as the same float ("0.1307", not "0.130700007").
std::string ShortFloat(float v) {
  for (int p = 1; p <= 9; ++p) {
    std::ostringstream o;
    o.precision(p);
    o << v;
    if (std::stof(o.str()) == v) return o.str();
  }
  return std::to_string(v);
}
}  // namespace

std::string Normalization::Spec() const {
  std::string s;
  for (size_t i = 0; i < mean.size(); ++i) s += (i ? "," : "") + ShortFloat(mean[i]);
  s += ':';
  for (size_t i = 0; i < std.size(); ++i) s += (i ? "," : "") + ShortFloat(std[i]);
  return s;
}

bool IsModelUrl(const std::string& model) {
  return model.rfind("http://", 0) == 0 || model.rfind("https://", 0) == 0;
}

Classifier::~Classifier() = default;

void ClassifierOptions::Validate() const {
  if (channels < 0 || height < 0 || width < 0)
    throw std::invalid_argument("the input shape must not be negative");
  const int given = (channels > 0) + (height > 0) + (width > 0);
  if (given != 0 && given != 3)
    throw std::invalid_argument("the input shape needs all of channels, height and width");
  if (threads < 0) throw std::invalid_argument("the number of LibTorch threads must be >= 0");
  http.Validate();
  if (probe) return;
  if (given == 0) throw std::invalid_argument("no probe query: the input shape must be given");
  if (output == OutputKind::kAuto)
    throw std::invalid_argument(
        "no probe query: the output kind must be given (logits or probs; auto detection "
        "scores two probe images)");
  if (classes != 0 && classes < 2)
    throw std::invalid_argument("no probe query: the number of classes must be >= 2 (or 0)");
}

std::unique_ptr<Classifier> Classifier::Load(const std::string& model,
                                             const ClassifierOptions& opt) {
  opt.Validate();
  if (IsModelUrl(model)) return FromBackend(MakeHttpBackend(model, opt.http), opt);
  std::unique_ptr<ScoreBackend> backend = MakeTorchScriptBackend(model, opt.threads, opt.graph);
  if (opt.lockstep) backend = MakeLockstepBackend(std::move(backend), opt.lockstep);
  return FromBackend(std::move(backend), opt);
}

const char* ModelGraphName(ModelGraph g) { return g == ModelGraph::kFrozen ? "frozen" : "plain"; }

ModelGraph ParseModelGraph(const std::string& text, const char* option) {
  if (text == "frozen") return ModelGraph::kFrozen;
  if (text == "plain") return ModelGraph::kPlain;
  throw std::invalid_argument(std::string(option) + " must be frozen or plain, got '" + text + "'");
}

namespace {

// The input shapes to probe: the given one, else MNIST's, CIFAR-10's and ImageNet's; with a
// normalisation only those with its channel count. Throws std::invalid_argument when none fits.
std::vector<std::array<int, 3>> ProbeShapes(const ClassifierOptions& opt) {
  std::vector<std::array<int, 3>> shapes;
  if (opt.channels > 0 && opt.height > 0 && opt.width > 0)
    shapes.push_back({opt.channels, opt.height, opt.width});
  else
    shapes = {{1, 28, 28}, {3, 32, 32}, {3, 224, 224}};
  if (!opt.normalize) return shapes;
  const size_t k = opt.normalize->mean.size();
  std::vector<std::array<int, 3>> fit;
  for (const auto& s : shapes)
    if (k == 1 || static_cast<int>(k) == s[0]) fit.push_back(s);
  if (fit.empty())
    throw std::invalid_argument("--normalize has " + std::to_string(k) +
                                " values per statistic but the input has " +
                                std::to_string(shapes[0][0]) + " channel(s)");
  return fit;
}

// The error when the model rejected every probed shape.
ModelError RejectedShapes(const std::string& path, const std::vector<std::array<int, 3>>& shapes,
                          const std::string& last_error) {
  std::ostringstream m;
  m << path << ": the model rejects input ";
  if (shapes.size() == 1)
    m << "[N, " << shapes[0][0] << ", " << shapes[0][1] << ", " << shapes[0][2] << "]";
  else
    m << "of every probed shape ([N,1,28,28], [N,3,32,32], [N,3,224,224]); pass the shape";
  m << " (" << last_error << ")";
  return ModelError(m.str());
}

// The output format of the probe batch's scores `out` [2, classes] under `kind`: auto takes
// rows that are non-negative and sum to 1 (within 1e-3) as probabilities, rows whose exp sums
// to 1 as log-probabilities (used as logits), anything else as logits; probabilities given
// for rows that are not is a ModelError. Sets *logits.
std::string OutputFormatOf(const Eigen::MatrixXd& out, OutputKind kind, const std::string& path,
                           bool* logits) {
  const bool nonneg = (out.array() >= 0).all();
  const bool sums = ((out.rowwise().sum().array() - 1.0).abs() < 1e-3).all();
  *logits = kind == OutputKind::kAuto ? !(nonneg && sums) : kind == OutputKind::kLogits;
  if (kind == OutputKind::kProbabilities && !(nonneg && sums)) {
    std::ostringstream m;
    m << path << ": the output is given as probabilities (--output probs), but the probe "
      << "batch's scores are not (smallest " << out.minCoeff() << ", row sums "
      << out.rowwise().sum().minCoeff() << ".." << out.rowwise().sum().maxCoeff()
      << "); use --output logits or auto";
    throw ModelError(m.str());
  }
  const bool log_probs = !(nonneg && sums) && (out.array() <= 0).all() &&
                         ((out.array().exp().rowwise().sum() - 1.0).abs() < 1e-3).all();
  return !*logits ? "probabilities" : log_probs ? "log_probabilities" : "logits";
}

}  // namespace

std::unique_ptr<Classifier> Classifier::FromBackend(std::unique_ptr<ScoreBackend> backend,
                                                    const ClassifierOptions& opt) {
  if (!backend) throw std::invalid_argument("Classifier::FromBackend: no back end");
  opt.Validate();
  std::unique_ptr<Classifier> clf(new Classifier());
  clf->path_ = backend->name();
  clf->backend_ = std::move(backend);
  clf->normalize_ = opt.normalize;
  const std::string& path = clf->path_;
  const std::vector<std::array<int, 3>> shapes = ProbeShapes(opt);
  if (!opt.probe) {
    clf->c_ = shapes[0][0];
    clf->h_ = shapes[0][1];
    clf->w_ = shapes[0][2];
    clf->classes_ = opt.classes;
    clf->logits_ = opt.output == OutputKind::kLogits;
    clf->output_format_ = clf->logits_ ? "logits" : "probabilities";
    return clf;
  }
  Eigen::MatrixXd out;
  std::string last_error;
  bool ok = false;
  for (const auto& s : shapes) {
    clf->c_ = s[0];
    clf->h_ = s[1];
    clf->w_ = s[2];
    std::vector<float> probe(2 * s[0] * s[1] * s[2], 0.5f);
    QueryContext probe_context;  // a served model answers it with the undefended model
    probe_context.purpose = QueryPurpose::kShapeProbe;
    try {
      out = clf->Forward(probe.data(), 2, &probe_context).scores;
      clf->scored_[static_cast<int>(QueryPurpose::kShapeProbe)] += 2;
      ok = true;
      break;
    } catch (const TransportError&) {
      throw;
    } catch (const OutputError&) {
      throw;
    } catch (const ModelError& e) {
      last_error = e.what();
      if (last_error.rfind(path + ": ", 0) == 0) last_error = last_error.substr(path.size() + 2);
    }
  }
  if (!ok) throw RejectedShapes(path, shapes, last_error);
  if (out.rows() != 2 || out.cols() < 2) {
    std::ostringstream m;
    m << path << ": output must be [N, classes] with classes >= 2, got [" << out.rows() << ", "
      << out.cols() << "] for a batch of 2";
    throw ModelError(m.str());
  }
  if (!out.allFinite())
    throw ModelError(path + ": the model returned non-finite scores on a probe batch");
  clf->classes_ = static_cast<int>(out.cols());
  clf->output_format_ = OutputFormatOf(out, opt.output, path, &clf->logits_);
  return clf;
}

BackendAnswer Classifier::Forward(const float* images, int n, const QueryContext* context) const {
  const int d = input_size();
  std::vector<float> normalised;
  if (normalize_) {
    normalised.assign(images, images + static_cast<size_t>(n) * d);
    const int hw = h_ * w_;
    const bool one = normalize_->mean.size() == 1;
    for (int b = 0; b < n; ++b)
      for (int ch = 0; ch < c_; ++ch) {
        const float mu = normalize_->mean[one ? 0 : ch], sd = normalize_->std[one ? 0 : ch];
        float* x = normalised.data() + static_cast<size_t>(b) * d + static_cast<size_t>(ch) * hw;
        for (int p = 0; p < hw; ++p) x[p] = (x[p] - mu) / sd;
      }
    images = normalised.data();
  }
  return backend_->Answer(images, n, c_, h_, w_, context);
}

BackendAnswer Classifier::CheckedAnswer(const float* images, int n,
                                        const QueryContext* context) const {
  BackendAnswer a = Forward(images, n, context);
  Eigen::MatrixXd& out = a.scores;
  const int classes = num_classes();
  if (out.rows() != n || (classes > 0 && out.cols() != classes) || out.cols() < 2) {
    std::ostringstream m;
    m << path_ << ": output must be [" << n << ", " << (classes > 0 ? classes : out.cols())
      << "], got [" << out.rows() << ", " << out.cols() << "]"
      << (classes > 0 ? " (the class count differs from the probed or given one)"
                      : " (at least 2 classes)");
    throw ModelError(m.str());
  }
  const auto verdicts_fit = [n](const std::vector<bool>& v) {
    return v.empty() || static_cast<int>(v.size()) == n;
  };
  if (!verdicts_fit(a.detected) || !verdicts_fit(a.refused))
    throw OutputError(path_ + ": the defense's verdicts do not have one entry per image");
  // A refused row holds no score: a neutral one (logits 0, or probabilities 1/classes), so
  // the log-softmax is flat and nothing downstream reads a number the model never gave.
  const double neutral = logits_ ? 0.0 : 1.0 / static_cast<double>(out.cols());
  for (int i = 0; i < static_cast<int>(a.refused.size()); ++i)
    if (a.refused[i]) out.row(i).setConstant(neutral);
  if (!out.allFinite()) throw ModelError(path_ + ": the model returned non-finite scores");
  if (classes == 0) classes_.store(static_cast<int>(out.cols()), std::memory_order_relaxed);
  scored_[static_cast<int>(context ? context->purpose : QueryPurpose::kOther)] += n;
  return a;
}

namespace {

// The RefusedError of a batch where `refused` marks k > 0 images.
RefusedError Refusal(const std::string& path, const std::vector<bool>& refused,
                     const QueryContext* context) {
  long k = 0;
  for (bool r : refused) k += r;
  return RefusedError(path + ": the served model's defense refused " + std::to_string(k) + " of " +
                      std::to_string(refused.size()) + " " +
                      QueryPurposeName(context ? context->purpose : QueryPurpose::kOther) +
                      " image(s) (a stateful detector in front of it" +
                      (context && !context->session.empty() ? ", session '" + context->session + "'"
                                                            : std::string(", no session")) +
                      "); they have no score");
}

bool AnyRefused(const std::vector<bool>& refused) {
  for (bool r : refused)
    if (r) return true;
  return false;
}

}  // namespace

Eigen::MatrixXd Classifier::RawScores(const float* images, int n,
                                      const QueryContext* context) const {
  if (n <= 0) return Eigen::MatrixXd(0, num_classes());
  BackendAnswer a = CheckedAnswer(images, n, context);
  if (AnyRefused(a.refused)) throw Refusal(path_, a.refused, context);
  return std::move(a.scores);
}

Classifier::Answered Classifier::Answer(const float* images, int n,
                                        const QueryContext* context) const {
  Answered out;
  if (n <= 0) {
    out.log_probs.resize(0, num_classes());
    return out;
  }
  BackendAnswer a = CheckedAnswer(images, n, context);
  out.log_probs = LogProbabilitiesOf(a.scores);
  const double flat = -std::log(static_cast<double>(out.log_probs.cols()));
  for (int i = 0; i < static_cast<int>(a.refused.size()); ++i)
    if (a.refused[i]) out.log_probs.row(i).setConstant(flat);
  out.detected = std::move(a.detected);
  out.refused = std::move(a.refused);
  return out;
}

Eigen::MatrixXd Classifier::LogProbabilitiesOf(const Eigen::MatrixXd& out) const {
  Eigen::MatrixXd lp(out.rows(), out.cols());
  for (Eigen::Index i = 0; i < out.rows(); ++i) {
    if (logits_) {
      // log_softmax: x - max - log sum exp(x - max)
      const double m = out.row(i).maxCoeff();
      double s = 0;
      for (Eigen::Index c = 0; c < out.cols(); ++c) s += std::exp(out(i, c) - m);
      const double ls = std::log(s);
      for (Eigen::Index c = 0; c < out.cols(); ++c) lp(i, c) = out(i, c) - m - ls;
    } else {
      double s = 0;
      bool zero = false;
      for (Eigen::Index c = 0; c < out.cols(); ++c) {
        if (out(i, c) < -1e-6) {
          std::ostringstream m;
          m << path_ << ": the output is taken as probabilities, but the model returned a "
            << "negative score (" << out(i, c) << ", class " << c
            << "); use --output logits (or auto)";
          throw ModelError(m.str());
        }
        zero |= out(i, c) <= 0;
        s += std::max(out(i, c), 0.0);
      }
      if (zero) zero_rows_.fetch_add(1, std::memory_order_relaxed);
      s = std::max(s, 1e-300);
      for (Eigen::Index c = 0; c < out.cols(); ++c)
        lp(i, c) = std::log(std::max(out(i, c), 1e-300) / s);
    }
  }
  if (!lp.allFinite()) throw ModelError(path_ + ": the model returned non-finite scores");
  return lp;
}

Eigen::MatrixXd Classifier::LogProbabilities(const float* images, int n,
                                             const QueryContext* context) const {
  if (n <= 0) return Eigen::MatrixXd(0, num_classes());
  return LogProbabilitiesOf(RawScores(images, n, context));
}

QueryPurpose ParseQueryPurpose(const std::string& name) {
  for (int p = 0; p < kNumQueryPurposes; ++p)
    if (name == QueryPurposeName(static_cast<QueryPurpose>(p))) return static_cast<QueryPurpose>(p);
  throw std::invalid_argument("'" + name +
                              "' is not a query purpose (attack, shape_probe, selection, "
                              "clean_accuracy, verify or other)");
}

}  // namespace advbo::oracle
