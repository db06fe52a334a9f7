// convert.cpp — tristream::convert: edge-list files (every dialect, compressed or not, or standard
// input) cut into jobs for the conversion driver.
#include "tristream/convert.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include "input.hpp"
#include "pipeline.hpp"
#include "tristream/error.hpp"

namespace tristream {

namespace conv {
namespace {

struct TextChunk {
  BigBuffer<char> buf;
  std::size_t len = 0;
};

bool starts_with_ci(const std::string& s, const char* prefix) {
  const std::size_t n = std::strlen(prefix);
  if (s.size() < n) return false;
  for (std::size_t i = 0; i < n; ++i)
    if (std::tolower(static_cast<unsigned char>(s[i])) !=
        std::tolower(static_cast<unsigned char>(prefix[i])))
      return false;
  return true;
}

std::vector<std::string> split_words(const std::string& line) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    std::size_t j = i;
    while (j < line.size() && !std::isspace(static_cast<unsigned char>(line[j]))) ++j;
    if (j > i) out.push_back(line.substr(i, j - i));
    i = j;
  }
  return out;
}

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// A file (or standard input) cut into jobs: text blocks end at a newline; binary blocks at a
// record boundary.
class FileProducer : public Producer {
 public:
  FileProducer(const std::string& path, Dialect requested, std::size_t job)
      : name_(path == "-" ? "<stdin>" : path), reader_(path), job_(job) {
    fill_pending(job_);
    detect(path, requested);
    if (dialect_ == Dialect::Mtx) read_mtx_header();
  }

  // Vertices the header declares (Matrix Market rows), 0 when the dialect declares none.
  std::uint64_t declared_vertices() const { return dialect_ == Dialect::Mtx ? spec_.mtx_rows : 0; }

  std::string name() const override { return name_; }
  std::uint64_t first_line() const override { return header_lines_; }
  std::uint64_t done() const override { return reader_.raw_bytes(); }
  std::uint64_t total() const override { return reader_.raw_size(); }

  std::function<void(Block&)> next() override {
    if (dialect_ == Dialect::Bin32 || dialect_ == Dialect::Bin64) return next_binary();
    auto chunk = std::make_shared<TextChunk>();
    std::size_t cap = pending_.size() + job_;
    chunk->buf.reserve(cap);
    std::memcpy(chunk->buf.data(), pending_.data(), pending_.size());
    std::size_t len = pending_.size();
    pending_.clear();
    if (!stream_error_.empty()) throw StreamError(stream_error_);
    for (;;) {
      if (!eof_) {
        const std::size_t want = cap - len;
        try {
          const std::size_t got = reader_.read(chunk->buf.data() + len, want);
          len += got;
          if (got == 0) eof_ = true;
        } catch (const StreamError& e) {
          // Damaged compressed input: parse the whole lines before the damage first, so that
          // the error names the line where the data stops.
          stream_error_ = e.what();
          const void* nl = memrchr(chunk->buf.data(), '\n', len);
          if (!nl) throw;
          len = static_cast<std::size_t>(static_cast<const char*>(nl) - chunk->buf.data()) + 1;
          break;
        }
      }
      if (eof_) break;
      const void* nl = memrchr(chunk->buf.data(), '\n', len);
      if (nl) {
        const std::size_t keep =
            static_cast<std::size_t>(static_cast<const char*>(nl) - chunk->buf.data()) + 1;
        pending_.assign(chunk->buf.data() + keep, len - keep);
        len = keep;
        break;
      }
      // A line longer than the buffer: grow it.
      BigBuffer<char> bigger(2 * cap);
      std::memcpy(bigger.data(), chunk->buf.data(), len);
      chunk->buf = std::move(bigger);
      cap *= 2;
    }
    if (len == 0) return {};
    chunk->len = len;
    const TextSpec spec = spec_;
    return [chunk, spec](Block& b) {
      parse_text(chunk->buf.data(), chunk->len, spec, b);
      b.text = chunk;
    };
  }

  void check(Block& b, std::uint64_t records_before) override {
    if (dialect_ != Dialect::Mtx || b.error) return;
    if (records_before + b.records <= mtx_entries_) return;
    // Find the line of the first entry beyond the declared count.
    auto chunk = std::static_pointer_cast<TextChunk>(b.text);
    TextSpec spec = spec_;
    spec.entry_limit = mtx_entries_ - records_before;
    Block again;
    parse_text(chunk->buf.data(), chunk->len, spec, again);
    b.error = true;
    b.error_line = again.error_line;
    b.error_msg = "more entries than the " + std::to_string(mtx_entries_) +
                  " declared in the size line (line " + std::to_string(size_line_) + ")";
  }

  void finish(std::uint64_t records, std::uint64_t) override {
    if (dialect_ == Dialect::Mtx && records != mtx_entries_)
      throw input_error(name_, size_line_,
                        "the size line declares " + std::to_string(mtx_entries_) +
                            " entries but the file has " + std::to_string(records));
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
      throw input_error(name_, 1, e.what());
    }
  }

  void detect(const std::string& path, Dialect requested) {
    if (pending_.size() >= sizeof tcsr::kMagic &&
        std::memcmp(pending_.data(), tcsr::kMagic, sizeof tcsr::kMagic) == 0)
      throw input_error(name_, 0, "is already a .tcsr file (convert reads edge lists)");
    const Dialect ext = path == "-" ? Dialect::Auto : dialect_from_extension(path);
    const bool banner = starts_with_ci(pending_, "%%MatrixMarket");
    if (requested != Dialect::Auto) {
      dialect_ = requested;
    } else if (banner) {
      dialect_ = Dialect::Mtx;
    } else if (ext != Dialect::Auto) {
      dialect_ = ext;
    } else {
      const std::size_t k = std::min<std::size_t>(pending_.size(), 65536);
      for (std::size_t i = 0; i < k; ++i) {
        const unsigned char c = static_cast<unsigned char>(pending_[i]);
        if (c < 0x20 && c != '\n' && c != '\r' && c != '\t' && c != '\f' && c != '\v')
          throw input_error(name_, 0,
                            "the input looks binary; give --format bin32 or bin64 (or use the "
                            ".bin32 / .bin extension)");
      }
      dialect_ = Dialect::Plain;
    }
    if (dialect_ == Dialect::Bin32 || dialect_ == Dialect::Bin64) {
      record_ = dialect_ == Dialect::Bin64 ? 16 : 8;
      job_ = std::max<std::size_t>(job_ / record_ * record_, record_);
    }
  }

  // Reads the next whole line of the header from pending_ (refilling it); false at the end.
  bool header_line(std::string& line) {
    for (;;) {
      const std::size_t nl = pending_.find('\n', pos_);
      if (nl != std::string::npos) {
        line = pending_.substr(pos_, nl - pos_);
        pos_ = nl + 1;
        ++header_lines_;
        break;
      }
      if (eof_) {
        if (pos_ >= pending_.size()) return false;
        line = pending_.substr(pos_);
        pos_ = pending_.size();
        ++header_lines_;
        break;
      }
      fill_pending(job_);
    }
    if (!line.empty() && line.back() == '\r') line.pop_back();
    return true;
  }

  void read_mtx_header() {
    std::string line;
    if (!header_line(line) || !starts_with_ci(line, "%%MatrixMarket"))
      throw input_error(name_, 1, "missing the '%%MatrixMarket matrix coordinate ...' banner");
    const auto w = split_words(line);
    if (w.size() < 5 || lower(w[1]) != "matrix")
      throw input_error(name_, 1,
                        "bad Matrix Market banner (expected '%%MatrixMarket matrix "
                        "coordinate FIELD SYMMETRY')");
    if (lower(w[2]) != "coordinate")
      throw input_error(name_, 1,
                        "only Matrix Market 'coordinate' files hold graphs, not '" + w[2] + "'");
    const std::string field = lower(w[3]), sym = lower(w[4]);
    if (field != "pattern" && field != "integer" && field != "real" && field != "complex")
      throw input_error(name_, 1,
                        "unknown Matrix Market field '" + w[3] +
                            "' (expected pattern, integer, real or complex)");
    if (sym != "general" && sym != "symmetric" && sym != "skew-symmetric" && sym != "hermitian")
      throw input_error(name_, 1,
                        "unknown Matrix Market symmetry '" + w[4] +
                            "' (expected general, symmetric, skew-symmetric or hermitian)");
    for (;;) {
      if (!header_line(line))
        throw input_error(name_, header_lines_, "missing the size line 'rows columns entries'");
      const auto first = line.find_first_not_of(" \t");
      if (first == std::string::npos || line[first] == '%') continue;
      break;
    }
    size_line_ = header_lines_;
    const auto v = split_words(line);
    std::uint64_t num[3] = {0, 0, 0};
    bool ok = v.size() == 3;
    for (std::size_t i = 0; ok && i < 3; ++i) {
      const std::string& t = v[i];
      ok = !t.empty() && t.size() <= 19 && t.find_first_not_of("0123456789") == std::string::npos;
      if (ok) num[i] = std::stoull(t);
    }
    if (!ok)
      throw input_error(
          name_, size_line_,
          "bad size line '" + line.substr(0, 60) + "' (expected 'rows columns entries')");
    spec_.mtx = true;
    spec_.mtx_rows = num[0];
    spec_.mtx_cols = num[1];
    mtx_entries_ = num[2];
    pending_.erase(0, pos_);
    pos_ = 0;
  }

  std::function<void(Block&)> next_binary() {
    auto chunk = std::make_shared<TextChunk>();
    chunk->buf.reserve(job_);
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
      if (len % record_ != 0)
        throw input_error(name_, 0,
                          "truncated binary edge list: the last record has " +
                              std::to_string(len % record_) + " of " + std::to_string(record_) +
                              " bytes (" + dialect_name(dialect_) + ")");
    }
    if (len == 0) return {};
    chunk->len = len;
    const bool wide = dialect_ == Dialect::Bin64;
    return [chunk, wide](Block& b) { parse_binary(chunk->buf.data(), chunk->len, wide, b); };
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
  TextSpec spec_;
  std::uint64_t header_lines_ = 0, size_line_ = 0, mtx_entries_ = 0;
};

}  // namespace
}  // namespace conv

ConvertSummary convert(const std::string& input, const std::string& output,
                       const ConvertOptions& options) {
  const double t0 = conv::now_seconds();
  if (output.empty()) throw Error(ErrorKind::Usage, "convert: no output file given");
  const conv::Dialect d = conv::parse_dialect(options.format);
  conv::FileProducer producer(input, d, conv::job_bytes(options));
  ConvertSummary s = conv::run_conversion(producer, output, options, t0);
  s.declared_vertices = producer.declared_vertices();
  return s;
}

}  // namespace tristream
