#include "whitebox/model.h"

#include <filesystem>
#include <limits>

#include "oracle/oracle.h"
#include "oracle/sanitizer_allocator.h"

namespace advbo::whitebox {
namespace {

std::string FirstLine(const std::string& s) { return s.substr(0, s.find('\n')); }

}  // namespace

Model::Model(const std::string& path, const std::optional<oracle::Normalization>& normalize,
             bool outputs_logits, int channels)
    : path_(path), logits_(outputs_logits) {
  if (!std::filesystem::exists(path)) throw oracle::ModelError(path + ": model file not found");
  oracle::InstallSanitizerTensorAllocator();
  try {
    module_ = torch::jit::load(path, torch::kCPU);
    module_.eval();
    for (auto p : module_.parameters()) p.set_requires_grad(false);
  } catch (const std::exception& e) {
    throw oracle::ModelError(path + ": not a loadable TorchScript module (" + FirstLine(e.what()) +
                             ")");
  }
  if (normalize) {
    const bool one = normalize->mean.size() == 1;
    std::vector<float> mean(channels), sd(channels);
    for (int c = 0; c < channels; ++c) {
      mean[c] = normalize->mean[one ? 0 : c];
      sd[c] = normalize->std[one ? 0 : c];
    }
    mean_ = torch::tensor(mean).view({1, channels, 1, 1});
    std_ = torch::tensor(sd).view({1, channels, 1, 1});
  }
}

torch::Tensor Model::Scores(const torch::Tensor& x) {
  torch::Tensor in = mean_.defined() ? (x - mean_) / std_ : x;
  torch::Tensor out;
  try {
    torch::jit::IValue v = module_.forward({in});
    if (!v.isTensor()) throw oracle::ModelError(path_ + ": forward() did not return a tensor");
    out = v.toTensor().to(torch::kFloat32);
  } catch (const oracle::ModelError&) {
    throw;
  } catch (const std::exception& e) {
    throw oracle::ModelError(path_ + ": forward/backward pass failed (" + FirstLine(e.what()) +
                             ")");
  }
  if (out.dim() != 2 || out.size(0) != x.size(0))
    throw oracle::ModelError(path_ + ": output must be [N, classes]");
  return logits_ ? out : torch::log(out.clamp_min(1e-30));
}

torch::Tensor Margin(const torch::Tensor& z, const torch::Tensor& y) {
  const torch::Tensor zy = z.gather(1, y.unsqueeze(1)).squeeze(1);
  const torch::Tensor others =
      z.scatter(1, y.unsqueeze(1), -std::numeric_limits<float>::infinity());
  return zy - std::get<0>(others.max(1));
}

Findings::Findings(const Batch& b) {
  const int64_t m = b.x0.size(0);
  found = torch::zeros({m}, torch::kBool);
  adv = b.x0.clone();
  adv_margin = torch::zeros({m}, torch::kFloat32);
  adv_class = torch::full({m}, -1, torch::kLong);
  low_margin = torch::full({m}, std::numeric_limits<float>::infinity(), torch::kFloat32);
  zero_gradient = torch::zeros({m}, torch::kBool);
}

void Findings::Record(const Batch& b, const torch::Tensor& xc, const torch::Tensor& zc,
                      const torch::Tensor& mask, bool keep_closest) {
  torch::Tensor m = Margin(zc, b.y);
  if (mask.defined())
    m = torch::where(mask, m, torch::full_like(m, std::numeric_limits<float>::infinity()));
  low_margin = torch::min(low_margin, m);
  torch::Tensor fresh = m < 0;
  if (keep_closest) {
    const torch::Tensor dist = (xc - b.x0).flatten(1).abs().amax(1);
    const torch::Tensor old = (adv - b.x0).flatten(1).abs().amax(1);
    fresh = fresh.logical_and(found.logical_not().logical_or(dist < old));
  } else {
    fresh = fresh.logical_and(found.logical_not());
  }
  if (!fresh.any().item<bool>()) return;
  found = found.logical_or(fresh);
  adv = torch::where(fresh.view({-1, 1, 1, 1}), xc, adv);
  adv_margin = torch::where(fresh, m, adv_margin);
  adv_class = torch::where(fresh, zc.argmax(1), adv_class);
}

torch::Tensor Checked(const Batch& b, const torch::Tensor& x, bool grid) {
  if (!grid) return x;
  torch::Tensor k = torch::round(x * 255.0f);
  k = torch::max(torch::min(k, b.grid_hi), b.grid_lo);
  return k / 255.0f;
}

torch::Tensor ProjectToBall(const Batch& b, const torch::Tensor& x) {
  return torch::max(torch::min(x, b.hi), b.lo);
}

}  // namespace advbo::whitebox
