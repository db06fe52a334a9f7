// input.cpp — byte sources: plain files and standard input read with read(2); gzip, bzip2 and xz
// through the Boost.Iostreams decompressors; zstd through zstd_input_filter below, a
// Boost.Iostreams multichar input filter over the zstd streaming API. (Boost 1.74's own
// zstd_decompressor reports a truncated stream as a clean end of input, so it is not used.)
#include "input.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <boost/iostreams/categories.hpp>
#include <boost/iostreams/filter/bzip2.hpp>
#include <boost/iostreams/filter/gzip.hpp>
#include <boost/iostreams/filter/lzma.hpp>
#include <boost/iostreams/filtering_streambuf.hpp>
#include <boost/iostreams/operations.hpp>
#include <cerrno>
#include <cstring>
#include <vector>

#include "tristream/error.hpp"

namespace tristream::conv {

namespace io = boost::iostreams;

const char* compression_name(Compression c) {
  switch (c) {
    case Compression::Gzip: return "gzip";
    case Compression::Bzip2: return "bzip2";
    case Compression::Xz: return "xz";
    case Compression::Zstd: return "zstd";
    default: return "none";
  }
}

const char* dialect_name(Dialect d) {
  switch (d) {
    case Dialect::Plain: return "plain";
    case Dialect::Tsv: return "tsv";
    case Dialect::Mtx: return "mtx";
    case Dialect::Bin32: return "bin32";
    case Dialect::Bin64: return "bin64";
    default: return "auto";
  }
}

Dialect parse_dialect(const std::string& name) {
  if (name == "auto" || name.empty()) return Dialect::Auto;
  if (name == "plain" || name == "snap") return Dialect::Plain;
  if (name == "tsv") return Dialect::Tsv;
  if (name == "mtx") return Dialect::Mtx;
  if (name == "bin32") return Dialect::Bin32;
  if (name == "bin64") return Dialect::Bin64;
  throw Error(ErrorKind::Usage, "--format: expected auto, plain, snap, tsv, mtx, bin32 or bin64, got '" +
                                    name + "'");
}

namespace {
bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         std::equal(suffix.rbegin(), suffix.rend(), s.rbegin(),
                    [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == b; });
}
}  // namespace

Dialect dialect_from_extension(const std::string& path) {
  std::string p = path;
  for (const char* z : {".gz", ".bz2", ".xz", ".zst", ".zstd"})
    if (ends_with(p, z)) {
      p.resize(p.size() - std::strlen(z));
      break;
    }
  if (ends_with(p, ".mtx") || ends_with(p, ".mm")) return Dialect::Mtx;
  if (ends_with(p, ".tsv")) return Dialect::Tsv;
  if (ends_with(p, ".bin32")) return Dialect::Bin32;
  if (ends_with(p, ".bin") || ends_with(p, ".bin64")) return Dialect::Bin64;
  return Dialect::Auto;
}

// ---- the zstd filter ----------------------------------------------------------------------------

// A Boost.Iostreams multichar input filter decompressing zstd (any number of frames). Every zstd
// call is checked; input that ends inside a frame is a truncated stream and throws StreamError.
class zstd_input_filter {
 public:
  using char_type = char;
  struct category : io::multichar_input_filter_tag, io::closable_tag {};

  zstd_input_filter() : s_(std::make_shared<State>()) {}

  template <typename Source>
  std::streamsize read(Source& src, char* out, std::streamsize n) {
    State& s = *s_;
    if (s.done) return -1;
    ZSTD_outBuffer ob{out, static_cast<std::size_t>(n), 0};
    while (ob.pos == 0) {
      if (s.pos == s.len && !s.eof) {
        const std::streamsize r = io::read(src, s.in.data(), static_cast<std::streamsize>(s.in.size()));
        if (r < 0) {
          s.eof = true;
        } else {
          s.len = static_cast<std::size_t>(r);
          s.pos = 0;
        }
      }
      ZSTD_inBuffer ib{s.in.data() + s.pos, s.len - s.pos, 0};
      const std::size_t ret = ZSTD_decompressStream(s.dctx, &ob, &ib);
      if (ZSTD_isError(ret)) throw StreamError(std::string("corrupt zstd stream: ") + ZSTD_getErrorName(ret));
      s.pos += ib.pos;
      // A call without progress (no input left) returns a hint for the next frame, not the state.
      if (ib.pos > 0 || ob.pos > 0) s.last = ret;
      if (ob.pos == 0 && s.pos == s.len && s.eof) {
        if (s.last != 0) throw StreamError("truncated zstd stream (input ends inside a frame)");
        s.done = true;
        return -1;
      }
    }
    return static_cast<std::streamsize>(ob.pos);
  }

  template <typename Source>
  void close(Source&) {
    s_ = std::make_shared<State>();
  }

 private:
  struct State {
    ZSTD_DCtx* dctx;
    std::vector<char> in;
    std::size_t pos = 0, len = 0, last = 1;
    bool eof = false, done = false;
    State() : dctx(ZSTD_createDCtx()), in(ZSTD_DStreamInSize()) {
      if (!dctx) throw std::bad_alloc();
    }
    ~State() { ZSTD_freeDCtx(dctx); }
    State(const State&) = delete;
    State& operator=(const State&) = delete;
  };
  std::shared_ptr<State> s_;
};

// The raw bytes of a ByteReader as a Boost.Iostreams source.
struct RawSource {
  using char_type = char;
  using category = io::source_tag;
  ByteReader* r;
  std::streamsize read(char* s, std::streamsize n) {
    const std::size_t got = r->read_raw(s, static_cast<std::size_t>(n));
    return got == 0 ? -1 : static_cast<std::streamsize>(got);
  }
};

struct ByteReader::Decoder {
  io::filtering_streambuf<io::input> chain;
};

ByteReader::ByteReader(const std::string& path)
    : path_(path), raw_bytes_(std::make_shared<std::atomic<std::uint64_t>>(0)) {
  if (path == "-") {
    fd_ = 0;
  } else {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) throw Error(ErrorKind::Input, path + ": cannot open: " + std::strerror(errno));
    own_fd_ = true;
    struct stat st {};
    if (::fstat(fd_, &st) == 0) {
      if (S_ISDIR(st.st_mode)) {
        ::close(fd_);
        throw Error(ErrorKind::Input, path + ": is a directory");
      }
      if (S_ISREG(st.st_mode)) raw_size_ = static_cast<std::uint64_t>(st.st_size);
    }
#ifdef POSIX_FADV_SEQUENTIAL
    ::posix_fadvise(fd_, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
  }
  // Peek at the magic numbers.
  char magic[6];
  std::size_t got = 0;
  while (got < sizeof magic) {
    const ssize_t r = ::read(fd_, magic + got, sizeof magic - got);
    if (r < 0) {
      if (errno == EINTR) continue;
      const std::string msg = path + ": cannot read: " + std::strerror(errno);
      if (own_fd_) ::close(fd_);
      throw Error(ErrorKind::Input, msg);
    }
    if (r == 0) break;
    got += static_cast<std::size_t>(r);
  }
  prefix_.assign(magic, got);
  raw_bytes_->store(0);
  auto starts = [&](const char* m, std::size_t len) {
    return got >= len && std::memcmp(magic, m, len) == 0;
  };
  if (starts("\x1f\x8b", 2)) compression_ = Compression::Gzip;
  else if (starts("BZh", 3)) compression_ = Compression::Bzip2;
  else if (starts("\xfd" "7zXZ\0", 6)) compression_ = Compression::Xz;
  else if (starts("\x28\xb5\x2f\xfd", 4)) compression_ = Compression::Zstd;
  if (compression_ != Compression::None) {
    decoder_ = std::make_unique<Decoder>();
    switch (compression_) {
      case Compression::Gzip: decoder_->chain.push(io::gzip_decompressor()); break;
      case Compression::Bzip2: decoder_->chain.push(io::bzip2_decompressor()); break;
      case Compression::Xz: decoder_->chain.push(io::lzma_decompressor()); break;
      default: decoder_->chain.push(zstd_input_filter()); break;
    }
    decoder_->chain.push(RawSource{this}, 1 << 20);
  }
}

ByteReader::~ByteReader() {
  decoder_.reset();
  if (own_fd_ && fd_ >= 0) ::close(fd_);
}

std::size_t ByteReader::read_raw(char* buf, std::size_t n) {
  std::size_t done = 0;
  if (prefix_pos_ < prefix_.size()) {
    done = std::min(n, prefix_.size() - prefix_pos_);
    std::memcpy(buf, prefix_.data() + prefix_pos_, done);
    prefix_pos_ += done;
  }
  while (done < n) {
    const ssize_t r = ::read(fd_, buf + done, n - done);
    if (r < 0) {
      if (errno == EINTR) continue;
      throw Error(ErrorKind::Input, path_ + ": cannot read: " + std::strerror(errno));
    }
    if (r == 0) break;
    done += static_cast<std::size_t>(r);
  }
  raw_bytes_->fetch_add(done, std::memory_order_relaxed);
  return done;
}

std::size_t ByteReader::read(char* buf, std::size_t n) {
  if (!decoder_) return read_raw(buf, n);
  if (!deferred_.empty()) throw StreamError(deferred_);
  std::size_t done = 0;
  try {
    // Copy only what the stream buffer holds, and refill it with sgetc(): a decoder exception
    // then never loses bytes already decoded.
    auto& sb = decoder_->chain;
    while (done < n) {
      std::streamsize avail = sb.in_avail();
      if (avail <= 0) {
        if (sb.sgetc() == std::char_traits<char>::eof()) break;
        avail = sb.in_avail();
        if (avail <= 0) avail = 1;
      }
      const std::streamsize r =
          sb.sgetn(buf + done, std::min<std::streamsize>(avail, static_cast<std::streamsize>(n - done)));
      if (r <= 0) break;
      done += static_cast<std::size_t>(r);
    }
    return done;
  } catch (const Error&) {
    throw;
  } catch (const StreamError& e) {
    deferred_ = e.what();
  } catch (const std::exception& e) {
    deferred_ = std::string("truncated or corrupt ") + compression_name(compression_) + " stream";
  }
  // Hand out what was decoded before the damage; the next call reports it, so the error names
  // the line where the data stops.
  if (done == 0) throw StreamError(deferred_);
  return done;
}

}  // namespace tristream::conv
