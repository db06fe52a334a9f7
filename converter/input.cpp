// input.cpp — byte sources: plain files and standard input read with read(2); compressed inputs
// through a Boost.Iostreams filter chain whose filters (below) drive zlib, libbz2, liblzma and
// zstd directly. Boost's own compiled decompressors are not used: its zstd_decompressor (1.74)
// reports a truncated stream as a clean end of input, and the compiled Boost.Iostreams library
// is not installed everywhere (the GPU machine has the headers only); the header-only part is.
#include "input.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>
#if TRISTREAM_HAVE_BZIP2
#include <bzlib.h>
#endif
#if TRISTREAM_HAVE_LZMA
#include <lzma.h>
#endif

#include <algorithm>
#include <boost/iostreams/categories.hpp>
#include <boost/iostreams/filtering_streambuf.hpp>
#include <boost/iostreams/operations.hpp>
#include <cerrno>
#include <cstring>
#include <vector>

#include "tristream/error.hpp"
#include "util.hpp"

namespace tristream::conv {

namespace io = boost::iostreams;

const char* compression_name(Compression c) {
  switch (c) {
    case Compression::Gzip:
      return "gzip";
    case Compression::Bzip2:
      return "bzip2";
    case Compression::Xz:
      return "xz";
    case Compression::Zstd:
      return "zstd";
    default:
      return "none";
  }
}

// ---- decompression filters ---------------------------------------------------------------------

// A Boost.Iostreams multichar input filter over a streaming decoder. Codec:
//   void reset();   // ready for a new stream (gzip member, bzip2 stream, xz stream, zstd frame)
//   bool run(const char* in, size_t in_len, char* out, size_t out_len, size_t& used, size_t& got);
//        // decodes; true when the stream ended; throws StreamError on corrupt data
// Concatenated streams are decoded one after another. Input that ends inside a stream is a
// truncated input and throws StreamError. Only the header-only part of Boost.Iostreams is used.
template <typename Codec>
class decode_filter {
 public:
  using char_type = char;
  struct category : io::multichar_input_filter_tag, io::closable_tag {};

  explicit decode_filter(const char* name) : s_(std::make_shared<State>()), name_(name) {}

  template <typename Source>
  std::streamsize read(Source& src, char* out, std::streamsize n) {
    State& s = *s_;
    for (;;) {
      if (s.pos == s.len && !s.eof) {
        const std::streamsize r =
            io::read(src, s.in.data(), static_cast<std::streamsize>(s.in.size()));
        if (r < 0) {
          s.eof = true;
        } else {
          s.len = static_cast<std::size_t>(r);
          s.pos = 0;
        }
      }
      if (s.pos == s.len && s.eof && !s.in_stream) return -1;
      if (!s.in_stream) {
        s.codec.reset();
        s.in_stream = true;
      }
      std::size_t used = 0, got = 0;
      const bool ended = s.codec.run(s.in.data() + s.pos, s.len - s.pos, out,
                                     static_cast<std::size_t>(n), used, got);
      s.pos += used;
      if (ended) s.in_stream = false;
      if (got > 0) return static_cast<std::streamsize>(got);
      if (ended) continue;
      if (used == 0 && s.pos == s.len && s.eof)
        throw StreamError(std::string("truncated ") + name_ +
                          " stream (the input ends inside a compressed block)");
      if (used == 0 && s.pos < s.len)
        throw StreamError(std::string("corrupt ") + name_ +
                          " stream (the decoder made no progress)");
    }
  }

  template <typename Source>
  void close(Source&) {
    s_ = std::make_shared<State>();
  }

 private:
  struct State {
    Codec codec;
    std::vector<char> in = std::vector<char>(std::size_t{1} << 17);
    std::size_t pos = 0, len = 0;
    bool eof = false, in_stream = false;
  };
  std::shared_ptr<State> s_;
  const char* name_;
};

inline unsigned clamp_uint(std::size_t n) {
  return static_cast<unsigned>(std::min<std::size_t>(n, 1u << 30));
}

struct ZlibCodec {
  z_stream z{};
  bool init = false;
  ZlibCodec() = default;
  ZlibCodec(const ZlibCodec&) = delete;
  ZlibCodec& operator=(const ZlibCodec&) = delete;
  ~ZlibCodec() {
    if (init) inflateEnd(&z);
  }
  void reset() {
    const int r = init ? inflateReset(&z) : inflateInit2(&z, 15 + 32);  // gzip or zlib header
    if (r != Z_OK) throw std::bad_alloc();
    init = true;
  }
  bool run(const char* in, std::size_t in_len, char* out, std::size_t out_len, std::size_t& used,
           std::size_t& got) {
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in));
    z.avail_in = clamp_uint(in_len);
    z.next_out = reinterpret_cast<Bytef*>(out);
    z.avail_out = clamp_uint(out_len);
    const unsigned in0 = z.avail_in, out0 = z.avail_out;
    const int r = inflate(&z, Z_NO_FLUSH);
    used = in0 - z.avail_in;
    got = out0 - z.avail_out;
    if (r == Z_STREAM_END) return true;
    if (r == Z_OK || r == Z_BUF_ERROR) return false;
    throw StreamError(std::string("corrupt gzip stream (") + (z.msg ? z.msg : "zlib error") + ")");
  }
};

#if TRISTREAM_HAVE_BZIP2
struct Bzip2Codec {
  bz_stream z{};
  bool init = false;
  Bzip2Codec() = default;
  Bzip2Codec(const Bzip2Codec&) = delete;
  Bzip2Codec& operator=(const Bzip2Codec&) = delete;
  ~Bzip2Codec() {
    if (init) BZ2_bzDecompressEnd(&z);
  }
  void reset() {
    if (init) BZ2_bzDecompressEnd(&z);
    z = bz_stream{};
    init = false;
    if (BZ2_bzDecompressInit(&z, 0, 0) != BZ_OK) throw std::bad_alloc();
    init = true;
  }
  bool run(const char* in, std::size_t in_len, char* out, std::size_t out_len, std::size_t& used,
           std::size_t& got) {
    z.next_in = const_cast<char*>(in);
    z.avail_in = clamp_uint(in_len);
    z.next_out = out;
    z.avail_out = clamp_uint(out_len);
    const unsigned in0 = z.avail_in, out0 = z.avail_out;
    const int r = BZ2_bzDecompress(&z);
    used = in0 - z.avail_in;
    got = out0 - z.avail_out;
    if (r == BZ_STREAM_END) return true;
    if (r == BZ_OK) return false;
    throw StreamError("corrupt bzip2 stream (error " + std::to_string(r) + ")");
  }
};
#endif

#if TRISTREAM_HAVE_LZMA
struct XzCodec {
  lzma_stream z = LZMA_STREAM_INIT;
  XzCodec() = default;
  XzCodec(const XzCodec&) = delete;
  XzCodec& operator=(const XzCodec&) = delete;
  ~XzCodec() { lzma_end(&z); }
  void reset() {
    lzma_end(&z);
    z = LZMA_STREAM_INIT;
    if (lzma_stream_decoder(&z, UINT64_MAX, 0) != LZMA_OK) throw std::bad_alloc();
  }
  bool run(const char* in, std::size_t in_len, char* out, std::size_t out_len, std::size_t& used,
           std::size_t& got) {
    z.next_in = reinterpret_cast<const std::uint8_t*>(in);
    z.avail_in = in_len;
    z.next_out = reinterpret_cast<std::uint8_t*>(out);
    z.avail_out = out_len;
    const lzma_ret r = lzma_code(&z, LZMA_RUN);
    used = in_len - z.avail_in;
    got = out_len - z.avail_out;
    if (r == LZMA_STREAM_END) return true;
    if (r == LZMA_OK || r == LZMA_BUF_ERROR) return false;
    throw StreamError("corrupt xz stream (error " + std::to_string(static_cast<int>(r)) + ")");
  }
};
#endif

struct ZstdCodec {
  ZSTD_DCtx* z = ZSTD_createDCtx();
  ZstdCodec() {
    if (!z) throw std::bad_alloc();
  }
  ZstdCodec(const ZstdCodec&) = delete;
  ZstdCodec& operator=(const ZstdCodec&) = delete;
  ~ZstdCodec() { ZSTD_freeDCtx(z); }
  void reset() {
    const std::size_t r = ZSTD_DCtx_reset(z, ZSTD_reset_session_only);
    if (ZSTD_isError(r)) throw StreamError(std::string("zstd: ") + ZSTD_getErrorName(r));
  }
  bool run(const char* in, std::size_t in_len, char* out, std::size_t out_len, std::size_t& used,
           std::size_t& got) {
    ZSTD_inBuffer ib{in, in_len, 0};
    ZSTD_outBuffer ob{out, out_len, 0};
    const std::size_t r = ZSTD_decompressStream(z, &ob, &ib);
    if (ZSTD_isError(r))
      throw StreamError(std::string("corrupt zstd stream (") + ZSTD_getErrorName(r) + ")");
    used = ib.pos;
    got = ob.pos;
    return r == 0;  // a frame is complete and flushed
  }
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

std::shared_ptr<const MappedFile> ByteReader::map() const {
  if (decoder_ || raw_size_ == 0 || fd_ < 0) return nullptr;
  return std::make_shared<const MappedFile>(fd_, raw_size_);
}

ByteReader::ByteReader(const std::string& path) : path_(path == "-" ? "<stdin>" : path) {
  if (path == "-") {
    fd_ = 0;
#ifdef F_SETPIPE_SZ
    // A pipe of 1 MiB instead of 64 KiB: 16 times fewer reads and wake-ups of the writer (best
    // effort; fails harmlessly on anything but a pipe or above the system's pipe-max-size).
    ::fcntl(fd_, F_SETPIPE_SZ, 1 << 20);
#endif
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
      const std::string msg = path_ + ": cannot read: " + std::strerror(errno);
      if (own_fd_) ::close(fd_);
      throw Error(ErrorKind::Input, msg);
    }
    if (r == 0) break;
    got += static_cast<std::size_t>(r);
  }
  prefix_.assign(magic, got);
  auto starts = [&](const char* m, std::size_t len) {
    return got >= len && std::memcmp(magic, m, len) == 0;
  };
  if (starts("\x1f\x8b", 2))
    compression_ = Compression::Gzip;
  else if (starts("BZh", 3))
    compression_ = Compression::Bzip2;
  else if (starts("\xfd"
                  "7zXZ\0",
                  6))
    compression_ = Compression::Xz;
  else if (starts("\x28\xb5\x2f\xfd", 4))
    compression_ = Compression::Zstd;
  if (compression_ != Compression::None) {
    decoder_ = std::make_unique<Decoder>();
    switch (compression_) {
      case Compression::Gzip:
        decoder_->chain.push(decode_filter<ZlibCodec>("gzip"));
        break;
#if TRISTREAM_HAVE_BZIP2
      case Compression::Bzip2:
        decoder_->chain.push(decode_filter<Bzip2Codec>("bzip2"));
        break;
#endif
#if TRISTREAM_HAVE_LZMA
      case Compression::Xz:
        decoder_->chain.push(decode_filter<XzCodec>("xz"));
        break;
#endif
      case Compression::Zstd:
        decoder_->chain.push(decode_filter<ZstdCodec>("zstd"));
        break;
      default: {
        const std::string msg = path_ + ": " + compression_name(compression_) +
                                " input, but this build has no " + compression_name(compression_) +
                                " support (rebuild with the library's development package)";
        if (own_fd_) ::close(fd_);
        throw Error(ErrorKind::Input, msg);
      }
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
  raw_bytes_.fetch_add(done, std::memory_order_relaxed);
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
      const std::streamsize r = sb.sgetn(
          buf + done, std::min<std::streamsize>(avail, static_cast<std::streamsize>(n - done)));
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
