#include "defenses/defense.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <sstream>
#include <stdexcept>

#include "text/settings.h"
namespace advbo::defenses {
namespace {

// [C, H, W] floats in [0,1] <-> an OpenCV H x W image with C channels (BGR order for C = 3,
// so the JPEG codec's colour transform sees the channels it expects).
cv::Mat ToMat(const float* img, int c, int h, int w) {
  cv::Mat m(h, w, CV_32FC(c));
  for (int y = 0; y < h; ++y) {
    float* row = m.ptr<float>(y);
    for (int x = 0; x < w; ++x)
      for (int k = 0; k < c; ++k) row[x * c + (c == 3 ? 2 - k : k)] = img[(k * h + y) * w + x];
  }
  return m;
}

void FromMat(const cv::Mat& m32, float* img, int c, int h, int w) {
  for (int y = 0; y < h; ++y) {
    const float* row = m32.ptr<float>(y);
    for (int x = 0; x < w; ++x)
      for (int k = 0; k < c; ++k)
        img[(k * h + y) * w + x] = std::clamp(row[x * c + (c == 3 ? 2 - k : k)], 0.0f, 1.0f);
  }
}

// Applies `op` (an OpenCV H x W x C float image in, one out) to each of n images in place.
template <typename Op>
void MapImages(float* images, int n, int c, int h, int w, Op op) {
  const size_t d = static_cast<size_t>(c) * h * w;
  for (int b = 0; b < n; ++b) FromMat(op(ToMat(images + b * d, c, h, w)), images + b * d, c, h, w);
}

std::string Num(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

class Jpeg final : public Defense {
 public:
  explicit Jpeg(int q) : q_(q) {}
  std::string Spec() const override { return "jpeg:quality=" + std::to_string(q_); }
  void Apply(float* images, int n, int c, int h, int w, bo::Rng&) const override {
    MapImages(images, n, c, h, w, [&](const cv::Mat& in) {
      cv::Mat m8, f;
      in.convertTo(m8, CV_8U, 255.0);
      std::vector<uchar> buf;
      if (!cv::imencode(".jpg", m8, buf, {cv::IMWRITE_JPEG_QUALITY, q_}))
        throw std::runtime_error("jpeg defense: encoding failed");
      cv::Mat dec = cv::imdecode(buf, c == 1 ? cv::IMREAD_GRAYSCALE : cv::IMREAD_COLOR);
      if (dec.empty() || dec.channels() != c)
        throw std::runtime_error("jpeg defense: decoding failed");
      dec.convertTo(f, CV_32F, 1.0 / 255.0);
      return f;
    });
  }

 private:
  int q_;
};

class BitDepth final : public Defense {
 public:
  explicit BitDepth(int bits) : bits_(bits) {}
  std::string Spec() const override { return "bits:depth=" + std::to_string(bits_); }
  void Apply(float* images, int n, int c, int h, int w, bo::Rng&) const override {
    const float levels = static_cast<float>((1 << bits_) - 1);
    const size_t total = static_cast<size_t>(n) * c * h * w;
    for (size_t i = 0; i < total; ++i)
      images[i] = std::round(std::clamp(images[i], 0.0f, 1.0f) * levels) / levels;
  }

 private:
  int bits_;
};

class Median final : public Defense {
 public:
  explicit Median(int k) : k_(k) {}
  std::string Spec() const override { return "median:size=" + std::to_string(k_); }
  void Apply(float* images, int n, int c, int h, int w, bo::Rng&) const override {
    MapImages(images, n, c, h, w, [&](const cv::Mat& in) {
      cv::Mat out;
      cv::medianBlur(in, out, k_);
      return out;
    });
  }

 private:
  int k_;
};

class Blur final : public Defense {
 public:
  explicit Blur(double s) : s_(s) {}
  std::string Spec() const override { return "blur:sigma=" + Num(s_); }
  void Apply(float* images, int n, int c, int h, int w, bo::Rng&) const override {
    const int k = 2 * static_cast<int>(std::ceil(3 * s_)) + 1;
    MapImages(images, n, c, h, w, [&](const cv::Mat& in) {
      cv::Mat out;
      cv::GaussianBlur(in, out, cv::Size(k, k), s_, s_, cv::BORDER_REFLECT);
      return out;
    });
  }

 private:
  double s_;
};

class Noise final : public Defense {
 public:
  explicit Noise(double s) : s_(s) {}
  std::string Spec() const override { return "noise:sigma=" + Num(s_); }
  bool randomized() const override { return true; }
  void Apply(float* images, int n, int c, int h, int w, bo::Rng& rng) const override {
    std::normal_distribution<double> g(0.0, s_);
    const size_t total = static_cast<size_t>(n) * c * h * w;
    for (size_t i = 0; i < total; ++i)
      images[i] = std::clamp(static_cast<float>(images[i] + g(rng)), 0.0f, 1.0f);
  }

 private:
  double s_;
};

class ResizePad final : public Defense {
 public:
  explicit ResizePad(double r) : r_(r) {}
  std::string Spec() const override { return "resize:ratio=" + Num(r_); }
  bool randomized() const override { return true; }
  void Apply(float* images, int n, int c, int h, int w, bo::Rng& rng) const override {
    const int big_h = static_cast<int>(std::lround(h * (1 + r_)));
    const int big_w = static_cast<int>(std::lround(w * (1 + r_)));
    MapImages(images, n, c, h, w, [&](const cv::Mat& in) {
      std::uniform_int_distribution<int> side_h(h, big_h);
      const int nh = side_h(rng);
      const int nw = static_cast<int>(std::lround(static_cast<double>(nh) * w / h));
      const int rw = std::min(nw, big_w);
      cv::Mat small;
      cv::resize(in, small, cv::Size(rw, nh), 0, 0, cv::INTER_LINEAR);
      std::uniform_int_distribution<int> top(0, big_h - nh), left(0, big_w - rw);
      cv::Mat canvas = cv::Mat::zeros(big_h, big_w, small.type());
      small.copyTo(canvas(cv::Rect(left(rng), top(rng), rw, nh)));
      cv::Mat out;
      cv::resize(canvas, out, cv::Size(w, h), 0, 0, cv::INTER_AREA);
      return out;
    });
  }

 private:
  double r_;
};

// "name:key=value,key=value" -> name and parameters.
std::map<std::string, std::string> ParamsOf(const std::string& part, std::string* name) {
  const auto colon = part.find(':');
  *name = part.substr(0, colon);
  std::map<std::string, std::string> p;
  if (colon == std::string::npos) return p;
  for (auto& [key, value] : text::SplitSettings(part.substr(colon + 1), "defense '" + part + "'"))
    p[key] = value;
  return p;
}

double NumberParam(const std::map<std::string, std::string>& p, const std::string& part,
                   const std::string& key, double def) {
  auto it = p.find(key);
  if (it == p.end()) return def;
  try {
    size_t used = 0;
    const double v = std::stod(it->second, &used);
    if (used != it->second.size() || !std::isfinite(v)) throw std::invalid_argument("x");
    return v;
  } catch (const std::exception&) {
    throw std::invalid_argument("defense '" + part + "': " + key + " must be a number");
  }
}

void OnlyKeys(const std::map<std::string, std::string>& p, const std::string& part,
              const std::string& key) {
  for (const auto& [k, v] : p)
    if (k != key)
      throw std::invalid_argument("defense '" + part + "': unknown parameter '" + k +
                                  "' (expected " + key + ")");
}

int IntParam(const std::map<std::string, std::string>& p, const std::string& part,
             const std::string& key, int def, int lo, int hi) {
  const double v = NumberParam(p, part, key, def);
  if (v != std::floor(v) || v < lo || v > hi)
    throw std::invalid_argument("defense '" + part + "': " + key + " must be an integer in [" +
                                std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return static_cast<int>(v);
}

}  // namespace

std::vector<std::string> DefenseNames() {
  return {"jpeg",   "bits",  "median", "blur", "noise",
          "resize", "round", "topk",   "aaa",  "blacklight"};
}

std::string DefensePipeline::Spec() const {
  if (empty()) return "none";
  std::string s;
  for (const auto& d : stages_) s += (s.empty() ? "" : "+") + d->Spec();
  for (const auto& d : outputs_) s += (s.empty() ? "" : "+") + d->Spec();
  if (detector_) s += (s.empty() ? "" : "+") + BlacklightSpec(*detector_);
  return s;
}

bool DefensePipeline::randomized() const {
  for (const auto& d : stages_)
    if (d->randomized()) return true;
  for (const auto& d : outputs_)
    if (d->randomized()) return true;
  return false;
}

void DefensePipeline::ApplyOutput(Eigen::MatrixXd* log_probs, bo::Rng& rng) const {
  for (const auto& d : outputs_) d->Apply(log_probs, rng);
}

std::string EotWrapped(const std::string& base) { return "eot:k=10/" + base; }

std::string DefensePipeline::AdaptiveAttack(const std::string& base) const {
  // Innermost first: oars acts on whole queries, eot on each of them, aaa-adaptive on each
  // sample (attacks/adaptive/adaptive.h).
  std::string attack = base;
  if (detector_)
    attack = "oars:quantization=" + std::to_string(detector_->quantization) + "/" + attack;
  if (randomized()) attack = EotWrapped(attack);
  for (const auto& d : outputs_) {
    const std::string wrapper = d->AdaptiveWrapper();
    if (!wrapper.empty()) attack = wrapper + "/" + attack;
  }
  return attack;
}

void DefensePipeline::Apply(float* images, int n, int c, int h, int w, bo::Rng& rng) const {
  for (const auto& d : stages_) d->Apply(images, n, c, h, w, rng);
}

DefensePipeline ParseDefense(const std::string& spec) {
  std::vector<std::shared_ptr<const Defense>> stages;
  std::vector<std::shared_ptr<const OutputDefense>> outputs;
  std::optional<BlacklightOptions> detector;
  if (spec.empty() || spec == "none") return DefensePipeline();
  std::stringstream ss(spec);
  std::string part;
  while (std::getline(ss, part, '+')) {
    if (part.substr(0, part.find(':')) == "blacklight") {
      if (detector) throw std::invalid_argument("defense '" + spec + "': one blacklight only");
      const auto colon = part.find(':');
      detector =
          ParseBlacklightSettings(part, colon == std::string::npos ? "" : part.substr(colon + 1));
      continue;
    }
    std::string name;
    const auto p = ParamsOf(part, &name);
    if (IsOutputDefenseName(name)) {
      outputs.push_back(MakeOutputDefense(name, part, {p.begin(), p.end()}));
    } else if (name == "jpeg") {
      OnlyKeys(p, part, "quality");
      stages.push_back(std::make_shared<Jpeg>(IntParam(p, part, "quality", 75, 1, 100)));
    } else if (name == "bits") {
      OnlyKeys(p, part, "depth");
      stages.push_back(std::make_shared<BitDepth>(IntParam(p, part, "depth", 4, 1, 8)));
    } else if (name == "median") {
      OnlyKeys(p, part, "size");
      const int k = IntParam(p, part, "size", 3, 3, 5);
      if (k == 4) throw std::invalid_argument("defense '" + part + "': size must be 3 or 5");
      stages.push_back(std::make_shared<Median>(k));
    } else if (name == "blur") {
      OnlyKeys(p, part, "sigma");
      const double s = NumberParam(p, part, "sigma", 1.0);
      if (!(s > 0 && s <= 10))
        throw std::invalid_argument("defense '" + part + "': sigma in (0, 10]");
      stages.push_back(std::make_shared<Blur>(s));
    } else if (name == "noise") {
      OnlyKeys(p, part, "sigma");
      const double s = NumberParam(p, part, "sigma", 0.02);
      if (!(s > 0 && s <= 1))
        throw std::invalid_argument("defense '" + part + "': sigma in (0, 1]");
      stages.push_back(std::make_shared<Noise>(s));
    } else if (name == "resize") {
      OnlyKeys(p, part, "ratio");
      const double r = NumberParam(p, part, "ratio", 0.1);
      if (!(r > 0 && r <= 1))
        throw std::invalid_argument("defense '" + part + "': ratio in (0, 1]");
      stages.push_back(std::make_shared<ResizePad>(r));
    } else {
      throw std::invalid_argument("unknown defense '" + name +
                                  "' (use jpeg, bits, median, blur, noise, resize, round, topk, "
                                  "aaa or blacklight, joined by +)");
    }
  }
  return DefensePipeline(std::move(stages), std::move(outputs), detector);
}

}  // namespace advbo::defenses
