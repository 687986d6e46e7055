#include "algorithms/hpo/cnn_task.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <sstream>

namespace advbo::hpo {
namespace {

struct NetImpl : torch::nn::Module {
  NetImpl(int channels, int height, int width, int filters, int classes)
      : conv1(torch::nn::Conv2dOptions(channels, filters, 3).padding(1)),
        conv2(torch::nn::Conv2dOptions(filters, 2 * filters, 3).padding(1)),
        fc1(2 * filters * (height / 4) * (width / 4), 64),
        fc2(64, classes) {
    register_module("conv1", conv1);
    register_module("conv2", conv2);
    register_module("fc1", fc1);
    register_module("fc2", fc2);
  }
  torch::Tensor forward(torch::Tensor x) {
    x = torch::max_pool2d(torch::relu(conv1->forward(x)), 2);
    x = torch::max_pool2d(torch::relu(conv2->forward(x)), 2);
    x = torch::relu(fc1->forward(x.flatten(1)));
    return fc2->forward(x);
  }
  torch::nn::Conv2d conv1, conv2;
  torch::nn::Linear fc1, fc2;
};
TORCH_MODULE(Net);

class CnnTask final : public HpoTask {
 public:
  CnnTask(std::string name, TaskData data, uint64_t seed)
      : name_(std::move(name)), data_(std::move(data)), seed_(seed) {
    params_ = {{"batch_size", 16, 256, true, true},
               {"learning_rate", 1e-4, 0.3, true, false},
               {"l2", 1e-7, 1e-2, true, false},
               {"filters", 8, 32, true, true}};
    auto to_tensor = [](const LabelledData& d, torch::Tensor* x, torch::Tensor* y) {
      const auto n = static_cast<int64_t>(d.x.rows());
      *x = torch::from_blob(const_cast<float*>(d.x.data()), {n, d.channels, d.height, d.width},
                            torch::kFloat32)
               .clone();
      std::vector<int64_t> labels(d.y.begin(), d.y.end());
      *y = torch::tensor(labels, torch::kInt64);
    };
    to_tensor(data_.train, &train_x_, &train_y_);
    to_tensor(data_.val, &val_x_, &val_y_);
  }
  std::string name() const override { return name_; }
  const std::vector<HpoParam>& params() const override { return params_; }
  int default_epochs() const override { return 20; }
  std::string Describe() const override {
    return name_ + ": 2-conv CNN, SGD with momentum 0.9; " + data_.source;
  }

  std::vector<double> Evaluate(const Eigen::VectorXd& x, int epochs,
                               const EpochCallback& on_epoch) const override {
    CheckPoint(x);
    if (epochs < 1) throw std::invalid_argument(name_ + ": epochs must be >= 1");
    torch::manual_seed(EvaluationSeed(seed_, x));
    const int64_t batch = std::lround(x(0));
    const int filters = static_cast<int>(std::lround(x(3)));
    Net net(data_.train.channels, data_.train.height, data_.train.width, filters,
            data_.train.num_classes);
    torch::optim::SGD opt(net->parameters(),
                          torch::optim::SGDOptions(x(1)).momentum(0.9).weight_decay(x(2)));
    const int64_t n = train_x_.size(0);
    std::vector<double> errors;
    bool diverged = false;
    for (int e = 1; e <= epochs; ++e) {
      net->train();
      torch::Tensor perm = torch::randperm(n, torch::kInt64);
      for (int64_t s = 0; s < n && !diverged; s += batch) {
        torch::Tensor idx = perm.slice(0, s, std::min(n, s + batch));
        opt.zero_grad();
        torch::Tensor loss = torch::cross_entropy_loss(net->forward(train_x_.index_select(0, idx)),
                                                       train_y_.index_select(0, idx));
        if (!std::isfinite(loss.item<double>())) diverged = true;
        loss.backward();
        opt.step();
      }
      double err = 1.0;
      if (!diverged) {
        torch::NoGradGuard guard;
        net->eval();
        torch::Tensor pred = net->forward(val_x_).argmax(1);
        err = 1.0 - pred.eq(val_y_).to(torch::kFloat64).mean().item<double>();
      }
      errors.push_back(err);
      if (on_epoch && !on_epoch(e, err)) break;
    }
    return errors;
  }

 private:
  std::string name_;
  TaskData data_;
  uint64_t seed_;
  std::vector<HpoParam> params_;
  torch::Tensor train_x_, train_y_, val_x_, val_y_;
};

}  // namespace

std::unique_ptr<HpoTask> MakeCnnTask(const std::string& name, TaskData data, uint64_t seed) {
  if (data.train.height < 4 || data.train.width < 4)
    throw std::invalid_argument(name + ": images must be at least 4x4");
  return std::make_unique<CnnTask>(name, std::move(data), seed);
}

}  // namespace advbo::hpo
