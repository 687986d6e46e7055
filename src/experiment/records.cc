#include "experiment/records.h"

#include <stdexcept>
#include <utility>

namespace advbo::experiment {
namespace fs = std::filesystem;

void WriteFileAtomic(const fs::path& path, const std::string& text) {
  const fs::path tmp = path.string() + ".partial";
  {
    std::ofstream o(tmp);
    if (!o) throw std::runtime_error(path.string() + ": cannot write");
    o << text;
    o.close();
    if (!o) throw std::runtime_error(path.string() + ": write failed");
  }
  fs::rename(tmp, path);
}

std::vector<nlohmann::json> ReadRecords(const fs::path& p) {
  std::vector<nlohmann::json> out;
  std::ifstream in(p);
  if (!in) throw std::runtime_error(p.string() + ": cannot read records");
  std::string line;
  long n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.empty()) continue;
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception&) {
      if (in.peek() == EOF) break;  // cut short by an interruption
      throw std::runtime_error(p.string() + ": line " + std::to_string(n) + " is not JSON");
    }
    if (!j.is_object())
      throw std::runtime_error(p.string() + ": line " + std::to_string(n) +
                               " is not a JSON object");
    out.push_back(std::move(j));
  }
  return out;
}

RecordKey KeyOf(const nlohmann::json& r) {
  try {
    return {r.at("attack").get<std::string>(), r.at("image_index").get<int>(),
            r.at("target").is_null() ? -1 : r.at("target").get<int>()};
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(std::string("a record lacks attack / image_index / target: ") +
                             e.what());
  }
}

RecordFile::RecordFile(fs::path path, bool staged)
    : path_(std::move(path)),
      writing_(staged ? fs::path(path_.string() + ".partial") : path_),
      staged_(staged) {
  if (fs::is_directory(path_)) throw std::runtime_error(path_.string() + ": is a folder");
  if (fs::is_directory(writing_)) throw std::runtime_error(writing_.string() + ": is a folder");
  if (fs::exists(writing_)) {
    resumed_ = ReadRecords(writing_);
    for (const auto& r : resumed_) KeyOf(r);  // every resumed record must be identifiable
    std::string text;
    for (const auto& r : resumed_) text += r.dump() + "\n";
    WriteFileAtomic(writing_, text);  // without a cut-short last line
  }
  out_.open(writing_, std::ios::app);
  if (!out_) throw std::runtime_error(writing_.string() + ": cannot write records");
}

void RecordFile::Append(const nlohmann::json& record) {
  out_ << record.dump() << "\n";
  out_.flush();
  if (!out_) throw std::runtime_error(writing_.string() + ": write failed");
}

void RecordFile::Commit() {
  out_.close();
  if (staged_) fs::rename(writing_, path_);
}

}  // namespace advbo::experiment
