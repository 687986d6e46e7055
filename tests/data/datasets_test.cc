// Dataset readers on the shipped real data and on deliberately broken copies.
#include "data/datasets.h"

#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <opencv2/imgcodecs.hpp>

namespace advbo::data {
namespace {
namespace fs = std::filesystem;

const std::string kRoot = ADVBO_SOURCE_DIR;
const std::string kMnistImages = kRoot + "/data/mnist/t10k-images-idx3-ubyte.gz";
const std::string kMnistLabels = kRoot + "/data/mnist/t10k-labels-idx1-ubyte.gz";
const std::string kCifar = kRoot + "/data/cifar10/test_batch_first2000.bin";

class TempDir : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("advbo_data_test_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
            "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name() + "_" +
            std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& bytes) {
    std::ofstream(dir_ / name, std::ios::binary) << bytes;
    return (dir_ / name).string();
  }
  fs::path dir_;
};

std::string Gunzip(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  std::string out;
  char buf[65536];
  int n;
  while ((n = gzread(f, buf, sizeof(buf))) > 0) out.append(buf, n);
  gzclose(f);
  return out;
}

std::string ReadFile(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

TEST(ReadMnist, ShippedOfficialTestSet) {
  ImageSet s = ReadMnist(kMnistImages, kMnistLabels);
  ASSERT_EQ(s.size(), 10000u);
  EXPECT_EQ(s.channels, 1);
  EXPECT_EQ(s.height, 28);
  EXPECT_EQ(s.width, 28);
  // The official t10k labels start 7, 2, 1, 0, 4.
  EXPECT_EQ(std::vector<int>(s.labels.begin(), s.labels.begin() + 5),
            (std::vector<int>{7, 2, 1, 0, 4}));
  float lo = 1, hi = 0;
  for (float v : s.pixels) lo = std::min(lo, v), hi = std::max(hi, v);
  EXPECT_EQ(lo, 0.0f);
  EXPECT_EQ(hi, 1.0f);
  EXPECT_EQ(ReadMnist(kMnistImages, kMnistLabels, 3).size(), 3u);
}

TEST_F(TempDir, MnistRawAndCorruptFiles) {
  const std::string raw = Gunzip(kMnistImages), labels = Gunzip(kMnistLabels);
  // Raw (uncompressed) files read the same.
  ImageSet a = ReadMnist(Write("img", raw), Write("lab", labels), 10);
  ImageSet b = ReadMnist(kMnistImages, kMnistLabels, 10);
  EXPECT_EQ(a.pixels, b.pixels);
  // Truncated image data.
  std::string trunc = Write("trunc", raw.substr(0, raw.size() - 100));
  try {
    ReadMnist(trunc, "");
    FAIL() << "expected DataError";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find(trunc), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("size mismatch"), std::string::npos);
  }
  // Wrong magic.
  std::string bad = raw;
  bad[3] = 0x01;
  EXPECT_THROW(ReadMnist(Write("magic", bad), ""), DataError);
  // Labels for another file (count mismatch) and labels outside 0..9.
  std::string few = labels.substr(0, 8 + 5);
  few[7] = 5;  // header count 5
  EXPECT_THROW(ReadMnist(kMnistImages, Write("few", few)), DataError);
  std::string bad_label = labels;
  bad_label[8] = 42;
  EXPECT_THROW(ReadMnist(kMnistImages, Write("badlab", bad_label)), DataError);
  // Truncated gzip stream and a missing file.
  std::string gz = ReadFile(kMnistImages);
  EXPECT_THROW(ReadMnist(Write("t.gz", gz.substr(0, gz.size() / 2)), ""), DataError);
  EXPECT_THROW(ReadMnist((dir_ / "missing.gz").string(), ""), DataError);
}

TEST_F(TempDir, Cifar10ShippedAndCorrupt) {
  ImageSet s = ReadCifar10({kCifar});
  ASSERT_EQ(s.size(), 2000u);
  EXPECT_EQ(s.channels, 3);
  for (int l : s.labels) ASSERT_TRUE(l >= 0 && l <= 9);
  // Pixel layout: record 0's byte k+1 is pixel k (R plane first).
  const std::string raw = ReadFile(kCifar);
  EXPECT_FLOAT_EQ(s.pixels[0], static_cast<unsigned char>(raw[1]) / 255.0f);
  EXPECT_FLOAT_EQ(s.pixels[1024], static_cast<unsigned char>(raw[1 + 1024]) / 255.0f);
  EXPECT_EQ(s.labels[1], static_cast<unsigned char>(raw[3073]));
  std::string cut = Write("cut.bin", raw.substr(0, 3073 * 3 + 10));
  try {
    ReadCifar10({cut});
    FAIL();
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("3073"), std::string::npos);
  }
  std::string lab = raw.substr(0, 3073);
  lab[0] = 17;
  EXPECT_THROW(ReadCifar10({Write("lab.bin", lab)}), DataError);
  EXPECT_THROW(ReadCifar10({Write("empty.bin", "")}), DataError);
}

TEST_F(TempDir, ImageFolderRoundTripAndErrors) {
  ImageSet cifar = ReadCifar10({kCifar}, 3);
  fs::create_directories(dir_ / "imgs" / "7");
  for (int i = 0; i < 3; ++i)
    WritePng((dir_ / "imgs" / "7" / ("im" + std::to_string(i) + ".png")).string(), cifar.image(i),
             3, 32, 32);
  ImageSet back = ReadImages((dir_ / "imgs").string());
  ASSERT_EQ(back.size(), 3u);
  EXPECT_EQ(back.channels, 3);
  EXPECT_EQ(back.labels[0], 7);
  for (size_t k = 0; k < back.pixels.size(); ++k)
    ASSERT_NEAR(back.pixels[k], cifar.pixels[k], 0.5 / 255 + 1e-6);  // 8-bit PNG round trip
  ImageSet grey = ReadImages((dir_ / "imgs").string(), 1);
  EXPECT_EQ(grey.channels, 1);
  Write("imgs/7/broken.png", "not a png at all");
  EXPECT_THROW(ReadImages((dir_ / "imgs").string()), DataError);
  EXPECT_THROW(ReadImages((dir_ / "nothing").string()), DataError);
}

std::vector<uint8_t> Bytes(const std::string& s) {
  return std::vector<uint8_t>(s.begin(), s.end());
}

// The in-memory parsers are what the file readers call: same images, labels and errors.
TEST(ParseInMemory, MatchTheFileReadersOnTheShippedData) {
  const std::vector<uint8_t> images = Bytes(ReadFile(kMnistImages));
  const std::vector<uint8_t> labels = Bytes(ReadFile(kMnistLabels));
  const ImageSet a = ParseMnist(images, "images", &labels, "labels", 50);
  const ImageSet b = ReadMnist(kMnistImages, kMnistLabels, 50);
  EXPECT_EQ(a.pixels, b.pixels);
  EXPECT_EQ(a.labels, b.labels);
  const ImageSet c = ParseCifar10(Bytes(ReadFile(kCifar)), "batch", 7);
  const ImageSet d = ReadCifar10({kCifar}, 7);
  EXPECT_EQ(c.pixels, d.pixels);
  EXPECT_EQ(c.labels, d.labels);
  ASSERT_EQ(c.size(), 7u);
  // Two batch files concatenate in order, and the limit spans them.
  const ImageSet e = ReadCifar10({kCifar, kCifar}, 2005);
  ASSERT_EQ(e.size(), 2005u);
  EXPECT_EQ(e.labels[2000], d.labels[0]);
}

TEST(ParseInMemory, GunzipJoinsMembersAndRefusesTruncatedStreams) {
  const std::string raw = Gunzip(kMnistLabels);
  const std::vector<uint8_t> gz = Bytes(ReadFile(kMnistLabels));
  EXPECT_EQ(GunzipIfCompressed(gz, "l"), Bytes(raw));
  std::vector<uint8_t> twice = gz;
  twice.insert(twice.end(), gz.begin(), gz.end());
  EXPECT_EQ(GunzipIfCompressed(twice, "l"), Bytes(raw + raw));  // as gzip -d does
  EXPECT_EQ(GunzipIfCompressed(Bytes("plain"), "l"), Bytes("plain"));
  const std::vector<uint8_t> cut(gz.begin(), gz.begin() + gz.size() / 2);
  try {
    GunzipIfCompressed(cut, "labels.gz");
    FAIL() << "truncated stream accepted";
  } catch (const DataError& err) {
    EXPECT_NE(std::string(err.what()).find("labels.gz: corrupt or truncated gzip"),
              std::string::npos)
        << err.what();
  }
  std::vector<uint8_t> flipped = gz;
  flipped[gz.size() / 2] ^= 0xff;
  EXPECT_THROW(GunzipIfCompressed(flipped, "l"), DataError);
}

TEST_F(TempDir, DecodeImageMatchesReadImages) {
  const ImageSet cifar = ReadCifar10({kCifar}, 1);
  const std::string path = (dir_ / "a.png").string();
  WritePng(path, cifar.image(0), 3, 32, 32);
  const ImageSet a = DecodeImage(Bytes(ReadFile(path)), "a.png");
  const ImageSet b = ReadImages(path);
  EXPECT_EQ(a.pixels, b.pixels);
  EXPECT_EQ(DecodeImage(Bytes(ReadFile(path)), "a.png", 1).channels, 1);
  EXPECT_THROW(DecodeImage(Bytes("not an image"), "x"), DataError);
  // Other formats OpenCV knows are refused by signature (Radiance HDR, TIFF, a PNG cut short).
  EXPECT_THROW(DecodeImage(Bytes("#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n-Y 1 +X 1\n"), "h.png"),
               DataError);
  EXPECT_THROW(DecodeImage(Bytes("II*\0\x08\0\0\0"), "t.png"), DataError);
  const std::vector<uint8_t> png = Bytes(ReadFile(path));
  EXPECT_THROW(DecodeImage(std::vector<uint8_t>(png.begin(), png.begin() + 40), "cut.png"),
               DataError);
  EXPECT_THROW(DecodeImage({}, "x"), DataError);
  EXPECT_THROW(DecodeImage(Bytes(ReadFile(path)), "x", 2), DataError);
  fs::create_directories(dir_ / "f" / "12345678901");
  fs::copy_file(path, dir_ / "f" / "12345678901" / "a.png");
  EXPECT_THROW(ReadImages((dir_ / "f").string()), DataError);  // not a class index
}

// Image sizes come from the header before any pixel is decoded: PNG, JPEG and BMP files that
// OpenCV writes report their width and height, and a 60-byte PNG that claims 20000 x 20000
// pixels (a decompression bomb: 1.2 GB decoded) is refused without decoding.
TEST(ImageHeader, SizesFromHeadersAndBombsRefusedBeforeDecoding) {
  const cv::Mat img(17, 31, CV_8UC3, cv::Scalar(10, 200, 30));  // height 17, width 31
  for (const std::string ext : {".png", ".jpg", ".bmp"}) {
    std::vector<uint8_t> bytes;
    ASSERT_TRUE(cv::imencode(ext, img, bytes)) << ext;
    EXPECT_EQ(ImageHeaderSize(bytes), (std::pair<long long, long long>{31, 17})) << ext;
    EXPECT_EQ(DecodeImage(bytes, "x" + ext).width, 31) << ext;
  }
  std::vector<uint8_t> png = {0x89, 'P', 'N',  'G',  0x0d, 0x0a, 0x1a, 0x0a,  // signature
                              0,    0,   0,    13,   'I',  'H',  'D',  'R',   // IHDR, 13 bytes
                              0,    0,   0x4e, 0x20,                          // width 20000
                              0,    0,   0x4e, 0x20,                          // height 20000
                              8,    0,   0,    0,    0};
  png.resize(60, 0);
  EXPECT_EQ(ImageHeaderSize(png), (std::pair<long long, long long>{20000, 20000}));
  try {
    DecodeImage(png, "bomb.png");
    FAIL() << "a 20000 x 20000 header was decoded";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("bomb.png: the header says 20000 x 20000 pixels, more "
                                         "than the limit of 16777216"),
              std::string::npos)
        << e.what();
  }
  // Unreadable headers are left to the decoder, which names the file.
  EXPECT_EQ(ImageHeaderSize({0xff, 0xd8, 0xff}), (std::pair<long long, long long>{-1, -1}));
}

// Devices and FIFOs are not data: /dev/zero would be read forever.
TEST(ReadImages, RefusesFilesThatAreNotRegular) {
  if (!fs::exists("/dev/zero")) GTEST_SKIP() << "no /dev/zero";
  try {
    ReadImages("/dev/zero");
    FAIL() << "/dev/zero was read";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("not a regular file"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace advbo::data
