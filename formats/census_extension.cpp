// census_extension.cpp — tcsr::attach_census (format.hpp): a copy of a valid .tcsr file with the
// census extension (FORMAT.md, "The census extension", version 3) appended, written through a
// temporary beside the file, checked by opening it as a Reader, fsynced and renamed over it.
// The payload's meaning is the planner's; this file only frames it.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zstd.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "chunk_writer.hpp"
#include "common/atomic_file.hpp"
#include "layout.hpp"
#include "tristream/error.hpp"
#include "tristream/format.hpp"
#include "xxh64.hpp"

namespace tristream::tcsr {
namespace {

using namespace detail;

// Copies bytes [0, bytes) of `in` to the start of `out` (copy_file_range where the kernel has
// it: a clone or an in-kernel copy; else read and write).
void copy_prefix(int in, int out, std::uint64_t bytes, const std::string& from,
                 const std::string& to) {
  std::uint64_t done = 0;
  while (done < bytes) {
    loff_t a = static_cast<loff_t>(done), b = static_cast<loff_t>(done);
    const ssize_t w = ::copy_file_range(in, &a, out, &b, bytes - done, 0);
    if (w > 0) {
      done += static_cast<std::uint64_t>(w);
      continue;
    }
    if (w < 0 && errno == EINTR) continue;
    if (w == 0) throw Error(ErrorKind::Input, from + ": changed while being read");
    break;  // EXDEV, ENOSYS, EINVAL...: copy by hand below
  }
  std::vector<unsigned char> buf(std::size_t{4} << 20);
  while (done < bytes) {
    const std::size_t want =
        static_cast<std::size_t>(std::min<std::uint64_t>(buf.size(), bytes - done));
    const ssize_t r = ::pread(in, buf.data(), want, static_cast<off_t>(done));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) sys_fail("read failed", from);
    if (r == 0) throw Error(ErrorKind::Input, from + ": changed while being read");
    pwrite_all(out, buf.data(), static_cast<std::size_t>(r), done, to);
    done += static_cast<std::uint64_t>(r);
  }
}

// Removes the temporary unless released.
struct TempGuard {
  std::string path;
  int fd = -1;
  ~TempGuard() {
    if (fd >= 0) ::close(fd);
    if (!path.empty()) ::unlink(path.c_str());
  }
};

}  // namespace

// census_frame (layout.hpp); the payload's histograms are mostly zeros.
std::vector<unsigned char> detail::census_frame(const std::vector<unsigned char>& payload) {
  // Not zero-filled: only the pages of the (small) frame are touched.
  const std::size_t bound = ZSTD_compressBound(payload.size());
  const std::unique_ptr<unsigned char[]> buf(new unsigned char[bound]);
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  if (!cctx) throw Error(ErrorKind::Internal, "zstd: cannot create a compression context");
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, 3);
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
  const std::size_t got = ZSTD_compress2(cctx, buf.get(), bound, payload.data(), payload.size());
  ZSTD_freeCCtx(cctx);
  if (ZSTD_isError(got))
    throw Error(ErrorKind::Internal, std::string("zstd compress: ") + ZSTD_getErrorName(got));
  return std::vector<unsigned char>(buf.get(), buf.get() + got);
}

void attach_census(const std::string& path, const std::vector<unsigned char>& payload) {
  TS_CHECK(!payload.empty() && payload.size() <= kMaxCensusBytes,
           "attach_census: payload of " + std::to_string(payload.size()) + " bytes");
  const std::vector<unsigned char> frame = census_frame(payload);
  // 1. The file as it is: valid, and where its sections end (the old census dropped).
  std::uint64_t body_end = kHeaderSize;
  unsigned char head[kHeaderSize];
  {
    const Reader r(path);
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw Error(ErrorKind::Input, path + ": cannot open: " + std::strerror(errno));
    const ssize_t got = ::pread(fd, head, kHeaderSize, 0);
    ::close(fd);
    if (got != static_cast<ssize_t>(kHeaderSize))
      throw Error(ErrorKind::Input, path + ": changed while being read");
    const std::uint32_t count = get_u32(head + kOffSectionCount);
    for (std::uint32_t i = 0; i < count; ++i) {
      const unsigned char* e = head + kOffSectionTable + i * kSectionEntrySize;
      body_end = std::max(body_end, get_u64(e + kSecOffset) + get_u64(e + kSecSize));
    }
  }
  // 2. The copy: the sections, zero padding to 8 bytes, the payload.
  const TempFile t = create_temp_beside(path);
  TempGuard guard{t.path, t.fd};
  const int in = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) throw Error(ErrorKind::Input, path + ": cannot open: " + std::strerror(errno));
  try {
    copy_prefix(in, t.fd, body_end, path, t.path);
  } catch (...) {
    ::close(in);
    throw;
  }
  ::close(in);
  const std::uint64_t census_offset = (body_end + 7) / 8 * 8;
  const unsigned char zeros[8] = {};
  pwrite_all(t.fd, zeros, census_offset - body_end, body_end, t.path);
  pwrite_all(t.fd, frame.data(), frame.size(), census_offset, t.path);
  if (::ftruncate(t.fd, static_cast<off_t>(census_offset + frame.size())) != 0)
    sys_fail("truncate failed", t.path);
  // 3. The header: version 3, the extension's place and checksum.
  put_u32(head + kOffVersion, kFormatVersionCensus);
  put_u64(head + kOffCensusOffset, census_offset);
  put_u64(head + kOffCensusChecksum, xxh64(frame.data(), frame.size()));
  put_u64(head + kOffHeaderChecksum, xxh64(head, kOffHeaderChecksum));
  pwrite_all(t.fd, head, kHeaderSize, 0, t.path);
  if (::fsync(t.fd) != 0) sys_fail("fsync failed", t.path);
  const int closing = guard.fd;
  guard.fd = -1;
  if (::close(closing) != 0) sys_fail("close failed", t.path);
  // 4. The new file opens as a valid .tcsr file before it replaces the old one.
  {
    const Reader check(t.path);
    (void)check.census();
  }
  rename_over_and_sync_dir(t.path, path);
  guard.path.clear();
}

}  // namespace tristream::tcsr
