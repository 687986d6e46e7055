#include "defenses/stateful_detector.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

#include "text/numbers.h"
#include "text/settings.h"
namespace advbo::defenses {
namespace {

// 64-bit FNV-1a over the window's quantised values, finished with the splitmix64 mixer so
// that "the largest hashes" is a uniform choice of windows (Blacklight uses SHA-256 for the
// same purpose; any well-mixed hash serves, the fingerprint only needs equal windows to
// hash equally and different ones to differ).
uint64_t HashWindow(const uint8_t* v, int n) {
  uint64_t h = 1469598103934665603ull;
  for (int i = 0; i < n; ++i) {
    h ^= v[i];
    h *= 1099511628211ull;
  }
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebull;
  h ^= h >> 31;
  return h;
}

}  // namespace

BlacklightOptions ParseBlacklightSettings(const std::string& part, const std::string& settings) {
  BlacklightOptions o;
  for (const auto& setting : text::SplitSettings(settings, "defense '" + part + "'")) {
    const std::string& key = setting.first;  // named, not bound: the lambda below captures it
    const std::string& value = setting.second;
    if (key == "action") {
      if (value != "reject" && value != "flag")
        throw std::invalid_argument("defense '" + part + "': action must be reject or flag");
      o.reject = value == "reject";
      continue;
    }
    long v = 0;
    try {
      v = text::ParseInteger(value, key);
    } catch (const std::invalid_argument&) {
      throw std::invalid_argument("defense '" + part + "': " + key + " must be an integer");
    }
    auto in = [&](long lo, long hi) {
      if (v < lo || v > hi)
        throw std::invalid_argument("defense '" + part + "': " + key + " must be in [" +
                                    std::to_string(lo) + ", " + std::to_string(hi) + "]");
      return static_cast<int>(v);
    };
    if (key == "quantization")
      o.quantization = in(1, 255);
    else if (key == "window")
      o.window = in(1, 100000);
    else if (key == "hashes")
      o.hashes = in(1, 10000);
    else if (key == "threshold")
      o.threshold = in(1, 10000);
    else
      throw std::invalid_argument("defense '" + part + "': unknown parameter '" + key +
                                  "' (expected quantization, window, hashes, threshold, action)");
  }
  if (o.threshold > o.hashes)
    throw std::invalid_argument("defense '" + part + "': threshold must be <= hashes");
  return o;
}

std::string BlacklightSpec(const BlacklightOptions& o) {
  return "blacklight:quantization=" + std::to_string(o.quantization) +
         ",window=" + std::to_string(o.window) + ",hashes=" + std::to_string(o.hashes) +
         ",threshold=" + std::to_string(o.threshold) + ",action=" + (o.reject ? "reject" : "flag");
}

void BlacklightOptions::Validate() const {
  if (quantization < 1 || quantization > 255 || window < 1 || hashes < 1 || threshold < 1 ||
      threshold > hashes)
    throw std::invalid_argument("blacklight: settings out of range");
}

void BlacklightOptions::ValidateFor(int values) const {
  Validate();
  const std::string spec = BlacklightSpec(*this);
  if (window > values)
    throw std::invalid_argument("defense '" + spec + "': window " + std::to_string(window) +
                                " is longer than the image's " + std::to_string(values) +
                                " pixel values, so no query has a window hash and the detector "
                                "can never fire; use window <= " +
                                std::to_string(values));
  const int windows = values - window + 1;
  if (threshold > windows)
    throw std::invalid_argument("defense '" + spec + "': threshold " + std::to_string(threshold) +
                                " exceeds the " + std::to_string(windows) +
                                " window hashes a fingerprint of a " + std::to_string(values) +
                                "-value image can hold (values - window + 1), so the detector "
                                "can never fire; use threshold <= " +
                                std::to_string(windows));
}

StatefulDetector::StatefulDetector(BlacklightOptions o) : opt_(o) { o.Validate(); }

std::vector<uint64_t> StatefulDetector::Fingerprint(const float* image, int size) const {
  std::vector<uint8_t> q(size);
  for (int i = 0; i < size; ++i) {
    const double v = std::clamp(static_cast<double>(image[i]), 0.0, 1.0) * 255.0;
    q[i] = static_cast<uint8_t>(std::floor(std::round(v) / opt_.quantization));
  }
  std::vector<uint64_t> h;
  for (int s = 0; s + opt_.window <= size; ++s) h.push_back(HashWindow(q.data() + s, opt_.window));
  std::sort(h.begin(), h.end(), std::greater<uint64_t>());
  h.erase(std::unique(h.begin(), h.end()), h.end());
  if (static_cast<int>(h.size()) > opt_.hashes) h.resize(opt_.hashes);
  return h;
}

bool StatefulDetector::Observe(const float* image, int size) {
  const std::vector<uint64_t> fp = Fingerprint(image, size);
  const int id = static_cast<int>(observed_++);
  // Shared hashes with each earlier query (only queries sharing at least one are touched).
  std::unordered_map<int, int> shared;
  int best = 0;
  for (uint64_t h : fp) {
    auto it = seen_.find(h);
    if (it == seen_.end()) continue;
    for (int other : it->second) best = std::max(best, ++shared[other]);
    if (best >= opt_.threshold) break;  // detected: the rest cannot change the verdict
  }
  for (uint64_t h : fp) seen_[h].push_back(id);
  const bool detected = best >= opt_.threshold;
  if (detected) {
    ++detections_;
    if (first_detection_ < 0) first_detection_ = observed_;
  }
  return detected;
}

}  // namespace advbo::defenses
