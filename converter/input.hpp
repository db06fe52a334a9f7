// input.hpp — converter internals: byte sources (files, standard input, compressed streams).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

#include "mapped_file.hpp"

namespace tristream::conv {

enum class Compression { None, Gzip, Bzip2, Xz, Zstd };

const char* compression_name(Compression c);
// Thrown by ByteReader::read when a compressed stream is truncated or corrupt; the caller adds
// the file and line.
struct StreamError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Sequential bytes of an input ("-" is standard input), decompressed when the content starts
// with a gzip, bzip2, xz or zstd magic number.
class ByteReader {
 public:
  explicit ByteReader(const std::string& path);
  ~ByteReader();
  ByteReader(const ByteReader&) = delete;
  ByteReader& operator=(const ByteReader&) = delete;

  // Reads up to n bytes; returns fewer only at the end of the input (0 = end) or just before a
  // damaged part of a compressed stream, which the next call reports as StreamError.
  std::size_t read(char* buf, std::size_t n);
  Compression compression() const { return compression_; }
  // Bytes consumed from the underlying file so far (compressed bytes for compressed inputs).
  std::uint64_t raw_bytes() const { return raw_bytes_.load(std::memory_order_relaxed); }
  // Size of the underlying file, 0 when unknown (a pipe).
  std::uint64_t raw_size() const { return raw_size_; }
  // The input mapped, when it is a non-empty uncompressed regular file; else null. Byte k of the
  // mapping is the k-th byte read() returns (raw_bytes() of them were returned so far).
  std::shared_ptr<const MappedFile> map() const;

 private:
  struct Decoder;
  std::string path_;
  int fd_ = -1;
  bool own_fd_ = false;
  Compression compression_ = Compression::None;
  std::string prefix_;  // bytes peeked for the magic numbers, not yet returned
  std::size_t prefix_pos_ = 0;
  std::atomic<std::uint64_t> raw_bytes_{0};  // read by the progress bar on another thread
  std::uint64_t raw_size_ = 0;
  std::unique_ptr<Decoder> decoder_;
  std::string deferred_;                           // a stream error to report at the next read
  std::size_t read_raw(char* buf, std::size_t n);  // prefix then fd
  friend struct RawSource;
};

}  // namespace tristream::conv
