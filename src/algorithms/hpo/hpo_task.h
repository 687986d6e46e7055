// Hyperparameter-optimisation (HPO) tasks on local data: the workload of BO-BOS (Dai 2021
// thesis Ch. 4, App. A.4: logistic regression on MNIST, CNNs on CIFAR-10), of Hyperband
// (Li et al. 2017) and of RM-GP-UCB's meta-tasks (Ch. 7). A task trains one model for a
// number of epochs and reports its validation error after every epoch (a learning curve).
//
// Backends: multinomial logistic regression trained by mini-batch SGD and an RBF
// least-squares SVM (Suykens & Vandewalle 1999) trained by conjugate gradients, both in Eigen;
// a small CNN in LibTorch (cnn_task.h). Every task is deterministic per (task, x, seed).
#pragma once

#include <Eigen/Dense>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace advbo::hpo {

/// One hyperparameter: bounds in natural units; log-scaled ones are searched in log10 units.
struct HpoParam {
  /// The hyperparameter's name (as recorded in traces).
  std::string name;
  /// Bounds [lower, upper] in natural units, lower < upper (> 0 when log_scale).
  ///@{
  double lower = 0, upper = 1;  ///< natural units, lower < upper (> 0 when log_scale)
  ///@}
  bool log_scale = true;  ///< searched as log10(value)
  bool integer = false;   ///< rounded to the nearest integer after mapping back
};

/// Called after every epoch n = 1, 2, ... with the validation error in [0, 1]; returning
/// false stops the training (the early stop of BO-BOS / Hyperband's rung end).
using EpochCallback = std::function<bool(int epoch, double validation_error)>;

/// A model-training task with a learning curve.
class HpoTask {
 public:
  virtual ~HpoTask() = default;
  /// Registry name with its options, e.g. "mnist-lr".
  virtual std::string name() const = 0;
  /// The hyperparameters [d] in the order of x.
  virtual const std::vector<HpoParam>& params() const = 0;
  /// Default maximum number of epochs N (BO-BOS N = 50, thesis App. A.4).
  virtual int default_epochs() const { return 50; }
  /// Trains with hyperparameters x [d] (natural units, inside the bounds; integer ones are
  /// rounded) for `epochs` >= 1 epochs, calling on_epoch after each; stops early when it
  /// returns false. Returns the validation errors [epochs trained], each in [0, 1]; a diverged
  /// model (non-finite weights) scores 1. Throws std::invalid_argument on a wrong size, a value
  /// outside the bounds or epochs < 1. Deterministic for a given (task, x, seed).
  virtual std::vector<double> Evaluate(const Eigen::VectorXd& x, int epochs,
                                       const EpochCallback& on_epoch = {}) const = 0;
  /// Human-readable summary (data sizes, dimension), for logs and result headers.
  virtual std::string Describe() const = 0;

  /// Number of hyperparameters d.
  int dim() const { return static_cast<int>(params().size()); }
  /// Search box [d] (log10 of the bounds for log-scaled parameters).
  Eigen::VectorXd SearchLower() const;
  /// Upper bounds of the search box [d] (log10 units for log-scaled parameters).
  Eigen::VectorXd SearchUpper() const;
  /// Search units [d] -> natural units [d] (10^z for log-scaled, then integers rounded and
  /// clamped into the bounds).
  Eigen::VectorXd ToNatural(const Eigen::VectorXd& z) const;
  /// Natural units [d] -> search units [d].
  Eigen::VectorXd ToSearch(const Eigen::VectorXd& x) const;
  /// Validates x [d] against the bounds (a relative slack of 1e-9); std::invalid_argument
  /// naming the parameter otherwise.
  void CheckPoint(const Eigen::VectorXd& x) const;
};

/// A missing or unusable data source for a task (the message names the file or folder).
class TaskDataError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Where tasks find data and how they carve it; defaults read the samples shipped in data/.
struct TaskOptions {
  std::string mnist_dir = "data/mnist";  ///< t10k-* (+ train-* if present) IDX files
  std::string fashion_dir = "/usr/share/datasets/fashion-mnist";  ///< Debian's package
  std::string cifar10_dir = "data/cifar10";  ///< every *.bin CIFAR-10 batch in the folder
  uint64_t seed = 0;  ///< training randomness (SGD order, CNN initialisation)
  /// The pool (all images of the dataset, shuffled once by a fixed permutation) is cut into
  /// [offset, offset + examples); 80 % train, 20 % validation (thesis App. A.4.1).
  /// examples = 0: everything from offset on (LS-SVM: 2,500).
  int offset = 0;
  /// Images taken from offset on (0: the task's default).
  int examples = 0;
  /// "none", "invert-noise" (x -> 1 - x plus N(0, 0.3^2) noise, clipped; a dissimilar
  /// variant for meta-task studies) or "grey" (channel mean; CIFAR-10 only).
  std::string transform = "none";
  /// Throws std::invalid_argument when offset or examples is negative or the transform is
  /// none of the three above.
  void Validate() const;
};

/// Registered task names: mnist-lr, fashion-lr, cifar10-lr, mnist-lssvm, fashion-lssvm,
/// mnist-cnn, cifar10-cnn.
std::vector<std::string> TaskNames();

/// Builds a task by name, loading its data. Throws std::invalid_argument for an unknown
/// name or bad options and TaskDataError naming the file for missing/corrupt data.
std::unique_ptr<HpoTask> MakeTask(const std::string& name, const TaskOptions& options = {});

/// Row-major float features [N, D] with pixels in [0, 1] and labels [N] in 0..K-1.
struct LabelledData {
  /// Features [N, D], pixels in [0, 1].
  Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> x;
  /// Labels [N] in 0..num_classes-1.
  std::vector<int> y;
  /// Image shape: channels, height, width.
  ///@{
  int channels = 1, height = 28, width = 28;
  ///@}
  /// Number of classes K.
  int num_classes = 10;
};

/// A train / validation split of a dataset (see TaskOptions).
struct TaskData {
  /// The training and validation parts.
  ///@{
  LabelledData train, val;
  ///@}
  std::string source;  ///< e.g. "mnist (24262 images) [0, 24262)"
};

/// Loads "mnist", "fashion" or "cifar10" per the options: the pool permuted with a fixed
/// seed (independent of options.seed), cut, transformed and split 80/20. Throws
/// TaskDataError (missing files, fewer than 10 examples) / std::invalid_argument (options).
TaskData LoadTaskData(const std::string& dataset, const TaskOptions& options);

/// Per-evaluation seed from the task seed and the bits of x (same x, same seed: same run).
uint64_t EvaluationSeed(uint64_t seed, const Eigen::VectorXd& x);

/// Multinomial logistic regression trained by mini-batch SGD with L2 regularisation (the
/// LR of thesis App. A.4.1): x = [batch size in 20..500 (integer), L2 weight in [1e-6, 1],
/// learning rate in [1e-3, 0.1]]. One epoch = one pass over the shuffled training split;
/// weights start at 0; the per-batch step is W -= lr * (X_b^T (P - Y) / B + l2 * W).
class LogisticRegressionTask final : public HpoTask {
 public:
  /// Multinomial logistic regression trained by mini-batch SGD on `data`; `seed` fixes the SGD
  /// order.
  LogisticRegressionTask(std::string name, TaskData data, uint64_t seed);
  std::string name() const override { return name_; }
  const std::vector<HpoParam>& params() const override { return params_; }
  std::vector<double> Evaluate(const Eigen::VectorXd& x, int epochs,
                               const EpochCallback& on_epoch = {}) const override;
  std::string Describe() const override;

 private:
  std::string name_;
  TaskData data_;
  uint64_t seed_;
  std::vector<HpoParam> params_;
};

/// RBF least-squares SVM (Suykens & Vandewalle 1999), one-vs-all over the classes:
/// [0 1^T; 1 K + I/C] [b; a] = [0; y], solved per class by conjugate gradients projected
/// onto 1^T a = 0 (P (K + I/C) P a_k = P y_k, P = I - 1 1^T / n; b_k = 1^T (y_k - (K + I/C)
/// a_k) / n), in double precision; one epoch = one CG iteration on all classes. (The
/// textbook route via (K + I/C) eta = 1 and b_k = 1^T nu_k / 1^T eta has the same limit but
/// its unconverged iterates were chaotic near C = 1e3.) x = [C in [1e-3, 1e3], RBF lengthscale in
/// [1, 30] (pixel units; k = exp(-|u - v|^2 / (2 l^2)))]. Deterministic (no randomness in
/// training).
class LsSvmTask final : public HpoTask {
 public:
  /// An RBF LS-SVM (one-vs-rest, conjugate gradients) on `data`.
  LsSvmTask(std::string name, TaskData data);
  std::string name() const override { return name_; }
  const std::vector<HpoParam>& params() const override { return params_; }
  int default_epochs() const override { return 50; }
  std::vector<double> Evaluate(const Eigen::VectorXd& x, int epochs,
                               const EpochCallback& on_epoch = {}) const override;
  std::string Describe() const override;

 private:
  std::string name_;
  TaskData data_;
  std::vector<HpoParam> params_;
  Eigen::MatrixXd train_d2_, val_d2_;  // squared distances [n, n], [m, n] (double)
};

}  // namespace advbo::hpo
