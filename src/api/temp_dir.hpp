// temp_dir.hpp — a private temporary directory (mkdtemp) removed with everything in it when the
// TempDir goes out of scope, also on errors. Used for the temporary .tcsr of an edge-list input.
#pragma once

#include <string>

namespace tristream::api {

class TempDir {
 public:
  // Creates BASE/tristream-XXXXXX, BASE = `base`, else $TMPDIR, else /tmp. Throws Error(Usage)
  // when BASE is not a directory ("--tmp-dir: 'BASE' is not a directory"), Error(Input) when
  // the directory cannot be created.
  explicit TempDir(const std::string& base);
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace tristream::api
