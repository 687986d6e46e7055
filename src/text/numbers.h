// Numbers in text a user or a client sends (option values, request headers): the one place
// that decides what counts as an integer, so every option and header refuses the same things.
#pragma once

#include <string>
#include <vector>

namespace advbo::text {

/// `text` as a whole decimal integer (an optional sign, digits, nothing else: no spaces, no
/// trailing characters, no fraction) that fits a long. Throws std::invalid_argument
/// "<what> '<text>' is not an integer" otherwise.
long ParseInteger(const std::string& text, const std::string& what);

/// The integers of `text` separated by `sep` ("3,32,32" with ','), each as ParseInteger
/// checks it (so an empty piece, as in "3,,32" or a trailing separator, is refused). Throws
/// std::invalid_argument naming `what`, the text and the bad piece. Ranges and counts are the
/// caller's to check.
std::vector<long> ParseIntegerList(const std::string& text, char sep, const std::string& what);

}  // namespace advbo::text
