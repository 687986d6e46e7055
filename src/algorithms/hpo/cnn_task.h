// A small CNN trained by SGD with momentum in LibTorch: the CNN workload of BO-BOS (Dai 2021
// thesis App. A.4.2, CNNs on CIFAR-10 / SVHN, scaled down to run on a CPU). LibTorch is
// confined to cnn_task.cc; this header exposes only the HpoTask interface.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "algorithms/hpo/hpo_task.h"

namespace advbo::hpo {

/// Builds the CNN task on `data` (any channels/size; the network is conv(k filters, 3x3) -
/// ReLU - maxpool 2 - conv(2k, 3x3) - ReLU - maxpool 2 - linear(fc) - ReLU - linear(10)).
/// Hyperparameters x = [batch size 16..256 (integer), learning rate [1e-4, 0.3], L2 weight
/// decay [1e-7, 1e-2], filters k 8..32 (integer)]. One epoch = one pass over the training
/// split; validation error after each. Deterministic per (task, x, seed) for a given LibTorch
/// thread count (the process-wide setting is left to the caller).
std::unique_ptr<HpoTask> MakeCnnTask(const std::string& name, TaskData data, uint64_t seed);

}  // namespace advbo::hpo
