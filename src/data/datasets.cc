#include "data/datasets.h"

#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <map>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

namespace advbo::data {
namespace fs = std::filesystem;
namespace {

// Whole file as bytes.
std::vector<uint8_t> ReadAll(const std::string& path) {
  if (!fs::exists(path)) throw DataError(path + ": file not found");
  // Regular files only, and at most kMaxDataFileBytes: /dev/zero or a FIFO would be read
  // forever, a huge file would exhaust memory before any check.
  std::error_code ec;
  if (!fs::is_regular_file(path, ec))
    throw DataError(path + ": not a regular file (a device, FIFO or folder cannot be data)");
  const auto size = fs::file_size(path, ec);
  if (ec) throw DataError(path + ": cannot read its size (" + ec.message() + ")");
  if (size > kMaxDataFileBytes)
    throw DataError(path + ": " + std::to_string(size) + " bytes, more than the limit of " +
                    std::to_string(kMaxDataFileBytes) + " bytes for one data file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw DataError(path + ": cannot open");
  std::vector<uint8_t> raw(static_cast<size_t>(size));
  in.read(reinterpret_cast<char*>(raw.data()), static_cast<std::streamsize>(size));
  if (in.bad() || in.gcount() != static_cast<std::streamsize>(size))
    throw DataError(path + ": read error");
  return raw;
}

uint32_t BigEndian32(const std::vector<uint8_t>& b, size_t off) {
  return (uint32_t(b[off]) << 24) | (uint32_t(b[off + 1]) << 16) | (uint32_t(b[off + 2]) << 8) |
         uint32_t(b[off + 3]);
}

// Appends decoded image m (any depth, 1/3/4 channels, OpenCV BGR order) to set as
// [C, H, W] floats in [0, 1]; the first image fixes the set's channels and size.
void AppendMat(cv::Mat m, const std::string& file, int label, int channels, ImageSet* set) {
  if (m.empty()) throw DataError(file + ": not a readable image (corrupt or unsupported)");
  if (m.channels() != 1 && m.channels() != 3 && m.channels() != 4)
    throw DataError(file + ": " + std::to_string(m.channels()) +
                    " colour channels (expected 1, 3 or 4)");
  if (m.depth() != CV_8U) m.convertTo(m, CV_8U, m.depth() == CV_16U ? 1.0 / 257 : 1.0);
  if (set->channels == 0) set->channels = channels ? channels : (m.channels() == 1 ? 1 : 3);
  if (set->channels == 1 && m.channels() != 1)
    cv::cvtColor(m, m, m.channels() == 4 ? cv::COLOR_BGRA2GRAY : cv::COLOR_BGR2GRAY);
  else if (set->channels == 3 && m.channels() == 1)
    cv::cvtColor(m, m, cv::COLOR_GRAY2RGB);
  else if (set->channels == 3)
    cv::cvtColor(m, m, m.channels() == 4 ? cv::COLOR_BGRA2RGB : cv::COLOR_BGR2RGB);
  if (set->size() == 0) {
    set->height = m.rows;
    set->width = m.cols;
  } else if (m.rows != set->height || m.cols != set->width) {
    throw DataError(file + ": size " + std::to_string(m.cols) + "x" + std::to_string(m.rows) +
                    " differs from the first image's " + std::to_string(set->width) + "x" +
                    std::to_string(set->height));
  }
  const size_t base = set->pixels.size();
  set->pixels.resize(base + set->image_size());
  for (int c = 0; c < set->channels; ++c)
    for (int y = 0; y < m.rows; ++y)
      for (int x = 0; x < m.cols; ++x)
        set->pixels[base + (size_t(c) * m.rows + y) * m.cols + x] =
            m.ptr<uint8_t>(y)[x * set->channels + c] / 255.0f;
  set->labels.push_back(label);
  set->sources.push_back(file);
}

// Decodes a PNG, JPEG or BMP file's bytes (checked by their signature first: OpenCV would
// otherwise pick any of its decoders by content, some of which go through temporary files).
cv::Mat DecodeMat(const std::vector<uint8_t>& bytes, const std::string& name) {
  if (bytes.empty()) throw DataError(name + ": empty file");
  auto starts = [&](std::initializer_list<uint8_t> sig) {
    return bytes.size() >= sig.size() && std::equal(sig.begin(), sig.end(), bytes.begin());
  };
  if (!starts({0x89, 'P', 'N', 'G', 0x0d, 0x0a, 0x1a, 0x0a}) && !starts({0xff, 0xd8, 0xff}) &&
      !starts({'B', 'M'}))
    throw DataError(name + ": not a PNG, JPEG or BMP image");
  const auto [w, h] = ImageHeaderSize(bytes);
  if (w > 0 && h > 0 && (w > kMaxImagePixels || h > kMaxImagePixels || w * h > kMaxImagePixels))
    throw DataError(name + ": the header says " + std::to_string(w) + " x " + std::to_string(h) +
                    " pixels, more than the limit of " + std::to_string(kMaxImagePixels) +
                    " (4096 x 4096); not decoded");
  try {
    return cv::imdecode(bytes, cv::IMREAD_UNCHANGED);
  } catch (const cv::Exception& e) {
    throw DataError(name + ": not a readable image (" + e.msg + ")");
  }
}

void CheckChannels(const std::string& path, int channels) {
  if (channels != 0 && channels != 1 && channels != 3)
    throw DataError(path + ": channels must be 1, 3 or 0 (auto), got " + std::to_string(channels));
}

}  // namespace

std::pair<long long, long long> ImageHeaderSize(const std::vector<uint8_t>& b) {
  auto be = [&](size_t at, int n) {
    long long v = 0;
    for (int i = 0; i < n; ++i) v = (v << 8) | b[at + i];
    return v;
  };
  auto le32 = [&](size_t at) {
    const uint32_t u = uint32_t(b[at]) | uint32_t(b[at + 1]) << 8 | uint32_t(b[at + 2]) << 16 |
                       uint32_t(b[at + 3]) << 24;
    return static_cast<long long>(static_cast<int32_t>(u));
  };
  if (b.size() >= 24 && b[0] == 0x89 && b[1] == 'P' && b[12] == 'I' && b[13] == 'H' &&
      b[14] == 'D' && b[15] == 'R')
    return {be(16, 4), be(20, 4)};  // PNG: IHDR is the first chunk
  if (b.size() >= 26 && b[0] == 'B' && b[1] == 'M') {
    const long long h = le32(22);  // negative = top-down rows
    return {le32(18), h < 0 ? -h : h};
  }
  if (b.size() >= 4 && b[0] == 0xff && b[1] == 0xd8) {  // JPEG: walk the segments to a SOFn
    size_t at = 2;
    while (at + 9 < b.size()) {
      if (b[at] != 0xff) return {-1, -1};
      const uint8_t m = b[at + 1];
      if (m == 0xff) {  // fill byte
        ++at;
        continue;
      }
      if (m == 0xd8 || (m >= 0xd0 && m <= 0xd7) || m == 0x01) {  // markers without a length
        at += 2;
        continue;
      }
      const bool sof = m >= 0xc0 && m <= 0xcf && m != 0xc4 && m != 0xc8 && m != 0xcc;
      if (sof) return {be(at + 7, 2), be(at + 5, 2)};
      if (m == 0xda || m == 0xd9) return {-1, -1};  // scan data before any SOF
      at += 2 + static_cast<size_t>(be(at + 2, 2));
    }
  }
  return {-1, -1};
}

std::vector<uint8_t> GunzipIfCompressed(const std::vector<uint8_t>& bytes,
                                        const std::string& name) {
  auto is_gzip = [&](size_t at) {
    return bytes.size() >= at + 2 && bytes[at] == 0x1f && bytes[at + 1] == 0x8b;
  };
  if (!is_gzip(0)) return bytes;
  std::vector<uint8_t> out;
  uint8_t buf[1 << 16];
  size_t at = 0;
  while (is_gzip(at)) {  // one gzip member per pass
    z_stream z{};
    if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) throw DataError(name + ": zlib init failed");
    z.next_in = const_cast<Bytef*>(bytes.data() + at);
    z.avail_in = static_cast<uInt>(std::min<size_t>(bytes.size() - at, UINT32_MAX));
    int rc = Z_OK;
    while (rc == Z_OK) {
      z.next_out = buf;
      z.avail_out = sizeof(buf);
      rc = inflate(&z, Z_NO_FLUSH);
      out.insert(out.end(), buf, buf + (sizeof(buf) - z.avail_out));
      if (rc == Z_BUF_ERROR && z.avail_in == 0) break;  // input ended mid-stream
    }
    const std::string detail = z.msg ? z.msg : (rc == Z_BUF_ERROR ? "unexpected end of file" : "");
    at += z.total_in;
    inflateEnd(&z);
    if (rc != Z_STREAM_END)
      throw DataError(name + ": corrupt or truncated gzip stream (" + detail + ")");
  }
  return out;
}

const float* ImageSet::image(size_t i) const {
  if (i >= size()) throw std::out_of_range("ImageSet::image: index out of range");
  return pixels.data() + i * image_size();
}

ImageSet ParseMnist(const std::vector<uint8_t>& images, const std::string& images_name,
                    const std::vector<uint8_t>* labels, const std::string& labels_name,
                    size_t limit) {
  const std::vector<uint8_t> img = GunzipIfCompressed(images, images_name);
  const std::string& images_path = images_name;
  const std::string& labels_path = labels_name;
  if (img.size() < 16) throw DataError(images_path + ": too short for an IDX image header");
  if (BigEndian32(img, 0) != 0x00000803)
    throw DataError(images_path + ": wrong magic number (expected 0x00000803 for IDX images)");
  const size_t n = BigEndian32(img, 4), h = BigEndian32(img, 8), w = BigEndian32(img, 12);
  if (h == 0 || w == 0 || h > 4096 || w > 4096)
    throw DataError(images_path + ": implausible image size " + std::to_string(h) + "x" +
                    std::to_string(w));
  if (img.size() != 16 + n * h * w)
    throw DataError(images_path + ": size mismatch: header says " + std::to_string(n) +
                    " images of " + std::to_string(h) + "x" + std::to_string(w) + " (" +
                    std::to_string(16 + n * h * w) + " bytes) but the file has " +
                    std::to_string(img.size()) + " bytes");
  ImageSet set;
  set.channels = 1;
  set.height = static_cast<int>(h);
  set.width = static_cast<int>(w);
  const size_t keep = limit ? std::min(limit, n) : n;
  set.pixels.resize(keep * h * w);
  for (size_t i = 0; i < keep * h * w; ++i) set.pixels[i] = img[16 + i] / 255.0f;
  set.labels.assign(keep, -1);
  if (labels) {
    const std::vector<uint8_t> lab = GunzipIfCompressed(*labels, labels_path);
    if (lab.size() < 8) throw DataError(labels_path + ": too short for an IDX label header");
    if (BigEndian32(lab, 0) != 0x00000801)
      throw DataError(labels_path + ": wrong magic number (expected 0x00000801 for IDX labels)");
    const size_t nl = BigEndian32(lab, 4);
    if (lab.size() != 8 + nl)
      throw DataError(labels_path + ": size mismatch: header says " + std::to_string(nl) +
                      " labels but the file has " + std::to_string(lab.size() - 8));
    if (nl != n)
      throw DataError(labels_path + ": " + std::to_string(nl) + " labels for " + std::to_string(n) +
                      " images in " + images_path);
    for (size_t i = 0; i < keep; ++i) {
      if (lab[8 + i] > 9)
        throw DataError(labels_path + ": label " + std::to_string(lab[8 + i]) + " at index " +
                        std::to_string(i) + " is outside 0..9");
      set.labels[i] = lab[8 + i];
    }
  }
  for (size_t i = 0; i < 10; ++i) set.class_names.push_back(std::to_string(i));
  return set;
}

ImageSet ReadMnist(const std::string& images_path, const std::string& labels_path, size_t limit) {
  const std::vector<uint8_t> images = ReadAll(images_path);
  if (labels_path.empty()) return ParseMnist(images, images_path, nullptr, "", limit);
  std::vector<uint8_t> labels;
  try {
    labels = ReadAll(labels_path);
  } catch (const DataError&) {
    ParseMnist(images, images_path, nullptr, "", 1);  // a broken images file is named first
    throw;
  }
  return ParseMnist(images, images_path, &labels, labels_path, limit);
}

ImageSet ParseCifar10(const std::vector<uint8_t>& raw, const std::string& path, size_t limit) {
  constexpr size_t kRecord = 3073, kPixels = 3072;
  ImageSet set;
  set.channels = 3;
  set.height = set.width = 32;
  if (raw.empty()) throw DataError(path + ": empty file");
  if (raw.size() % kRecord)
    throw DataError(path + ": size " + std::to_string(raw.size()) +
                    " bytes is not a multiple of the 3073-byte CIFAR-10 record (truncated?)");
  const size_t n = limit ? std::min(limit, raw.size() / kRecord) : raw.size() / kRecord;
  set.labels.reserve(n);
  set.pixels.reserve(n * kPixels);
  for (size_t r = 0; r < n; ++r) {
    const uint8_t* rec = raw.data() + r * kRecord;
    if (rec[0] > 9)
      throw DataError(path + ": label " + std::to_string(rec[0]) + " in record " +
                      std::to_string(r) + " is outside 0..9 (not a CIFAR-10 batch?)");
    set.labels.push_back(rec[0]);
    for (size_t k = 0; k < kPixels; ++k) set.pixels.push_back(rec[1 + k] / 255.0f);
  }
  return set;
}

ImageSet ReadCifar10(const std::vector<std::string>& paths, size_t limit) {
  if (paths.empty()) throw DataError("CIFAR-10: no batch files given");
  ImageSet set;
  for (const auto& path : paths) {
    if (limit && set.size() >= limit) break;
    ImageSet part = ParseCifar10(ReadAll(path), path, limit ? limit - set.size() : 0);
    if (set.size() == 0) {
      set = std::move(part);
      continue;
    }
    set.labels.insert(set.labels.end(), part.labels.begin(), part.labels.end());
    set.pixels.insert(set.pixels.end(), part.pixels.begin(), part.pixels.end());
  }
  return set;
}

ImageSet DecodeImage(const std::vector<uint8_t>& bytes, const std::string& name, int channels) {
  CheckChannels(name, channels);
  ImageSet set;
  AppendMat(DecodeMat(bytes, name), name, -1, channels, &set);
  return set;
}

ImageSet ReadImages(const std::string& path, int channels, size_t limit) {
  if (!fs::exists(path)) throw DataError(path + ": file or folder not found");
  std::vector<std::pair<std::string, int>> files;
  auto is_image = [](const fs::path& p) {
    std::string e = p.extension().string();
    std::transform(e.begin(), e.end(), e.begin(), ::tolower);
    return e == ".png" || e == ".jpg" || e == ".jpeg" || e == ".bmp";
  };
  // Labels from subfolders: FOLDER/<class index>/*.png when every subfolder name is a class
  // index, else the ImageFolder convention (torchvision): classes = all subfolder names in
  // sorted order (empty ones included, so they keep their index), label = position, names
  // kept in class_names. Images directly in FOLDER
  // (or a single file) have no label (-1).
  std::vector<std::string> class_names;
  if (fs::is_directory(path)) {
    std::vector<fs::path> folders;
    for (const auto& e : fs::directory_iterator(path)) {
      if (e.is_regular_file() && is_image(e.path())) files.push_back({e.path().string(), -1});
      if (e.is_directory()) folders.push_back(e.path());
    }
    std::sort(folders.begin(), folders.end());
    std::vector<std::pair<fs::path, std::vector<std::string>>> labelled;
    for (const auto& d : folders) {
      std::vector<std::string> imgs;
      for (const auto& f : fs::directory_iterator(d))
        if (f.is_regular_file() && is_image(f.path())) imgs.push_back(f.path().string());
      labelled.push_back({d, std::move(imgs)});  // empty class folders keep their index
    }
    const bool numeric = std::all_of(labelled.begin(), labelled.end(), [](const auto& l) {
      const std::string n = l.first.filename().string();
      return !n.empty() && std::all_of(n.begin(), n.end(), ::isdigit);
    });
    for (size_t k = 0; k < labelled.size(); ++k) {
      const auto& [folder, imgs] = labelled[k];
      int label = static_cast<int>(k);
      if (numeric) {
        const std::string name = folder.filename().string();
        if (name.size() > 9)
          throw DataError(folder.string() + ": folder name is too long for a class index");
        label = std::stoi(name);
      } else {
        class_names.push_back(folder.filename().string());
      }
      for (const auto& f : imgs) files.push_back({f, label});
    }
    std::sort(files.begin(), files.end());
    if (files.empty()) throw DataError(path + ": no PNG/JPEG/BMP images in this folder");
  } else {
    files.push_back({path, -1});
  }
  CheckChannels(path, channels);
  ImageSet set;
  for (const auto& [file, label] : files) {
    if (limit && set.size() >= limit) break;
    AppendMat(DecodeMat(ReadAll(file), file), file, label, channels, &set);
  }
  set.class_names = std::move(class_names);
  return set;
}

void ApplyClassOrder(ImageSet* set, const std::vector<std::string>& classes,
                     const std::string& name) {
  if (set->class_names.empty())
    throw DataError(name +
                    ": --classes orders named classes, but these data name none (image "
                    "sub-folders named by integers give the labels themselves)");
  std::map<std::string, int> position;
  for (size_t k = 0; k < classes.size(); ++k) {
    if (classes[k].empty())
      throw DataError("--classes: empty class name at position " + std::to_string(k));
    if (!position.emplace(classes[k], static_cast<int>(k)).second)
      throw DataError("--classes: '" + classes[k] + "' is given twice");
  }
  std::vector<int> remap(set->class_names.size());
  for (size_t c = 0; c < set->class_names.size(); ++c) {
    const auto it = position.find(set->class_names[c]);
    if (it == position.end())
      throw DataError(name + ": class '" + set->class_names[c] +
                      "' is not in --classes (the data's classes: " + ClassMapping(*set, 100) +
                      ")");
    remap[c] = it->second;
  }
  for (int& y : set->labels)
    if (y >= 0 && static_cast<size_t>(y) < remap.size()) y = remap[y];
  set->class_names = classes;
}

std::string ClassMapping(const ImageSet& set, size_t max_shown) {
  std::string out;
  for (size_t c = 0; c < set.class_names.size(); ++c) {
    if (c == max_shown) return out + ", ...";
    out += (c ? ", " : "") + set.class_names[c] + "=" + std::to_string(c);
  }
  return out;
}

std::vector<std::string> ReadClassNames(const std::string& path) {
  std::vector<std::string> names;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) names.push_back(line);
  return names;
}

void WritePng(const std::string& path, const float* chw, int channels, int height, int width) {
  cv::Mat m(height, width, channels == 1 ? CV_8UC1 : CV_8UC3);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x)
      for (int c = 0; c < channels; ++c) {
        const float v = chw[(size_t(c) * height + y) * width + x];
        // OpenCV stores BGR: channel c (RGB order) goes to slot channels-1-c.
        const int slot = channels == 3 ? 2 - c : 0;
        m.ptr<uint8_t>(y)[x * channels + slot] =
            static_cast<uint8_t>(std::lround(std::clamp(v, 0.0f, 1.0f) * 255.0f));
      }
  if (!cv::imwrite(path, m)) throw DataError(path + ": cannot write PNG");
}

}  // namespace advbo::data
