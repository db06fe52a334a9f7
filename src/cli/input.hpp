// input.hpp — resolves the INPUT of `count` (and similar commands): a .tcsr file is used as it
// is; any other file is treated as an edge list and converted into a temporary .tcsr file that
// is removed when the ResolvedInput goes out of scope (also on errors).
#pragma once

#include <string>

#include "tristream/convert.hpp"

namespace tristream::cli {

class ResolvedInput {
 public:
  // tmp_dir: where the temporary goes (empty: $TMPDIR or /tmp).
  ResolvedInput(const std::string& input, const ConvertOptions& options,
                const std::string& tmp_dir);
  ~ResolvedInput();
  ResolvedInput(const ResolvedInput&) = delete;
  ResolvedInput& operator=(const ResolvedInput&) = delete;

  const std::string& tcsr_path() const { return path_; }
  bool converted() const { return !tmp_dir_.empty(); }
  const ConvertSummary& summary() const { return summary_; }

 private:
  std::string path_;
  std::string tmp_dir_;
  ConvertSummary summary_;
};

}  // namespace tristream::cli
