#include "algorithms/hpo/hpo_task.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <numeric>
#include <random>
#include <sstream>

#include "algorithms/hpo/cnn_task.h"
#include "bo/random.h"
#include "data/datasets.h"

namespace advbo::hpo {
namespace fs = std::filesystem;

namespace {

// Fixed permutation of every pool: the split is part of a task's identity, not of a run.
constexpr uint64_t kPoolSeed = 0x5eed0f9001ULL;

data::ImageSet ReadIdxFolder(const std::string& dir) {
  if (!fs::is_directory(dir)) throw TaskDataError(dir + ": no such data folder");
  data::ImageSet all;
  for (const char* stem : {"t10k", "train"}) {
    std::string img, lab;
    for (const char* ext : {"-images-idx3-ubyte.gz", "-images-idx3-ubyte"})
      if (fs::exists(dir + "/" + stem + ext)) img = dir + "/" + stem + ext;
    for (const char* ext : {"-labels-idx1-ubyte.gz", "-labels-idx1-ubyte"})
      if (fs::exists(dir + "/" + stem + ext)) lab = dir + "/" + stem + ext;
    if (img.empty()) continue;
    if (lab.empty()) throw TaskDataError(img + ": no matching labels file in " + dir);
    data::ImageSet part;
    try {
      part = data::ReadMnist(img, lab);
    } catch (const data::DataError& e) {
      throw TaskDataError(e.what());
    }
    if (all.labels.empty()) {
      all = std::move(part);
    } else {
      all.pixels.insert(all.pixels.end(), part.pixels.begin(), part.pixels.end());
      all.labels.insert(all.labels.end(), part.labels.begin(), part.labels.end());
    }
  }
  if (all.labels.empty())
    throw TaskDataError(dir + ": no t10k-images-idx3-ubyte(.gz) or train-images-idx3-ubyte(.gz)");
  return all;
}

data::ImageSet ReadCifarFolder(const std::string& dir) {
  if (!fs::is_directory(dir)) throw TaskDataError(dir + ": no such data folder");
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".bin") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  if (files.empty()) throw TaskDataError(dir + ": no CIFAR-10 .bin batch files");
  try {
    return data::ReadCifar10(files);
  } catch (const data::DataError& e) {
    throw TaskDataError(e.what());
  }
}

}  // namespace

Eigen::VectorXd HpoTask::SearchLower() const {
  Eigen::VectorXd v(dim());
  for (int i = 0; i < dim(); ++i)
    v(i) = params()[i].log_scale ? std::log10(params()[i].lower) : params()[i].lower;
  return v;
}

Eigen::VectorXd HpoTask::SearchUpper() const {
  Eigen::VectorXd v(dim());
  for (int i = 0; i < dim(); ++i)
    v(i) = params()[i].log_scale ? std::log10(params()[i].upper) : params()[i].upper;
  return v;
}

Eigen::VectorXd HpoTask::ToNatural(const Eigen::VectorXd& z) const {
  if (z.size() != dim())
    throw std::invalid_argument(name() + ": expected " + std::to_string(dim()) +
                                " hyperparameters, got " + std::to_string(z.size()));
  Eigen::VectorXd x(dim());
  for (int i = 0; i < dim(); ++i) {
    const HpoParam& p = params()[i];
    double v = p.log_scale ? std::pow(10.0, z(i)) : z(i);
    if (p.integer) v = std::round(v);
    x(i) = std::clamp(v, p.lower, p.upper);
  }
  return x;
}

Eigen::VectorXd HpoTask::ToSearch(const Eigen::VectorXd& x) const {
  CheckPoint(x);
  Eigen::VectorXd z(dim());
  for (int i = 0; i < dim(); ++i) z(i) = params()[i].log_scale ? std::log10(x(i)) : x(i);
  return z;
}

void HpoTask::CheckPoint(const Eigen::VectorXd& x) const {
  if (x.size() != dim())
    throw std::invalid_argument(name() + ": expected " + std::to_string(dim()) +
                                " hyperparameters, got " + std::to_string(x.size()));
  for (int i = 0; i < dim(); ++i) {
    const HpoParam& p = params()[i];
    const double slack = 1e-9 * std::max(1.0, std::abs(p.upper));
    if (!std::isfinite(x(i)) || x(i) < p.lower - slack || x(i) > p.upper + slack) {
      std::ostringstream s;
      s << name() << ": " << p.name << " = " << x(i) << " is outside [" << p.lower << ", "
        << p.upper << "]";
      throw std::invalid_argument(s.str());
    }
  }
}

uint64_t EvaluationSeed(uint64_t seed, const Eigen::VectorXd& x) {
  uint64_t h = 1469598103934665603ULL;  // FNV-1a over the bytes of x
  for (Eigen::Index i = 0; i < x.size(); ++i) {
    uint64_t bits;
    const double v = x(i);
    std::memcpy(&bits, &v, sizeof bits);
    for (int b = 0; b < 8; ++b) {
      h ^= (bits >> (8 * b)) & 0xffU;
      h *= 1099511628211ULL;
    }
  }
  return bo::DeriveSeed(seed, h);
}

void TaskOptions::Validate() const {
  if (offset < 0 || examples < 0)
    throw std::invalid_argument("task options: offset and examples must be >= 0");
  if (transform != "none" && transform != "invert-noise" && transform != "grey")
    throw std::invalid_argument(
        "task options: transform must be none, invert-noise or grey, not '" + transform + "'");
}

TaskData LoadTaskData(const std::string& dataset, const TaskOptions& o) {
  o.Validate();
  data::ImageSet set;
  std::string dir;
  if (dataset == "mnist") {
    set = ReadIdxFolder(dir = o.mnist_dir);
  } else if (dataset == "fashion") {
    set = ReadIdxFolder(dir = o.fashion_dir);
  } else if (dataset == "cifar10") {
    set = ReadCifarFolder(dir = o.cifar10_dir);
  } else {
    throw std::invalid_argument("unknown dataset '" + dataset + "' (mnist, fashion, cifar10)");
  }
  if (o.transform == "grey" && set.channels != 3)
    throw std::invalid_argument("task options: transform grey needs a colour dataset (cifar10)");
  const int pool = static_cast<int>(set.size());
  std::vector<int> perm(pool);
  std::iota(perm.begin(), perm.end(), 0);
  bo::Rng prng(kPoolSeed);
  std::shuffle(perm.begin(), perm.end(), prng);
  const int begin = std::min(o.offset, pool);
  const int end = o.examples > 0 ? std::min(pool, begin + o.examples) : pool;
  const int n = end - begin;
  if (n < 10)
    throw TaskDataError(dir + ": only " + std::to_string(n) + " examples in [" +
                        std::to_string(o.offset) + ", ...) of a pool of " + std::to_string(pool));
  const int ch = o.transform == "grey" ? 1 : set.channels;
  const int pix = ch * set.height * set.width;
  LabelledData all;
  all.channels = ch;
  all.height = set.height;
  all.width = set.width;
  all.x.resize(n, pix);
  all.y.resize(n);
  bo::Rng noise_rng(kPoolSeed + 1);
  std::normal_distribution<float> noise(0.0f, 0.3f);
  for (int i = 0; i < n; ++i) {
    const float* src = set.image(perm[begin + i]);
    if (o.transform == "grey") {
      const int hw = set.height * set.width;
      for (int k = 0; k < hw; ++k) all.x(i, k) = (src[k] + src[hw + k] + src[2 * hw + k]) / 3.0f;
    } else {
      for (int k = 0; k < pix; ++k) all.x(i, k) = src[k];
    }
    if (o.transform == "invert-noise")
      for (int k = 0; k < pix; ++k)
        all.x(i, k) = std::clamp(1.0f - all.x(i, k) + noise(noise_rng), 0.0f, 1.0f);
    all.y[i] = set.labels[perm[begin + i]];
  }
  const int n_train = static_cast<int>(std::lround(0.8 * n));
  TaskData d;
  d.train = all;
  d.val = all;
  d.train.x = all.x.topRows(n_train);
  d.train.y.assign(all.y.begin(), all.y.begin() + n_train);
  d.val.x = all.x.bottomRows(n - n_train);
  d.val.y.assign(all.y.begin() + n_train, all.y.end());
  std::ostringstream s;
  s << dataset << " (" << pool << " images in " << dir << ") [" << begin << ", " << end
    << "), transform " << o.transform << ": " << n_train << " train / " << n - n_train
    << " validation";
  d.source = s.str();
  return d;
}

std::vector<std::string> TaskNames() {
  return {"mnist-lr",      "fashion-lr", "cifar10-lr", "mnist-lssvm",
          "fashion-lssvm", "mnist-cnn",  "cifar10-cnn"};
}

std::unique_ptr<HpoTask> MakeTask(const std::string& name, const TaskOptions& options) {
  const auto dash = name.rfind('-');
  const std::string dataset = dash == std::string::npos ? "" : name.substr(0, dash);
  const std::string model = dash == std::string::npos ? "" : name.substr(dash + 1);
  const auto names = TaskNames();
  if (std::find(names.begin(), names.end(), name) == names.end()) {
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
    throw std::invalid_argument("unknown task '" + name + "' (known: " + list + ")");
  }
  if (model == "lr")
    return std::make_unique<LogisticRegressionTask>(name, LoadTaskData(dataset, options),
                                                    options.seed);
  if (model == "lssvm") {
    TaskOptions o = options;
    if (o.examples == 0) o.examples = 2500;
    return std::make_unique<LsSvmTask>(name, LoadTaskData(dataset, o));
  }
  TaskOptions o = options;
  if (o.examples == 0) o.examples = 6000;
  return MakeCnnTask(name, LoadTaskData(dataset, o), options.seed);
}

// ---------------------------------------------------------------- logistic regression

LogisticRegressionTask::LogisticRegressionTask(std::string name, TaskData data, uint64_t seed)
    : name_(std::move(name)), data_(std::move(data)), seed_(seed) {
  params_ = {{"batch_size", 20, 500, true, true},
             {"l2", 1e-6, 1.0, true, false},
             {"learning_rate", 1e-3, 0.1, true, false}};
}

std::string LogisticRegressionTask::Describe() const {
  return name_ + ": multinomial logistic regression, mini-batch SGD; " + data_.source;
}

namespace {

using RowMatF = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

double ErrorRate(const Eigen::MatrixXf& scores, const std::vector<int>& labels) {
  if (!scores.allFinite()) return 1.0;
  int wrong = 0;
  for (Eigen::Index i = 0; i < scores.rows(); ++i) {
    Eigen::Index arg;
    scores.row(i).maxCoeff(&arg);
    wrong += arg != labels[i];
  }
  return static_cast<double>(wrong) / static_cast<double>(scores.rows());
}

}  // namespace

std::vector<double> LogisticRegressionTask::Evaluate(const Eigen::VectorXd& x, int epochs,
                                                     const EpochCallback& on_epoch) const {
  CheckPoint(x);
  if (epochs < 1) throw std::invalid_argument(name_ + ": epochs must be >= 1");
  const int n = static_cast<int>(data_.train.x.rows());
  const int d = static_cast<int>(data_.train.x.cols());
  const int k = data_.train.num_classes;
  const int batch = std::clamp(static_cast<int>(std::lround(x(0))), 1, n);
  const float l2 = static_cast<float>(x(1)), lr = static_cast<float>(x(2));
  bo::Rng rng(EvaluationSeed(seed_, x));
  Eigen::MatrixXf w = Eigen::MatrixXf::Zero(d, k);
  Eigen::RowVectorXf b = Eigen::RowVectorXf::Zero(k);
  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  RowMatF xb(batch, d);
  Eigen::MatrixXf p(batch, k);
  std::vector<double> errors;
  bool diverged = false;
  for (int e = 1; e <= epochs; ++e) {
    std::shuffle(order.begin(), order.end(), rng);
    for (int start = 0; start < n && !diverged; start += batch) {
      const int m = std::min(batch, n - start);
      if (m != xb.rows()) {
        xb.resize(m, d);
        p.resize(m, k);
      }
      for (int r = 0; r < m; ++r) xb.row(r) = data_.train.x.row(order[start + r]);
      p.noalias() = xb * w;
      p.rowwise() += b;
      for (int r = 0; r < m; ++r) {  // softmax, then P - Y
        const float mx = p.row(r).maxCoeff();
        p.row(r) = (p.row(r).array() - mx).exp();
        p.row(r) /= p.row(r).sum();
        p(r, data_.train.y[order[start + r]]) -= 1.0f;
      }
      p /= static_cast<float>(m);
      w *= 1.0f - lr * l2;
      w.noalias() -= lr * (xb.transpose() * p);
      b -= lr * p.colwise().sum();
      if (!b.allFinite()) diverged = true;  // NaN logits reach b first
    }
    double err = 1.0;
    if (!diverged) {
      Eigen::MatrixXf scores = data_.val.x * w;
      scores.rowwise() += b;
      err = ErrorRate(scores, data_.val.y);
    }
    errors.push_back(err);
    if (on_epoch && !on_epoch(e, err)) break;
  }
  return errors;
}

// ---------------------------------------------------------------- RBF LS-SVM

namespace {

// Squared Euclidean distances [rows of a, rows of b], in double: the kernel of a badly
// conditioned system (C near 1e3) must not carry float32 rounding into the solve.
Eigen::MatrixXd SquaredDistances(const RowMatF& af, const RowMatF& bf) {
  const Eigen::MatrixXd a = af.cast<double>(), b = bf.cast<double>();
  Eigen::VectorXd na = a.rowwise().squaredNorm(), nb = b.rowwise().squaredNorm();
  Eigen::MatrixXd d2 = -2.0 * (a * b.transpose());
  d2.colwise() += na;
  d2.rowwise() += nb.transpose();
  return d2.cwiseMax(0.0);
}

}  // namespace

LsSvmTask::LsSvmTask(std::string name, TaskData data)
    : name_(std::move(name)), data_(std::move(data)) {
  params_ = {{"C", 1e-3, 1e3, true, false}, {"lengthscale", 1.0, 30.0, true, false}};
  train_d2_ = SquaredDistances(data_.train.x, data_.train.x);
  val_d2_ = SquaredDistances(data_.val.x, data_.train.x);
}

std::string LsSvmTask::Describe() const {
  return name_ +
         ": RBF least-squares SVM (one-vs-all), conjugate gradients (1 iteration = 1 "
         "epoch); " +
         data_.source;
}

std::vector<double> LsSvmTask::Evaluate(const Eigen::VectorXd& x, int epochs,
                                        const EpochCallback& on_epoch) const {
  CheckPoint(x);
  if (epochs < 1) throw std::invalid_argument(name_ + ": epochs must be >= 1");
  const int n = static_cast<int>(train_d2_.rows());
  const int k = data_.train.num_classes;
  const double c = x(0), ell = x(1);
  const double g = -0.5 / (ell * ell);
  Eigen::MatrixXd a = (train_d2_.array() * g).exp().matrix();
  a.diagonal().array() += 1.0 / c;
  const Eigen::MatrixXd kval = (val_d2_.array() * g).exp().matrix();
  // Projected CG (the KKT system restricted to 1^T a = 0): with P = I - 1 1^T / n, solve
  // P H P a_k = P y_k for every class k (H = K + I/C, a_k in range(P)), then
  // b_k = 1^T (y_k - H a_k) / n. At convergence this is the unique KKT solution; every
  // iterate satisfies the constraint and its bias is a least-squares fit, whereas the
  // textbook route through H eta = 1 and b_k = 1^T nu_k / 1^T eta divides two unconverged
  // sums and jumped between 0.1 and 0.9 error from one iteration to the next near C = 1e3.
  auto project = [](Eigen::MatrixXd& m) { m.rowwise() -= m.colwise().mean(); };
  Eigen::MatrixXd y = -Eigen::MatrixXd::Ones(n, k);
  for (int i = 0; i < n; ++i) y(i, data_.train.y[i]) = 1.0;
  Eigen::MatrixXd sol = Eigen::MatrixXd::Zero(n, k), r = y, hp(n, k), ap(n, k);
  Eigen::RowVectorXd hsol_mean = Eigen::RowVectorXd::Zero(k);  // mean of H a_k
  project(r);
  Eigen::MatrixXd p = r;
  Eigen::RowVectorXd rs = r.colwise().squaredNorm();
  std::vector<double> errors;
  for (int e = 1; e <= epochs; ++e) {
    hp.noalias() = a * p;  // one CG iteration on every column
    ap = hp;
    project(ap);
    for (int j = 0; j < k; ++j) {
      const double pap = p.col(j).dot(ap.col(j));
      if (!(rs(j) > 1e-30) || !(pap > 0)) continue;  // converged column
      const double alpha = rs(j) / pap;
      sol.col(j) += alpha * p.col(j);
      hsol_mean(j) += alpha * hp.col(j).mean();
      r.col(j) -= alpha * ap.col(j);
      const double rs_new = r.col(j).squaredNorm();
      p.col(j) = r.col(j) + (rs_new / rs(j)) * p.col(j);
      rs(j) = rs_new;
    }
    const Eigen::RowVectorXd bias = y.colwise().mean() - hsol_mean;
    Eigen::MatrixXd s = kval * sol;
    s.rowwise() += bias;
    const Eigen::MatrixXf scores = s.cast<float>();
    const double err = ErrorRate(scores, data_.val.y);
    errors.push_back(err);
    if (on_epoch && !on_epoch(e, err)) break;
  }
  return errors;
}

}  // namespace advbo::hpo
