#include "experiment/records.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <utility>

#include "experiment/spec.h"

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

void CheckRecordFields(const nlohmann::json& r, const std::string& where) {
  auto fail = [&](const char* field, const std::string& what) {
    throw std::runtime_error(where + ": field '" + field + "' " + what);
  };
  auto need = [&](const char* field) -> const nlohmann::json& {
    if (!r.contains(field)) fail(field, "is missing");
    return r.at(field);
  };
  auto integer_in = [&](const char* field, const nlohmann::json& v, double lo, double hi) {
    if (!v.is_number_integer() || v.get<double>() < lo || v.get<double>() > hi)
      fail(field, "must be an integer in [" + FormatNumber(lo) + ", " + FormatNumber(hi) +
                      "], got " + v.dump());
  };
  auto number_in = [&](const char* field, const nlohmann::json& v, double lo, double hi) {
    if (!v.is_number() || !(v.get<double>() >= lo && v.get<double>() <= hi))
      fail(field, "must be a number in [" + FormatNumber(lo) + ", " + FormatNumber(hi) + "], got " +
                      v.dump());
  };
  const auto& attack = need("attack");
  if (!attack.is_string() || attack.get<std::string>().empty())
    fail("attack", "must be a non-empty string, got " + attack.dump());
  integer_in("image_index", need("image_index"), 0, 1e9);
  const auto& target = need("target");
  if (!target.is_null()) integer_in("target", target, 0, 1e6);
  if (!need("success").is_boolean()) fail("success", "must be true or false");
  const auto& budget = need("budget");
  integer_in("budget", budget, 1, static_cast<double>(kMaxBudget));
  const double t = budget.get<double>();
  number_in("queries", need("queries"), 0, t);
  number_in("seconds", need("seconds"), 0, 1e12);
  number_in("model_seconds", need("model_seconds"), 0, 1e12);
  if (r.contains("wait_seconds")) number_in("wait_seconds", r.at("wait_seconds"), 0, 1e12);
  if (r.contains("queries_used")) integer_in("queries_used", r.at("queries_used"), 0, t);
  if (r.contains("quantized_success") && !r.at("quantized_success").is_boolean() &&
      !r.at("quantized_success").is_null())
    fail("quantized_success", "must be true, false or null");
}

namespace {

// The lines of p; *kept = bytes of p up to the end of the last complete line (a cut-short
// last line excluded), *newline = whether that line still needs its "\n".
std::vector<nlohmann::json> ReadLinesKept(const fs::path& p, const LineCheck& check,
                                          std::uintmax_t* kept, bool* newline) {
  std::vector<nlohmann::json> out;
  std::ifstream in(p, std::ios::binary);
  if (!in) throw std::runtime_error(p.string() + ": cannot read");
  std::string line;
  long n = 0;
  std::uintmax_t at = 0;
  *kept = 0;
  *newline = false;
  while (std::getline(in, line)) {
    ++n;
    const bool ended = !in.eof();  // getline consumed a "\n"
    at += line.size() + (ended ? 1 : 0);
    if (line.empty()) {
      *kept = at;
      continue;
    }
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
    check(j, p.string() + ": line " + std::to_string(n));
    out.push_back(std::move(j));
    *kept = at;
    *newline = !ended;
  }
  return out;
}

}  // namespace

std::vector<nlohmann::json> ReadJsonLines(const fs::path& p, const LineCheck& check) {
  std::uintmax_t kept;
  bool newline;
  return ReadLinesKept(p, check, &kept, &newline);
}

std::vector<nlohmann::json> ReadRecords(const fs::path& p) {
  return ReadJsonLines(p, CheckRecordFields);
}

std::string ShardTag(int k, int n) {
  if (n == 1) return "";
  return ".shard-" + std::to_string(k) + "-of-" + std::to_string(n);
}

std::vector<fs::path> ShardFiles(const fs::path& dir, const std::string& stem,
                                 const std::string& ext) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name == stem + ext || (name.rfind(stem + ".shard-", 0) == 0 && name.size() >= ext.size() &&
                               name.compare(name.size() - ext.size(), ext.size(), ext) == 0))
      out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
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
  // Advisory lock for the whole run: a second run on the same output refuses to start
  // instead of interleaving its records with this one's.
  const bool existed = fs::exists(writing_);
  lock_fd_ = ::open(writing_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock_fd_ < 0)
    throw std::runtime_error(writing_.string() + ": cannot open (" + std::strerror(errno) + ")");
  if (::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    ::close(lock_fd_);
    lock_fd_ = -1;
    throw std::runtime_error(writing_.string() +
                             ": another advbo run is writing this file; wait for it to finish "
                             "or choose another output");
  }
  if (existed) {
    std::uintmax_t kept;
    bool newline;
    resumed_ = ReadLinesKept(writing_, CheckRecordFields, &kept, &newline);
    for (const auto& r : resumed_) KeyOf(r);  // every resumed record must be identifiable
    // Drop a cut-short last line; the complete records keep their bytes.
    if (fs::file_size(writing_) != kept) fs::resize_file(writing_, kept);
    out_.open(writing_, std::ios::app);
    if (newline) out_ << "\n";
  } else {
    out_.open(writing_, std::ios::app);
  }
  if (!out_) throw std::runtime_error(writing_.string() + ": cannot write records");
}

RecordFile::~RecordFile() {
  if (!(committed_ || wrote_ || !resumed_.empty())) {
    out_.close();
    std::error_code ec;
    fs::remove(writing_, ec);
  }
  if (lock_fd_ >= 0) ::close(lock_fd_);  // releases the lock
}

void RecordFile::Append(const nlohmann::json& record) {
  wrote_ = true;
  out_ << record.dump() << "\n";
  out_.flush();
  if (!out_) throw std::runtime_error(writing_.string() + ": write failed");
}

void RecordFile::Commit() {
  out_.close();
  committed_ = true;
  if (staged_) fs::rename(writing_, path_);
}

void CreatedFolders::Create(const fs::path& dir) {
  if (dir.empty()) return;
  std::vector<fs::path> missing;  // innermost first
  fs::path start = fs::absolute(dir).lexically_normal();
  if (start.filename().empty()) start = start.parent_path();  // "imgs/" -> "imgs"
  for (fs::path p = start; !p.empty() && !fs::exists(p); p = p.parent_path()) {
    missing.push_back(p);
    if (p == p.parent_path()) break;
  }
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir))
    throw std::runtime_error(dir.string() + ": cannot create the output folder" +
                             (ec ? " (" + ec.message() + ")" : " (a file has that name)"));
  made_.insert(made_.end(), missing.rbegin(), missing.rend());
}

CreatedFolders::~CreatedFolders() {
  for (auto it = made_.rbegin(); it != made_.rend(); ++it) {
    std::error_code ec;
    if (fs::is_directory(*it, ec) && fs::is_empty(*it, ec)) fs::remove(*it, ec);
  }
}

}  // namespace advbo::experiment
