// common/atomic_file.hpp — outputs that appear whole or not at all, safe in shared directories.
//
// Every output file is written through a temporary beside it that gets an unpredictable name and
// is created with O_CREAT|O_EXCL|O_NOFOLLOW, so a file or symlink planted in the directory can
// neither redirect the write nor pre-empt it; the temporary is fsynced and renamed over the
// target, so a reader never sees a half-written file and a failure leaves the old one untouched.
// Outputs are opened before the work that fills them, so a bad path is reported before the work.
#pragma once

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace tristream {

// An open temporary file: the descriptor and its path.
struct TempFile {
  int fd = -1;
  std::string path;
};

// Creates "<path>.tmp.<random>" (mode 0666 less the umask) exclusively. Throws Error(Input)
// naming `path` when its directory is missing, not a directory or not writable; Error(Internal)
// on other failures.
TempFile create_temp_beside(const std::string& path);

// Renames the (fsynced, closed) temporary `tmp` over `path`, then fsyncs path's directory so that
// the rename itself survives a crash. Throws Error(Internal) naming the path on a failure (the
// temporary is then the caller's to remove; after a failed directory fsync it is gone).
void rename_over_and_sync_dir(const std::string& tmp, const std::string& path);

// Checks that a file can be created beside `path` by creating a temporary there and removing it
// again; throws as create_temp_beside does.
void probe_output_dir(const std::string& path);

// Refuses (Error(Usage), naming `option`) an output `path` that is empty, an existing directory
// or names a directory (trailing '/'), or that is the same file (device and inode) as one of
// `inputs` ("-" entries are skipped). "-" itself passes: it means standard output.
void check_output_path(const std::string& option, const std::string& path,
                       const std::vector<std::string>& inputs);

// Refuses (Error(Usage), naming `option`) a `dir` that does not exist or is not a directory.
void check_directory(const std::string& option, const std::string& dir);

// One output, opened when constructed: "-" is standard output, written directly; any other path
// is checked (check_output_path) and its temporary created now. The destructor removes a
// temporary that was not committed.
class AtomicOutput {
 public:
  AtomicOutput(const std::string& option, const std::string& path,
               const std::vector<std::string>& inputs = {});
  ~AtomicOutput();
  AtomicOutput(const AtomicOutput&) = delete;
  AtomicOutput& operator=(const AtomicOutput&) = delete;

  const std::string& path() const { return path_; }
  bool to_stdout() const { return path_ == "-"; }
  // Calls write(FILE*) once, checks every stdio call, then fsyncs and renames the temporary over
  // the path (standard output: flushes). Throws Error(Internal) naming the path on an I/O
  // failure; the temporary is removed then. Precondition: not committed yet.
  void commit(const std::function<void(std::FILE*)>& write);

 private:
  std::string path_;
  std::string tmp_;  // empty for standard output and once committed or removed
  std::FILE* file_ = nullptr;
};

// AtomicOutput("output", path).commit(write).
void write_file_atomically(const std::string& path, const std::function<void(std::FILE*)>& write);

}  // namespace tristream
