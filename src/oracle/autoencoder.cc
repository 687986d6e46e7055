#include "oracle/autoencoder.h"

#include <torch/script.h>

#include <algorithm>
#include <filesystem>

#include "oracle/sanitizer_allocator.h"

namespace advbo::oracle {

struct Autoencoder::Impl {
  mutable torch::jit::Module module;
};

Autoencoder::Autoencoder() : impl_(std::make_unique<Impl>()) {}
Autoencoder::~Autoencoder() = default;

namespace {
std::string FirstLineOf(const std::string& s) {
  auto p = s.find('\n');
  return p == std::string::npos ? s : s.substr(0, p);
}
}  // namespace

std::unique_ptr<Autoencoder> Autoencoder::Load(const std::string& path, int c, int h, int w) {
  if (!std::filesystem::exists(path)) throw ModelError(path + ": autoencoder file not found");
  std::unique_ptr<Autoencoder> ae(new Autoencoder());
  ae->path_ = path;
  ae->c_ = c;
  ae->h_ = h;
  ae->w_ = w;
  InstallSanitizerTensorAllocator();
  try {
    ae->impl_->module = torch::jit::load(path, torch::kCPU);
    ae->impl_->module.eval();
  } catch (const std::exception& e) {
    throw ModelError(path + ": not a loadable TorchScript module (" + FirstLineOf(e.what()) + ")");
  }
  for (const char* m : {"encode", "decode"})
    if (!ae->impl_->module.find_method(m))
      throw ModelError(path + ": the module has no " + m +
                       "() method (see tools/train/train_vae.py)");
  std::vector<float> probe(2 * c * h * w, 0.5f);
  Eigen::MatrixXd z;
  try {
    z = ae->Encode(probe.data(), 2);
  } catch (const ModelError&) {
    throw;
  } catch (const std::exception& e) {
    throw ModelError(path + ": encode() failed on [2," + std::to_string(c) + "," +
                     std::to_string(h) + "," + std::to_string(w) + "] (" + FirstLineOf(e.what()) +
                     ")");
  }
  ae->z_ = static_cast<int>(z.cols());
  try {
    std::vector<float> x = ae->Decode(z);
    if (x.size() != probe.size()) throw ModelError("size");
  } catch (const std::exception& e) {
    throw ModelError(path + ": decode() does not map [2," + std::to_string(ae->z_) +
                     "] latents back to images of the input shape (" + FirstLineOf(e.what()) + ")");
  }
  return ae;
}

Eigen::MatrixXd Autoencoder::Encode(const float* images, int n) const {
  torch::NoGradGuard no_grad;
  torch::Tensor x = torch::from_blob(const_cast<float*>(images), {n, c_, h_, w_}, torch::kFloat32);
  torch::jit::IValue out = impl_->module.run_method("encode", x);
  if (!out.isTensor() || out.toTensor().dim() != 2 || out.toTensor().size(0) != n)
    throw ModelError(path_ + ": encode() must return a [N, z] tensor");
  torch::Tensor t = out.toTensor().to(torch::kFloat64).contiguous();
  Eigen::MatrixXd z(n, t.size(1));
  const double* p = t.data_ptr<double>();
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < z.cols(); ++j) z(i, j) = p[i * z.cols() + j];
  if (!z.allFinite()) throw ModelError(path_ + ": encode() returned non-finite values");
  return z;
}

std::vector<float> Autoencoder::Decode(const Eigen::MatrixXd& z) const {
  torch::NoGradGuard no_grad;
  const int n = static_cast<int>(z.rows());
  std::vector<float> zf(z.size());
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < z.cols(); ++j) zf[i * z.cols() + j] = static_cast<float>(z(i, j));
  torch::Tensor zt = torch::from_blob(zf.data(), {n, static_cast<long>(z.cols())}, torch::kFloat32);
  torch::jit::IValue out = impl_->module.run_method("decode", zt);
  if (!out.isTensor()) throw ModelError(path_ + ": decode() did not return a tensor");
  torch::Tensor t = out.toTensor().to(torch::kFloat32).contiguous();
  const size_t d = static_cast<size_t>(c_) * h_ * w_;
  if (t.numel() != static_cast<long>(n * d))
    throw ModelError(path_ + ": decode() returned " + std::to_string(t.numel()) + " values for " +
                     std::to_string(n) + " images of " + std::to_string(d));
  std::vector<float> x(t.data_ptr<float>(), t.data_ptr<float>() + n * d);
  for (float& v : x) {
    if (!std::isfinite(v)) throw ModelError(path_ + ": decode() returned non-finite values");
    v = std::clamp(v, 0.0f, 1.0f);
  }
  return x;
}

}  // namespace advbo::oracle
