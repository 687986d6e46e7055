#include "text/numbers.h"

#include <cerrno>
#include <cstdlib>
#include <stdexcept>

namespace advbo::text {

long ParseInteger(const std::string& text, const std::string& what) {
  const char* s = text.c_str();
  const bool digits_only =
      !text.empty() && text.find_first_not_of("+-0123456789") == std::string::npos;
  char* end = nullptr;
  errno = 0;
  const long v = digits_only ? std::strtol(s, &end, 10) : 0;
  if (!digits_only || end != s + text.size() || errno == ERANGE)
    throw std::invalid_argument(what + " '" + text + "' is not an integer");
  return v;
}

std::vector<long> ParseIntegerList(const std::string& text, char sep, const std::string& what) {
  std::vector<long> out;
  size_t start = 0;
  for (;;) {
    const size_t end = text.find(sep, start);
    const std::string piece = text.substr(start, end == std::string::npos ? end : end - start);
    try {
      out.push_back(ParseInteger(piece, what));
    } catch (const std::invalid_argument&) {
      throw std::invalid_argument(what + " '" + text + "': '" + piece + "' is not an integer");
    }
    if (end == std::string::npos) return out;
    start = end + 1;
  }
}

}  // namespace advbo::text
