#include "cli/save_images.h"

#include <cctype>
#include <vector>

namespace advbo::cli {

bool SaveInstanceImages(const std::filesystem::path& dir, const experiment::Instance& inst,
                        const experiment::JobResult& job, const data::ImageSet& images,
                        double eps) {
  const std::string tag =
      std::to_string(inst.index) + "_t" + (inst.target >= 0 ? std::to_string(inst.target) : "u");
  const int c = images.channels, h = images.height, w = images.width;
  data::WritePng((dir / ("clean_" + tag + ".png")).string(), job.clean.data(), c, h, w);
  if (!job.result.closest_adversarial.empty())
    data::WritePng((dir / ("closest_" + tag + ".png")).string(),
                   job.result.closest_adversarial.data(), c, h, w);
  if (!job.quantized_success) return false;
  const auto& adv = job.quantized;  // on the 8-bit grid, inside the eps-ball: the PNG is exact
  std::vector<float> amp(adv.size());
  for (size_t i = 0; i < amp.size(); ++i)
    amp[i] = static_cast<float>(0.5 + (adv[i] - job.clean[i]) / (2 * eps));
  data::WritePng((dir / ("adversarial_" + tag + ".png")).string(), adv.data(), c, h, w);
  data::WritePng((dir / ("perturbation_" + tag + ".png")).string(), amp.data(), c, h, w);
  return true;
}

std::string FolderNameOf(const std::string& spec) {
  std::string out = spec;
  for (char& ch : out)
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '.' && ch != '_' && ch != '=' &&
        ch != '-')
      ch = '_';
  return out;
}

}  // namespace advbo::cli
