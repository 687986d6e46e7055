// "key=value,key=value" settings of a spec string (attacks "bos2:kernel=se,init=5", defenses
// "jpeg:quality=75", game defenders "r2b2:noise:window=50"): the one splitter, so every spec
// accepts and refuses the same things.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace advbo::text {

/// The settings `text` ("k=v,k=v") as (key, value) pairs in the order given. Empty pieces
/// ("a=1,,b=2", a trailing comma) are skipped; a piece without '=', with an empty key or an
/// empty value throws std::invalid_argument "<what>: setting '<piece>' is not key=value".
/// Keys are not checked for repeats or names: that is the caller's, who knows them.
std::vector<std::pair<std::string, std::string>> SplitSettings(const std::string& text,
                                                               const std::string& what);

}  // namespace advbo::text
