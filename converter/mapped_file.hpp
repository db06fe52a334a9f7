// mapped_file.hpp — converter internals: a regular input file mapped read-only for parsing in
// place, guarded against the file shrinking under the mapping.
//
// Reading a page of a mapping past the file's end raises SIGBUS. While a MappedFile lives, a
// SIGBUS handler (installed once, chaining to the previous disposition for any other address)
// maps a page of zeros over the faulting page of the mapping and marks it changed(): the reader
// sees zeros instead of dying, and the converter reports "FILE: changed while being read" for any
// job parsed after the mark (convert.cpp). At most 16 mappings are guarded at once; a further one
// works unguarded.
#pragma once

#include <cstdint>

namespace tristream::conv {

class MappedFile {
 public:
  MappedFile(int fd, std::uint64_t size);  // throws Error(Input) when the map fails
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  const char* data() const { return data_; }
  std::uint64_t size() const { return size_; }
  // Asks the kernel to read [offset, offset + len) ahead (best effort).
  void prefetch(std::uint64_t offset, std::uint64_t len) const;
  // Unmaps the whole pages inside [offset, offset + len) from the process; reading them again
  // reads the file again.
  void drop(std::uint64_t offset, std::uint64_t len) const;
  // Whether a read past the file's end (it shrank while mapped) was answered with zeros: what
  // was read from the mapping since may be wrong.
  bool changed() const;

 private:
  char* data_ = nullptr;
  std::uint64_t size_ = 0;
  int slot_ = -1;  // the guard's slot, or -1 (unguarded)
};

}  // namespace tristream::conv
