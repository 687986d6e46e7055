#include "oracle/classifier.h"

#include <ATen/Parallel.h>
#include <torch/script.h>

#include <dlfcn.h>

#include <array>
#include <cmath>
#include <filesystem>
#include <sstream>
#include <vector>

namespace advbo::oracle {
namespace {

std::string FirstLine(const std::string& s) {
  auto p = s.find('\n');
  return p == std::string::npos ? s : s.substr(0, p);
}

// OpenBLAS's own thread count is not set by at::set_num_threads; look the setter up at
// run time because libblas.so.3 may be OpenBLAS or the reference BLAS (no such symbol).
void SetOpenBlasThreads(int threads) {
  using Setter = void (*)(int);
  if (auto f = reinterpret_cast<Setter>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads")))
    f(threads);
}

}  // namespace

std::string BlasLibrary() {
  using Getter = char* (*)();
  if (auto f = reinterpret_cast<Getter>(dlsym(RTLD_DEFAULT, "openblas_get_config")))
    return f();  // e.g. "OpenBLAS 0.3.21 DYNAMIC_ARCH ... Haswell MAX_THREADS=64"
  return "reference BLAS";
}

struct Classifier::Impl {
  mutable torch::jit::Module module;
  torch::Tensor Forward(const float* images, int n, int c, int h, int w) const {
    torch::NoGradGuard no_grad;
    torch::Tensor x =
        torch::from_blob(const_cast<float*>(images), {n, c, h, w}, torch::kFloat32);
    torch::jit::IValue out = module.forward({x});
    if (!out.isTensor()) throw ModelError("the model's forward() did not return a tensor");
    return out.toTensor().to(torch::kFloat64).contiguous();
  }
};

OutputKind ParseOutputKind(const std::string& s) {
  if (s == "auto") return OutputKind::kAuto;
  if (s == "logits") return OutputKind::kLogits;
  if (s == "probs" || s == "probabilities") return OutputKind::kProbabilities;
  throw std::invalid_argument("unknown output kind '" + s + "' (use auto, logits or probs)");
}

Classifier::Classifier() : impl_(std::make_unique<Impl>()) {}
Classifier::~Classifier() = default;

std::unique_ptr<Classifier> Classifier::Load(const std::string& path,
                                             const ClassifierOptions& opt) {
  if (!std::filesystem::exists(path)) throw ModelError(path + ": model file not found");
  if (opt.threads > 0) {
    at::set_num_threads(opt.threads);
    SetOpenBlasThreads(opt.threads);
  }
  std::unique_ptr<Classifier> clf(new Classifier());
  clf->path_ = path;
  try {
    clf->impl_->module = torch::jit::load(path, torch::kCPU);
    clf->impl_->module.eval();
  } catch (const std::exception& e) {
    throw ModelError(path + ": not a loadable TorchScript module (" + FirstLine(e.what()) + ")");
  }
  std::vector<std::array<int, 3>> shapes;
  if (opt.channels > 0 && opt.height > 0 && opt.width > 0)
    shapes.push_back({opt.channels, opt.height, opt.width});
  else
    shapes = {{1, 28, 28}, {3, 32, 32}, {3, 224, 224}};
  torch::Tensor out;
  std::string last_error;
  bool ok = false;
  for (const auto& s : shapes) {
    std::vector<float> probe(2 * s[0] * s[1] * s[2], 0.5f);
    try {
      out = clf->impl_->Forward(probe.data(), 2, s[0], s[1], s[2]);
      clf->c_ = s[0];
      clf->h_ = s[1];
      clf->w_ = s[2];
      ok = true;
      break;
    } catch (const std::exception& e) {
      last_error = FirstLine(e.what());
    }
  }
  if (!ok) {
    std::ostringstream m;
    m << path << ": the model rejects input ";
    if (shapes.size() == 1)
      m << "[N, " << shapes[0][0] << ", " << shapes[0][1] << ", " << shapes[0][2] << "]";
    else
      m << "of every probed shape ([N,1,28,28], [N,3,32,32], [N,3,224,224]); pass the shape";
    m << " (" << last_error << ")";
    throw ModelError(m.str());
  }
  if (out.dim() != 2 || out.size(0) != 2 || out.size(1) < 2) {
    std::ostringstream m;
    m << path << ": output must be [N, classes] with classes >= 2, got " << out.sizes();
    throw ModelError(m.str());
  }
  if (!torch::isfinite(out).all().item<bool>())
    throw ModelError(path + ": the model returned non-finite scores on a probe batch");
  clf->classes_ = static_cast<int>(out.size(1));
  if (opt.output == OutputKind::kAuto) {
    const bool nonneg = (out >= 0).all().item<bool>();
    const bool sums = ((out.sum(1) - 1.0).abs() < 1e-3).all().item<bool>();
    clf->logits_ = !(nonneg && sums);
  } else {
    clf->logits_ = opt.output == OutputKind::kLogits;
  }
  return clf;
}

Eigen::MatrixXd Classifier::LogProbabilities(const float* images, int n) const {
  if (n <= 0) return Eigen::MatrixXd(0, classes_);
  torch::Tensor out;
  try {
    out = impl_->Forward(images, n, c_, h_, w_);
  } catch (const ModelError&) {
    throw;
  } catch (const std::exception& e) {
    throw ModelError(path_ + ": forward pass failed (" + FirstLine(e.what()) + ")");
  }
  if (out.dim() != 2 || out.size(0) != n || out.size(1) != classes_)
    throw ModelError(path_ + ": output shape changed between calls");
  torch::Tensor lp = logits_ ? torch::log_softmax(out, 1)
                             : torch::log(out.clamp_min(1e-300) /
                                          out.clamp_min(0).sum(1, true).clamp_min(1e-300));
  if (!torch::isfinite(lp).all().item<bool>())
    throw ModelError(path_ + ": the model returned non-finite scores");
  Eigen::MatrixXd m(n, classes_);
  auto acc = lp.accessor<double, 2>();
  for (int i = 0; i < n; ++i)
    for (int c = 0; c < classes_; ++c) m(i, c) = acc[i][c];
  return m;
}

}  // namespace advbo::oracle
