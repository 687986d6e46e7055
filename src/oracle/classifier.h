// A TorchScript image classifier behind a narrow, LibTorch-free interface (the LibTorch
// headers stay in classifier.cc). Input contract (docs/design.md, the oracle contract): float32
// NCHW with pixels in [0, 1]; the model owns any normalisation. Output: logits or
// probabilities [N, classes].
#pragma once

#include <Eigen/Dense>
#include <memory>
#include <stdexcept>
#include <string>

namespace advbo::oracle {

/// A missing, unreadable or unusable model; the message names the file and the problem.
class ModelError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// What the model's output rows are.
enum class OutputKind { kAuto, kLogits, kProbabilities };

/// Parses "auto" | "logits" | "probs"; throws std::invalid_argument otherwise.
OutputKind ParseOutputKind(const std::string& s);

/// Loading options.
struct ClassifierOptions {
  OutputKind output = OutputKind::kAuto;    ///< auto: probabilities iff a probe's rows are
                                            ///< non-negative and sum to 1 (within 1e-3)
  int channels = 0, height = 0, width = 0;  ///< expected input shape; 0 = infer by probing
                                            ///< [1,28,28], [3,32,32], [3,224,224]
  int threads = 0;  ///< intra-op threads for LibTorch and, when LibTorch runs on
                    ///< OpenBLAS, for OpenBLAS too (0 = leave the libraries' defaults)
};

/// The BLAS that LibTorch's linear and convolution layers run on (Debian picks it through
/// the libblas.so.3 alternative): "OpenBLAS <version/config>" or "reference BLAS". Model
/// scores differ between the two in the last float bits, so benchmark records carry it.
std::string BlasLibrary();

/// A loaded, validated classifier.
class Classifier {
 public:
  /// Loads a TorchScript module from `path` and validates it with a probe batch of zeros:
  /// throws ModelError naming the file if it is missing, not TorchScript, rejects the
  /// expected input shape (or none of the probe shapes fits), does not return a 2-D
  /// tensor [N, C] with C >= 2, or returns non-finite scores.
  static std::unique_ptr<Classifier> Load(const std::string& path,
                                          const ClassifierOptions& options = {});
  ~Classifier();

  /// Log-probabilities [N, classes] (log-softmax of logits, or log of renormalised
  /// probabilities) for n images stored contiguously as n * C*H*W floats in [0, 1].
  /// Throws ModelError if the model fails or produces non-finite scores.
  Eigen::MatrixXd LogProbabilities(const float* images, int n) const;

  int channels() const { return c_; }
  int height() const { return h_; }
  int width() const { return w_; }
  int input_size() const { return c_ * h_ * w_; }
  int num_classes() const { return classes_; }
  /// Whether the output was taken as logits (true) or probabilities (false).
  bool outputs_logits() const { return logits_; }
  const std::string& path() const { return path_; }

 private:
  struct Impl;
  Classifier();
  std::unique_ptr<Impl> impl_;
  std::string path_;
  int c_ = 0, h_ = 0, w_ = 0, classes_ = 0;
  bool logits_ = true;
};

}  // namespace advbo::oracle
