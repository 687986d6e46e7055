// The PNGs of an attacked instance (`advbo attack --save-images`, `advbo bench --save-images`):
// the clean image, a hard-label run's closest adversarial query, and -- only when the 8-bit
// image inside the ball was verified adversarial by a query -- that image and its amplified
// perturbation.
#pragma once

#include <filesystem>
#include <string>

#include "data/datasets.h"
#include "experiment/runner.h"
#include "experiment/setup.h"

namespace advbo::cli {

/// Writes into `folder` (which must exist): clean_<tag>.png, closest_<tag>.png (a hard-label
/// run's closest adversarial query, possibly outside the ball; exact on the default 8-bit
/// query grid) and, when job.quantized_success, adversarial_<tag>.png (8-bit, inside the
/// eps-ball: the PNG is exactly the verified image) and perturbation_<tag>.png (the
/// perturbation amplified to [0, 1]: 0.5 + delta / (2 eps)). tag = "<image>_t<target|u>".
/// `eps` is the ball's radius in pixel units (> 0). Returns whether the adversarial image
/// was written. Throws data::DataError when a file cannot be written.
bool SaveInstanceImages(const std::filesystem::path& folder, const experiment::Instance& inst,
                        const experiment::JobResult& job, const data::ImageSet& images, double eps);

/// A folder name for attack spec `spec`: its characters outside [A-Za-z0-9._=-] become '_'
/// ("oars:quantization=50/square" -> "oars_quantization=50_square").
std::string FolderNameOf(const std::string& spec);

}  // namespace advbo::cli
