// The TorchScript back end: the only place LibTorch is used by the oracle.
#include <ATen/Parallel.h>
#include <dlfcn.h>
#include <torch/script.h>

#include <filesystem>
#include <sstream>

#include "oracle/classifier.h"
#include "oracle/sanitizer_allocator.h"

namespace advbo::oracle {
namespace {

std::string FirstLine(const std::string& s) {
  auto p = s.find('\n');
  return p == std::string::npos ? s : s.substr(0, p);
}

// The model's own message in a LibTorch exception text. An exception raised inside a
// scripted forward() comes as "The following operation failed in the TorchScript
// interpreter." plus two tracebacks and ends with the message itself (e.g. "builtins.
// ValueError: input too bright", "RuntimeError: mat1 and mat2 shapes cannot be multiplied
// (1x784 and 100x10)"): take that last line. Other c10 errors put the message first and a
// C++ backtrace after it: take the first line.
std::string ModelMessage(const std::string& what) {
  if (what.rfind("The following operation failed in the TorchScript interpreter", 0) == 0) {
    size_t end = what.find_last_not_of(" \n\r\t");
    if (end != std::string::npos) {
      const size_t start = what.rfind('\n', end);
      return what.substr(start == std::string::npos ? 0 : start + 1,
                         end - (start == std::string::npos ? 0 : start + 1) + 1);
    }
  }
  return FirstLine(what);
}

// OpenBLAS's own thread count is not set by at::set_num_threads; look the setter up at
// run time because libblas.so.3 may be OpenBLAS or the reference BLAS (no such symbol).
// OpenBLAS always runs one thread: on some CPUs (seen on AMD EPYC) its sgemm results change
// in the last bits with its thread count, and records must not depend on --threads.
// LibTorch's intra-op threads (--threads) parallelise the layers instead, bit-reproducibly.
void SetOpenBlasThreads(int threads) {
  using Setter = void (*)(int);
  if (auto f = reinterpret_cast<Setter>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads")))
    f(threads);
}

class TorchScriptBackend : public ScoreBackend {
 public:
  explicit TorchScriptBackend(std::string path) : path_(std::move(path)) {}

  void Load(ModelGraph graph) {
    InstallSanitizerTensorAllocator();
    try {
      module_ = torch::jit::load(path_, torch::kCPU);
      module_.eval();
    } catch (const std::exception& e) {
      throw ModelError(path_ + ": not a loadable TorchScript module (" + FirstLine(e.what()) + ")");
    }
    if (graph == ModelGraph::kFrozen) Freeze();
  }

  // torch.jit.freeze + optimize_for_inference (the C++ API of both); the plain module stays
  // when either fails, with the reason in graph_note_.
  void Freeze() {
    try {
      torch::jit::Module frozen = torch::jit::freeze(module_);
      module_ = torch::jit::optimize_for_inference(frozen);
      graph_ = "frozen";
    } catch (const std::exception& e) {
      graph_note_ = path_ + ": cannot be frozen for inference (" + ModelMessage(e.what()) +
                    "); running the plain module";
    }
  }

  std::string graph() const override { return graph_; }
  std::string graph_note() const override { return graph_note_; }

  Eigen::MatrixXd Scores(const float* images, int n, int c, int h, int w,
                         const QueryContext*) const override {
    torch::Tensor out;
    try {
      c10::InferenceMode inference;
      torch::Tensor x = torch::from_blob(const_cast<float*>(images), {n, c, h, w}, torch::kFloat32);
      torch::jit::IValue v = module_.forward({x});
      if (!v.isTensor())
        throw OutputError(path_ + ": the model's forward() did not return a tensor");
      out = v.toTensor().to(torch::kFloat64).contiguous();
    } catch (const ModelError&) {
      throw;
    } catch (const std::exception& e) {
      throw ModelError(path_ + ": forward pass failed (" + ModelMessage(e.what()) + ")");
    }
    if (out.dim() != 2) {
      std::ostringstream m;
      m << path_ << ": output must be [N, classes], got " << out.sizes();
      throw OutputError(m.str());
    }
    const auto rows = out.size(0), cols = out.size(1);
    Eigen::MatrixXd m(rows, cols);
    auto acc = out.accessor<double, 2>();
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t k = 0; k < cols; ++k) m(i, k) = acc[i][k];
    return m;
  }

  std::string name() const override { return path_; }

 private:
  std::string path_;
  std::string graph_ = "plain", graph_note_;
  mutable torch::jit::Module module_;
};

}  // namespace

std::string BlasLibrary() {
  // openblas_get_config writes into one static buffer on every call, so concurrent calls
  // (instances in lockstep write records on several threads) garble it: ask once.
  static const std::string blas = [] {
    using Getter = char* (*)();
    if (auto f = reinterpret_cast<Getter>(dlsym(RTLD_DEFAULT, "openblas_get_config")))
      return std::string(f());  // e.g. "OpenBLAS 0.3.21 DYNAMIC_ARCH ... Haswell MAX_THREADS=64"
    return std::string("reference BLAS");
  }();
  return blas;
}

int InferenceThreads() { return at::get_num_threads(); }

void SetInferenceThreads(int threads) {
  if (threads < 1)
    throw std::invalid_argument("inference threads must be >= 1, got " + std::to_string(threads));
  if (at::get_num_threads() != threads) at::set_num_threads(threads);
}

std::unique_ptr<ScoreBackend> MakeTorchScriptBackend(const std::string& path, int threads,
                                                     ModelGraph graph) {
  if (!std::filesystem::exists(path)) throw ModelError(path + ": model file not found");
  SetOpenBlasThreads(1);
  if (threads > 0) at::set_num_threads(threads);
  auto b = std::make_unique<TorchScriptBackend>(path);
  b->Load(graph);
  return b;
}

}  // namespace advbo::oracle
