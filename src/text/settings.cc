#include "text/settings.h"

#include <sstream>
#include <stdexcept>

namespace advbo::text {

std::vector<std::pair<std::string, std::string>> SplitSettings(const std::string& text,
                                                               const std::string& what) {
  std::vector<std::pair<std::string, std::string>> out;
  std::stringstream ss(text);
  for (std::string kv; std::getline(ss, kv, ',');) {
    if (kv.empty()) continue;
    const auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == kv.size())
      throw std::invalid_argument(what + ": setting '" + kv + "' is not key=value");
    out.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
  }
  return out;
}

}  // namespace advbo::text
