// convert.cpp — tristream::convert: edge-list files (every dialect, compressed or not, or standard
// input) cut into jobs for the conversion driver.
#include "tristream/convert.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <vector>

#include "dialects.hpp"
#include "input.hpp"
#include "pipeline.hpp"
#include "tristream/error.hpp"

namespace tristream {

namespace conv {
namespace {

// Read buffers handed back by the chunks that are done with them, so that every job does not
// map (and the kernel zero) fresh pages. The last one handed back is handed out first: it is the
// one most likely still in the cache. Keeps as many as the parse's window holds (the jobs
// between read and taken), so the window's memory stays mapped but never grows past it, until
// the input is read (close: the buffers handed back after it are freed).
class BufferPool {
 public:
  explicit BufferPool(std::size_t keep) : keep_(keep) {}
  void close() {
    std::lock_guard<std::mutex> lk(mu_);
    closed_ = true;
    free_.clear();
  }
  BigBuffer<char> get(std::size_t capacity) {
    {
      std::lock_guard<std::mutex> lk(mu_);
      for (std::size_t i = free_.size(); i-- > 0;)
        if (free_[i].capacity() >= capacity) {
          BigBuffer<char> out = std::move(free_[i]);
          free_.erase(free_.begin() + static_cast<std::ptrdiff_t>(i));
          return out;
        }
    }
    return BigBuffer<char>(capacity);
  }
  void put(BigBuffer<char> b) {
    std::lock_guard<std::mutex> lk(mu_);
    if (!closed_ && free_.size() < keep_) free_.push_back(std::move(b));
  }

 private:
  const std::size_t keep_;
  bool closed_ = false;
  std::mutex mu_;
  std::vector<BigBuffer<char>> free_;
};

// One job's bytes: read into a buffer of the pool, or a range of the mapped input.
struct TextChunk {
  BigBuffer<char> buf;
  std::shared_ptr<BufferPool> pool;       // takes buf back
  std::shared_ptr<const MappedFile> map;  // or: the mapped input, from `offset` on
  std::uint64_t offset = 0;
  std::size_t len = 0;
  TextSpec spec;  // how it is parsed
  const char* data() const { return map ? map->data() + offset : buf.data(); }
  // After parsing a mapped range: throws Error(Input) when the file shrank under the mapping
  // (MappedFile::changed: zeros were read instead of its bytes), whatever the parse made of them.
  void check_unchanged(const std::string& name) const {
    if (map && map->changed())
      throw Error(ErrorKind::Input, name + ": changed while being read (it shrank)");
  }
  // The job is parsed: the mapped pages leave the process (a re-check reads them again).
  void parsed() const {
    if (map) map->drop(offset, len);
  }
  ~TextChunk() {
    if (pool && buf.capacity()) pool->put(std::move(buf));
  }
};

// A file (or standard input) cut into jobs: text blocks end right after a line end (LF, CRLF or
// a lone CR); binary blocks at a record boundary.
class FileProducer : public Producer, private HeaderLines {
 public:
  FileProducer(const std::string& path, const ConvertOptions& options, std::size_t job)
      : name_(path == "-" ? "<stdin>" : path),
        reader_(path),
        job_(job),
        pool_(std::make_shared<BufferPool>(parse_window(options.threads))) {
    fill_pending(job_);
    // A UTF-8 byte order mark is not part of the first line.
    if (pending_.compare(0, 3, "\xEF\xBB\xBF") == 0) pending_.erase(0, 3);
    detect(path, options);
    // A plain regular file is parsed in place: the jobs are ranges of the mapping, from the
    // first byte not yet consumed by the header on.
    map_ = reader_.map();
    if (map_) map_pos_ = reader_.raw_bytes() - pending_.size();
  }

  // Vertices the header declares (Matrix Market rows, METIS and DIMACS n); 0 when none.
  std::uint64_t declared_vertices() const { return layout_.spec.rows; }

  std::string name() const override { return name_; }
  std::uint64_t first_line() const override { return header_lines_; }
  std::uint64_t done() const override {
    return map_ ? map_done_.load(std::memory_order_relaxed) : reader_.raw_bytes();
  }
  std::uint64_t total() const override { return reader_.raw_size(); }

  std::function<void(Block&)> next() override {
    if (dialect_ == Dialect::Bin32 || dialect_ == Dialect::Bin64) return next_binary();
    auto chunk = std::make_shared<TextChunk>();
    const std::size_t len = map_ ? next_mapped_text(*chunk) : next_text(*chunk);
    if (len == 0) {
      pool_->close();  // (the tail needs the memory more)
      return {};
    }
    chunk->len = len;
    chunk->spec = layout_.spec;
    if (chunk->spec.kind == LineKind::Metis) {
      // The vertex of a METIS line is its rank in the file: count them here, in input order.
      chunk->spec.first_vertex = vertex_lines_ + 1;
      vertex_lines_ += count_vertex_lines(chunk->data(), len, chunk->spec);
    }
    return [chunk, name = name_](Block& b) {
      parse_text(chunk->data(), chunk->len, chunk->spec, b);
      chunk->check_unchanged(name);
      chunk->parsed();
      b.text = chunk;
    };
  }

  void check(Block& b, std::uint64_t records_before) override {
    if (!layout_.declared || b.error) return;
    if (records_before + b.records <= layout_.declared_records) return;
    // Find the line of the first record beyond the declared count.
    auto chunk = std::static_pointer_cast<TextChunk>(b.text);
    TextSpec spec = chunk->spec;
    spec.entry_limit = layout_.declared_records - records_before;
    Block again;
    parse_text(chunk->data(), chunk->len, spec, again);
    b.error = true;
    b.error_line = again.error_line;
    b.error_msg = "more " + layout_.declared_noun + " than the " +
                  std::to_string(layout_.declared_records) + " declared in " +
                  layout_.declared_where + " (line " + std::to_string(layout_.declared_line) + ")";
  }

  void finish(std::uint64_t records, std::uint64_t) override {
    if (map_ && map_->changed())
      throw Error(ErrorKind::Input, name_ + ": changed while being read (it shrank)");
    if (layout_.spec.kind == LineKind::Metis && vertex_lines_ < layout_.metis_vertices)
      throw input_error(name_, layout_.declared_line,
                        "the header declares " + std::to_string(layout_.metis_vertices) +
                            " vertices but the file has " + std::to_string(vertex_lines_) +
                            " vertex lines");
    if (layout_.declared && records != layout_.declared_records)
      throw input_error(name_, layout_.declared_line,
                        layout_.declared_where + " declares " +
                            std::to_string(layout_.declared_records) + " " + layout_.declared_noun +
                            " but the file has " + std::to_string(records));
  }

 private:
  void fill_pending(std::size_t want) {
    const std::size_t old = pending_.size();
    pending_.resize(old + want);
    const std::size_t got = read_checked(&pending_[old], want);
    pending_.resize(old + got);
    if (got == 0) eof_ = true;
  }
  std::size_t read_checked(char* buf, std::size_t n) {
    try {
      return reader_.read(buf, n);
    } catch (const StreamError& e) {
      throw input_error(name_, header_lines_ + 1, e.what());
    }
  }

  // Where the line ends that starts at `from` in [p, p + len): the end of its content and the
  // start of the next line; false when the line end is not in the buffer yet (a CR as the last
  // byte may be the first half of a CRLF).
  static bool line_end(const char* p, std::size_t len, std::size_t from, bool eof,
                       std::size_t& content_end, std::size_t& next) {
    std::size_t i = from;
    while (i < len && p[i] != '\n' && p[i] != '\r') ++i;
    if (i == len) {
      if (!eof || from == len) return false;
      content_end = next = len;
      return true;
    }
    if (p[i] == '\r' && i + 1 == len && !eof) return false;
    content_end = i;
    next = i + ((p[i] == '\r' && i + 1 < len && p[i + 1] == '\n') ? 2 : 1);
    return true;
  }

  // HeaderLines over pending_.
  bool peek(std::string& line) override {
    std::size_t content_end = 0;
    while (!line_end(pending_.data(), pending_.size(), pos_, eof_, content_end, peek_next_)) {
      if (eof_) return false;
      // (+ 1: the last byte may be a CR whose LF is still unread.)
      if (pending_.size() - pos_ > header_cap_ + 1)
        throw input_error(name_, header_lines_ + 1,
                          "line longer than " + std::to_string(header_cap_) + " bytes");
      if (pos_ > 0) {
        // Drop the consumed lines, so that a long run of comments is not kept in memory.
        pending_.erase(0, pos_);
        pos_ = 0;
      }
      fill_pending(job_);
    }
    line.assign(pending_, pos_, content_end - pos_);
    if (line.size() > header_cap_)
      throw input_error(name_, header_lines_ + 1,
                        "line longer than " + std::to_string(header_cap_) + " bytes");
    return true;
  }
  void consume() override {
    pos_ = peek_next_;
    ++header_lines_;
  }
  std::uint64_t consumed() const override { return header_lines_; }

  void detect(const std::string& path, const ConvertOptions& options) {
    if (pending_.size() >= sizeof tcsr::kMagic &&
        std::memcmp(pending_.data(), tcsr::kMagic, sizeof tcsr::kMagic) == 0)
      throw input_error(name_, 0, "is already a .tcsr file (convert reads edge lists)");
    Dialect requested = parse_dialect(options.format);
    HeaderOptions ho;
    ho.header = options.header;
    ho.names = options.names;
    ho.delimiter = parse_delimiter(options.delimiter);
    if (ho.delimiter == ' ' || ho.delimiter == '\t') {
      // Blank-separated columns are the plain dialect.
      if (requested == Dialect::Auto || requested == Dialect::Csv) requested = Dialect::Plain;
      ho.delimiter = 0;
    } else if (ho.delimiter) {
      if (requested == Dialect::Auto) requested = Dialect::Csv;
      if (requested != Dialect::Csv)
        throw Error(ErrorKind::Usage, "--delimiter: only for --format csv (or auto)");
    }
    const Dialect ext = path == "-" ? Dialect::Auto : dialect_from_extension(path);
    if (requested != Dialect::Auto) {
      dialect_ = requested;
    } else if (starts_with_mtx_banner()) {
      dialect_ = Dialect::Mtx;
    } else if (ext != Dialect::Auto) {
      dialect_ = ext;
      ho.from_extension = true;
    } else {
      const std::size_t k = std::min<std::size_t>(pending_.size(), 65536);
      for (std::size_t i = 0; i < k; ++i) {
        const unsigned char c = static_cast<unsigned char>(pending_[i]);
        if (c < 0x20 && c != '\n' && c != '\r' && c != '\t' && c != '\f' && c != '\v')
          throw input_error(name_, 0,
                            "the input looks binary; give --format bin32 or bin64 (or use the "
                            ".bin32 / .bin extension)");
      }
      dialect_ = Dialect::Auto;  // text: read_header decides
    }
    if (dialect_ == Dialect::Bin32 || dialect_ == Dialect::Bin64) {
      if (options.names)
        throw Error(ErrorKind::Usage, std::string("--names: ") + dialect_name(dialect_) +
                                          " input holds numbers; --names is for text edge lists");
      record_ = dialect_ == Dialect::Bin64 ? 16 : 8;
      job_ = std::max<std::size_t>(job_ / record_ * record_, record_);
      return;
    }
    // One line per vertex: a hub's line is long.
    const bool adjacency = dialect_ == Dialect::Metis || dialect_ == Dialect::Adjlist;
    if (adjacency) header_cap_ = adjacency_line_cap(resolve_memory_limit(options));
    layout_ = read_header(dialect_, ho, *this, name_);
    layout_.spec.max_line = header_cap_;
    pending_.erase(0, pos_);
    pos_ = 0;
  }

  bool starts_with_mtx_banner() const {
    static const char banner[] = "%%matrixmarket";
    if (pending_.size() < sizeof banner - 1) return false;
    for (std::size_t i = 0; i + 1 < sizeof banner; ++i)
      if (std::tolower(static_cast<unsigned char>(pending_[i])) != banner[i]) return false;
    return true;
  }

  // Fills `chunk` with the next whole lines; returns their length (0 at the end). A line longer
  // than the cap stops the input (StreamError: the driver names its line).
  std::size_t next_text(TextChunk& chunk) {
    const std::size_t line_cap = layout_.spec.max_line;
    std::size_t cap = pending_.size() + job_;
    chunk.pool = pool_;
    chunk.buf = pool_->get(cap);
    cap = chunk.buf.capacity();
    std::memcpy(chunk.buf.data(), pending_.data(), pending_.size());
    std::size_t len = pending_.size();
    pending_.clear();
    if (!stream_error_.empty()) throw StreamError(stream_error_);
    for (;;) {
      if (!eof_) {
        try {
          const std::size_t got = reader_.read(chunk.buf.data() + len, cap - len);
          len += got;
          if (got == 0) eof_ = true;
        } catch (const StreamError& e) {
          // Damaged compressed input: parse the whole lines before the damage first, so that
          // the error names the line where the data stops.
          stream_error_ = e.what();
          const std::size_t keep = last_line_end(chunk.buf.data(), len, true);
          if (keep == 0) throw;
          len = keep;
          break;
        }
      }
      if (eof_) break;
      const std::size_t keep = last_line_end(chunk.buf.data(), len, false);
      if (keep > 0) {
        pending_.assign(chunk.buf.data() + keep, len - keep);
        len = keep;
        break;
      }
      // No line end yet: a long line. Grow the buffer up to the cap, then refuse the line.
      // (+ 1: the last byte may be a CR whose LF is still unread.)
      if (len > line_cap + 1)
        throw StreamError("line longer than " + std::to_string(line_cap) + " bytes");
      const std::size_t bigger_cap = std::max(std::min(2 * cap, line_cap + 2), cap + 1);
      BigBuffer<char> bigger(bigger_cap);
      std::memcpy(bigger.data(), chunk.buf.data(), len);
      chunk.buf = std::move(bigger);
      cap = bigger_cap;
    }
    return len;
  }

  // The length up to and including the last complete line end in [p, p + len), 0 if none. A CR
  // as the last byte counts only at the end of the input (it may be half of a CRLF).
  static std::size_t last_line_end(const char* p, std::size_t len, bool at_end) {
    const void* nl = memrchr(p, '\n', len);
    const std::size_t after_nl =
        nl ? static_cast<std::size_t>(static_cast<const char*>(nl) - p) + 1 : 0;
    const void* cr = memrchr(p + after_nl, '\r', len - after_nl);
    if (!cr) return after_nl;
    const std::size_t i = static_cast<std::size_t>(static_cast<const char*>(cr) - p);
    if (i + 1 < len || at_end) return i + 1;
    // A trailing CR: cut before it, at the previous line end.
    const std::size_t before = last_line_end(p, i, true);
    return before;
  }

  // Mapped input: the next whole lines from map_pos_ on, at least job_ bytes unless the input
  // ends first; returns their length (0 at the end). The cut follows next_text's rules.
  std::size_t next_mapped_text(TextChunk& chunk) {
    const std::uint64_t size = map_->size();
    const std::uint64_t pos = map_pos_;
    if (pos >= size) return 0;
    const std::size_t line_cap = layout_.spec.max_line;
    std::size_t keep = 0;
    for (std::uint64_t want = job_;; want *= 2) {
      const std::uint64_t end = std::min(size, pos + want);
      const std::size_t len = static_cast<std::size_t>(end - pos);
      if (end == size) {
        keep = len;  // the last line may lack its line end
        break;
      }
      keep = last_line_end(map_->data() + pos, len, false);
      if (keep > 0) break;
      // (+ 1: the last byte may be a CR whose LF comes next.)
      if (len > line_cap + 1)
        throw StreamError("line longer than " + std::to_string(line_cap) + " bytes");
    }
    chunk.map = map_;
    chunk.offset = pos;
    map_pos_ = pos + keep;
    map_done_.store(map_pos_, std::memory_order_relaxed);
    map_->prefetch(map_pos_, job_);  // the next job's bytes, read ahead
    return keep;
  }

  std::function<void(Block&)> next_mapped_binary() {
    const std::uint64_t size = map_->size();
    if (map_pos_ >= size) return {};
    auto chunk = std::make_shared<TextChunk>();
    std::uint64_t len = std::min<std::uint64_t>(job_, size - map_pos_);
    if (len % record_ != 0) {
      if (map_pos_ + len < size) len -= len % record_;  // job_ is whole records: not reached
      if (len % record_ != 0) throw truncated_binary(len % record_);
    }
    chunk->map = map_;
    chunk->offset = map_pos_;
    chunk->len = static_cast<std::size_t>(len);
    map_pos_ += len;
    map_done_.store(map_pos_, std::memory_order_relaxed);
    map_->prefetch(map_pos_, job_);
    const bool wide = dialect_ == Dialect::Bin64;
    return [chunk, wide, name = name_](Block& b) {
      parse_binary(chunk->data(), chunk->len, wide, b);
      chunk->check_unchanged(name);
      chunk->parsed();
    };
  }

  Error truncated_binary(std::size_t have) const {
    return input_error(name_, 0,
                       "truncated binary edge list: the last record has " + std::to_string(have) +
                           " of " + std::to_string(record_) + " bytes (" + dialect_name(dialect_) +
                           ")");
  }

  std::function<void(Block&)> next_binary() {
    if (map_) return next_mapped_binary();
    auto chunk = std::make_shared<TextChunk>();
    chunk->pool = pool_;
    chunk->buf = pool_->get(job_);
    std::size_t len = std::min(pending_.size(), job_);
    std::memcpy(chunk->buf.data(), pending_.data(), len);
    pending_.erase(0, len);
    if (len < job_ && !eof_) {
      const std::size_t got = reader_.read(chunk->buf.data() + len, job_ - len);
      if (got == 0) eof_ = true;
      len += got;
    }
    if (len % record_ != 0) {
      if (!eof_) {
        // Only the last block may end inside a record; keep reading whole records.
        const std::size_t more = record_ - len % record_;
        BigBuffer<char> bigger(len + more);
        std::memcpy(bigger.data(), chunk->buf.data(), len);
        const std::size_t got = reader_.read(bigger.data() + len, more);
        if (got == 0) eof_ = true;
        len += got;
        chunk->buf = std::move(bigger);
      }
      if (len % record_ != 0) throw truncated_binary(len % record_);
    }
    if (len == 0) {
      pool_->close();
      return {};
    }
    chunk->len = len;
    const bool wide = dialect_ == Dialect::Bin64;
    return [chunk, wide](Block& b) { parse_binary(chunk->data(), chunk->len, wide, b); };
  }

  std::string name_;
  ByteReader reader_;
  std::size_t job_;
  std::string pending_;  // bytes read but not yet handed out
  std::size_t pos_ = 0;  // header parsing position in pending_
  bool eof_ = false;
  std::string stream_error_;  // reported by the next call of next()
  Dialect dialect_ = Dialect::Plain;
  std::size_t record_ = 16;
  TextLayout layout_;          // what the header says; the body's spec
  std::size_t peek_next_ = 0;  // where the line after the peeked one starts in pending_
  std::uint64_t header_lines_ = 0;
  std::size_t header_cap_ = kEdgeLineCap;  // the line cap (adjacency dialects: larger)
  std::uint64_t vertex_lines_ = 0;         // METIS vertex lines handed out
  std::shared_ptr<BufferPool> pool_;
  std::shared_ptr<const MappedFile> map_;   // a plain regular file, parsed in place
  std::uint64_t map_pos_ = 0;               // the next job's first byte in map_
  std::atomic<std::uint64_t> map_done_{0};  // map_pos_ for the progress line
};

}  // namespace
}  // namespace conv

ConvertSummary convert(const std::string& input, const std::string& output,
                       const ConvertOptions& options) {
  const double t0 = conv::now_seconds();
  if (output.empty()) throw Error(ErrorKind::Usage, "convert: no output file given");
  conv::FileProducer producer(input, options, conv::job_bytes(options));
  ConvertSummary s = conv::run_conversion(producer, output, options, t0);
  s.declared_vertices = producer.declared_vertices();
  return s;
}

}  // namespace tristream
