// input.cpp — TcsrInput: a .tcsr file as it is, an edge list converted into a temporary .tcsr
// file in a private directory.
#include "api/input.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "tristream/error.hpp"
#include "tristream/format.hpp"

namespace tristream::api {

bool is_tcsr_input(const std::string& input) {
  if (input == "-") return false;
  const bool tcsr_name = input.size() > 5 && input.compare(input.size() - 5, 5, ".tcsr") == 0;
  return tcsr_name || tcsr::has_tcsr_magic(input);
}

TcsrInput::TcsrInput(const std::string& input, const ConvertOptions& options,
                     const std::string& tmp_dir) {
  // 1. A .tcsr file is used as it is.
  if (input != "-") {
    struct stat st {};
    if (::stat(input.c_str(), &st) != 0)
      throw Error(ErrorKind::Input, input + ": cannot open: " + std::strerror(errno));
    if (S_ISDIR(st.st_mode)) throw Error(ErrorKind::Input, input + ": is a directory");
    if (is_tcsr_input(input)) {
      path_ = input;
      return;
    }
  }
  // 2. An edge list is converted into the private directory (removed on errors by ~TempDir).
  tmp_ = std::make_unique<TempDir>(tmp_dir);
  path_ = tmp_->path() + "/graph.tcsr";
  ConvertOptions o = options;
  if (o.tmp_dir.empty()) o.tmp_dir = tmp_->path();
  summary_ = convert(input, path_, o);
}

}  // namespace tristream::api
