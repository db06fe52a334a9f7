// spill_file.hpp — converter internals: sorted runs of records in spill files (or, the last
// spill's, in memory). A Segment is a stretch of records of one file (or of the run's keys); a
// Run is a sorted sequence laid out as segments; RunReader streams a run through a buffer and
// RunWriter appends records to a file through one.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "tristream/error.hpp"
#include "util.hpp"

namespace tristream::conv {

// A stretch of records in a spill file: [first, first + count) in units of records.
struct Segment {
  std::uint64_t first = 0, count = 0;
};

// Records per stream buffer when `streams` buffers of `record_bytes` records work at once: all
// together take a sixteenth of `limit`, each between 4 KiB and 4 MiB.
std::size_t io_records(std::uint64_t limit, std::size_t streams, std::size_t record_bytes);

// A spill file holding a run's records from record `first` on (up to the next file's first).
struct RunFile {
  std::uint64_t first = 0;
  std::unique_ptr<TempFile> file;
};

// A sorted run of unique edges (original ids): Edge64 records, or packed keys a << 32 | b (8
// bytes an edge; both ids below 2^32), which sort in the same order. On disk (files: the records
// laid out over one file, or over several written at once, each by one writer: writers of one
// file wait on its lock), or, for packed keys, in memory (keys: the last spill, which need not
// be written).
struct Run {
  std::vector<RunFile> files;     // ascending firsts, the first 0; none: in memory
  BigBuffer<std::uint64_t> keys;  // without files: the segments index these keys
  std::vector<Segment> segments;  // sorted one after another
  std::uint64_t edges = 0;
  bool packed = false;
  std::size_t record_bytes() const { return packed ? 8 : sizeof(Edge64); }
  // Copies records [first, first + count) (as stored) to dst.
  void read(std::uint64_t first, std::size_t count, void* dst) const;

  // Record i of the run (its segments laid end to end). Precondition: i < edges.
  Edge64 at(std::uint64_t i) const;
  // The first index whose record is not below key.
  std::uint64_t lower_bound(const Edge64& key) const;
  // Records [lo, hi) as segments.
  std::vector<Segment> slice(std::uint64_t lo, std::uint64_t hi) const;
};

// Segments of a run read one after another through a buffer. T is the record read: Edge64 or a
// packed key (std::uint64_t); a reader of Edge64 unpacks a run of packed keys as it reads.
// Precondition: the run outlives the reader.
template <typename T>
class RunReader {
 public:
  RunReader(const Run& run, std::vector<Segment> segments, std::size_t buffer_records)
      : run_(run),
        segs_(std::move(segments)),
        buf_(std::max<std::size_t>(buffer_records, 16)),
        unpack_(run.packed && sizeof(T) != 8) {
    static_assert(sizeof(T) == 8 || sizeof(T) == sizeof(Edge64), "a key or an Edge64");
    TS_CHECK(run.packed || sizeof(T) != 8, "records read as packed keys");
    if (unpack_) keys_.resize(buf_.size());
    fill();
  }
  bool valid() const { return pos_ < len_; }
  const T& head() const { return buf_[pos_]; }
  void advance() {
    if (++pos_ == len_) fill();
  }

 private:
  void fill() {
    pos_ = len_ = 0;
    while (seg_ < segs_.size() && next_ >= segs_[seg_].count) {
      ++seg_;
      next_ = 0;
    }
    if (seg_ == segs_.size()) return;
    const Segment& s = segs_[seg_];
    const std::size_t want =
        static_cast<std::size_t>(std::min<std::uint64_t>(buf_.size(), s.count - next_));
    if (unpack_) {
      run_.read(s.first + next_, want, keys_.data());
      if constexpr (sizeof(T) == sizeof(Edge64))
        for (std::size_t i = 0; i < want; ++i)
          buf_[i] = Edge64{keys_[i] >> 32, keys_[i] & 0xffffffffu};
    } else {
      run_.read(s.first + next_, want, buf_.data());
    }
    len_ = want;
    next_ += want;
  }
  const Run& run_;
  std::vector<Segment> segs_;
  std::size_t seg_ = 0;
  std::uint64_t next_ = 0;  // records read from the current segment
  std::vector<T> buf_;
  bool unpack_;  // packed keys read into keys_, then unpacked into buf_
  std::vector<std::uint64_t> keys_;
  std::size_t pos_ = 0, len_ = 0;
};

// Buffered writes of consecutive records to a TempFile, from record `first` on.
template <typename T>
class RunWriter {
 public:
  RunWriter(TempFile& f, std::size_t buffer_records, std::uint64_t first = 0)
      : f_(f), first_(first) {
    buf_.reserve(buffer_records);
  }
  void push(const T& v) {
    buf_.push_back(v);
    if (buf_.size() == buf_.capacity()) flush();
  }
  void flush() {
    if (!buf_.empty())
      f_.write_at((first_ + written_) * sizeof(T), buf_.data(), buf_.size() * sizeof(T));
    written_ += buf_.size();
    buf_.clear();
  }
  std::uint64_t count() const { return written_ + buf_.size(); }
  Segment segment() const { return Segment{first_, count()}; }

 private:
  TempFile& f_;
  std::uint64_t first_, written_ = 0;
  std::vector<T> buf_;
};

}  // namespace tristream::conv
