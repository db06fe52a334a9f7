// input.hpp — resolves the input of a count (and of `tristream plan` / `info`): a .tcsr file is
// used as it is; any other file, or "-" (standard input), is read as an edge list and converted
// into a temporary .tcsr file in a private TempDir, removed with the TcsrInput (also on errors).
#pragma once

#include <memory>
#include <string>

#include "api/temp_dir.hpp"
#include "tristream/convert.hpp"

namespace tristream::api {

// Whether `input` (a path; "-" never) is used as a .tcsr file: a name ending in ".tcsr" (the
// reader then names any damage) or a regular file starting with the .tcsr magic.
bool is_tcsr_input(const std::string& input);

class TcsrInput {
 public:
  // A name ending in ".tcsr", or a file starting with the .tcsr magic, is used as it is (the
  // reader then names any damage). Otherwise converts it with `options`; the temporary goes
  // under tmp_dir (empty: $TMPDIR or /tmp), and options.tmp_dir, when empty, becomes the same
  // private directory. Throws Error(Input) for a missing input or a directory, and convert's
  // errors.
  TcsrInput(const std::string& input, const ConvertOptions& options, const std::string& tmp_dir);
  TcsrInput(const TcsrInput&) = delete;
  TcsrInput& operator=(const TcsrInput&) = delete;

  const std::string& tcsr_path() const { return path_; }
  bool converted() const { return tmp_ != nullptr; }
  // The conversion's summary (declared_vertices ...); all zero when not converted.
  const ConvertSummary& summary() const { return summary_; }

 private:
  std::unique_ptr<TempDir> tmp_;
  std::string path_;
  ConvertSummary summary_;
};

}  // namespace tristream::api
