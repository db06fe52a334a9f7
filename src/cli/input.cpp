// input.cpp — resolves a command's INPUT: a .tcsr file as it is, an edge list converted into a
// temporary .tcsr file in a private directory.
#include "input.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

#include "common/atomic_file.hpp"
#include "tristream/error.hpp"
#include "tristream/format.hpp"

namespace tristream::cli {

ResolvedInput::ResolvedInput(const std::string& input, const ConvertOptions& options,
                             const std::string& tmp_dir) {
  if (input != "-") {
    struct stat st {};
    if (::stat(input.c_str(), &st) != 0)
      throw Error(ErrorKind::Input, input + ": cannot open: " + std::strerror(errno));
    if (S_ISDIR(st.st_mode)) throw Error(ErrorKind::Input, input + ": is a directory");
    // A .tcsr name goes to the reader even without the magic, which then names the damage.
    const bool tcsr_name = input.size() > 5 && input.compare(input.size() - 5, 5, ".tcsr") == 0;
    if (tcsr_name || tcsr::has_tcsr_magic(input)) {
      path_ = input;
      return;
    }
  }
  std::string base = tmp_dir;
  if (base.empty()) {
    const char* env = std::getenv("TMPDIR");
    base = env && *env ? env : "/tmp";
    check_directory(env && *env ? "$TMPDIR" : "/tmp", base);
  } else {
    check_directory("--tmp-dir", base);
  }
  std::string templ = base + "/tristream-count-XXXXXX";
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  if (!::mkdtemp(buf.data()))
    throw Error(ErrorKind::Input,
                base + ": cannot create a temporary directory: " + std::strerror(errno));
  tmp_dir_ = buf.data();
  path_ = tmp_dir_ + "/graph.tcsr";
  ConvertOptions o = options;
  if (o.tmp_dir.empty()) o.tmp_dir = tmp_dir_;
  try {
    summary_ = convert(input, path_, o);
  } catch (...) {
    std::error_code ec;
    std::filesystem::remove_all(tmp_dir_, ec);
    throw;
  }
}

ResolvedInput::~ResolvedInput() {
  if (tmp_dir_.empty()) return;
  std::error_code ec;
  std::filesystem::remove_all(tmp_dir_, ec);
}

}  // namespace tristream::cli
