// write_floor.cpp — the floor of writing a converter's output on this machine: one file of
// --mib MiB written from a ring of 32 buffers of 4 MiB (as the .tcsr writer's frames are), by
// one thread with write() — with the writer's write-behind (WriteBehind, common/: the file's
// writeback started every --step MiB; 0: none) — or by several threads with pwrite() at
// disjoint offsets, optionally beside --load threads copying memory (the compressing threads'
// share of the memory system); then fsync. The converter's output is written in order by one
// thread at a time and fsynced before its rename, so `write + fsync` at the writer's settings is
// the least its tail can spend writing a file of that size.
//
// usage: write_floor FILE [--mib N] [--step MIB] [--threads T] [--load L]
// Prints one JSON object: the bytes, the seconds of the writes and of the fsync, GB/s of both.
// The file is removed at the end.
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/write_behind.hpp"

namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "write_floor: %s: %s\n", what.c_str(), std::strerror(errno));
  std::exit(2);
}

constexpr std::size_t kPiece = std::size_t{4} << 20;
constexpr std::size_t kRing = 32;

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') {
    std::fprintf(stderr,
                 "usage: write_floor FILE [--mib N] [--step MIB] [--threads T] [--load L]\n");
    return 2;
  }
  const std::string path = argv[1];
  unsigned long long mib = 3072, step_mib = 8, threads = 1, load = 0;
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    const unsigned long long v = std::strtoull(argv[i + 1], nullptr, 10);
    if (a == "--mib")
      mib = v;
    else if (a == "--step")
      step_mib = v;
    else if (a == "--threads")
      threads = v ? v : 1;
    else if (a == "--load")
      load = v;
    else {
      std::fprintf(stderr, "write_floor: unknown option %s\n", a.c_str());
      return 2;
    }
  }
  // 1. The ring of buffers, filled with bytes that do not repeat within a buffer.
  std::vector<std::vector<unsigned char>> ring(kRing, std::vector<unsigned char>(kPiece));
  for (std::size_t b = 0; b < kRing; ++b)
    for (std::size_t i = 0; i < kPiece; ++i)
      ring[b][i] = static_cast<unsigned char>((i + b) * 2654435761u >> 13);
  const std::size_t pieces = static_cast<std::size_t>(mib) * (std::size_t{1} << 20) / kPiece;
  // 2. The load beside: threads copying 64 MiB from one buffer to another until the writes end.
  std::atomic<bool> stop{false};
  std::vector<std::thread> loaders;
  for (unsigned long long l = 0; l < load; ++l)
    loaders.emplace_back([&stop] {
      std::vector<unsigned char> a(std::size_t{64} << 20, 1), b(a.size());
      while (!stop.load(std::memory_order_relaxed)) std::memcpy(b.data(), a.data(), a.size());
    });
  // 3. The writes, then the fsync.
  ::unlink(path.c_str());
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) die("open " + path);
  const double t0 = now_s();
  if (threads == 1) {
    std::optional<tristream::WriteBehind> behind;
    if (step_mib) behind.emplace(fd, /*drop=*/false, std::uint64_t{step_mib} << 20);
    for (std::size_t p = 0; p < pieces; ++p) {
      const auto& buf = ring[p % kRing];
      for (std::size_t done = 0; done < kPiece;) {
        const ssize_t w = ::write(fd, buf.data() + done, kPiece - done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) die("write " + path);
        done += static_cast<std::size_t>(w);
      }
      if (behind) behind->wrote(kPiece);
    }
  } else {
    std::vector<std::thread> writers;
    std::atomic<bool> failed{false};
    for (unsigned long long t = 0; t < threads; ++t)
      writers.emplace_back([&, t] {
        for (std::size_t p = t; p < pieces; p += threads) {
          const auto off = static_cast<off_t>(p * kPiece);
          if (::pwrite(fd, ring[p % kRing].data(), kPiece, off) != static_cast<ssize_t>(kPiece))
            failed = true;
        }
      });
    for (auto& w : writers) w.join();
    if (failed) die("pwrite " + path);
  }
  const double t1 = now_s();
  stop = true;
  for (auto& l : loaders) l.join();
  if (::fsync(fd) != 0) die("fsync " + path);
  const double t2 = now_s();
  ::close(fd);
  ::unlink(path.c_str());
  const double bytes = static_cast<double>(pieces * kPiece);
  std::printf(
      "{\"bytes\": %.0f, \"threads\": %llu, \"step_mib\": %llu, \"load\": %llu, \"write_s\": %.3f, "
      "\"fsync_s\": %.3f, \"write_gbps\": %.2f, \"write_and_fsync_gbps\": %.2f}\n",
      bytes, threads, threads == 1 ? step_mib : 0ull, load, t1 - t0, t2 - t1,
      bytes / (t1 - t0) / 1e9, bytes / (t2 - t0) / 1e9);
  return 0;
}
