// stream/in_core_image.hpp — the in-core unit's host image, decoded while the device starts.
//
// A fresh GPU count waits about 0.2 s for its CUDA context, and the planner needs the device's
// free memory, so the context, before it plans. When a graph will be counted in core (p = 1),
// count() decodes it meanwhile into an InCoreImage: the file's row offsets rebased to 0, then its
// columns, in the in-core unit's slot layout (UnitPreparer::place_blocks: offsets at 0, columns at
// align_up((n + 1) * 8), both padded with zeros to kSlotAlign). Once the backend exists the image
// is registered with it, and the pipeline uploads the in-core unit straight from it (a direct
// upload: no host slot is pinned and nothing is built again). The transitivity's degrees come
// from the same image (degrees, wedges), not from a second pass over the file. Out of core the
// image stays unregistered and serves the pipeline's chunks (image_source): a copy instead of a
// decompression each time a chunk is read again.
//
// Preconditions: the source's offsets start at 0 (files do) and n < 2^32.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "tristream/host_registrar.hpp"
#include "tristream/plan.hpp"

namespace tristream::stream {

class InCoreImage {
 public:
  // The in-core slot's bytes for n vertices and m edges (place_blocks' layout).
  static std::uint64_t slot_bytes(std::uint64_t n, eid_t m);
  // Whether an image of `bytes` may take that much of `room` (the available host memory, or a
  // host budget): at most a quarter of it, or at most half when the count will be in core (the
  // plan then needs little host memory beside the image: no partitions, no chunk cache). Fits
  // means within a quarter; InCoreOnly within half, only when in core; TooLarge beyond half, or
  // any room of 0.
  enum class Room { Fits, InCoreOnly, TooLarge };
  static Room room_for(std::uint64_t bytes, std::uint64_t room);

  // Starts decoding g into a new image on `threads` threads (0: resolve_threads) and returns at
  // once; widen() lets up to `most` threads decode (0 or fewer than `threads`: `threads`). Throws
  // Error(Internal) when the memory cannot be had. g outlives the image.
  InCoreImage(const GraphSource& g, unsigned threads, unsigned most = 0);
  // Stops the decoding (at the next chunk), unregisters and frees the memory.
  ~InCoreImage();
  InCoreImage(const InCoreImage&) = delete;
  InCoreImage& operator=(const InCoreImage&) = delete;

  // Waits until the image is whole; rethrows the decoding's failure (a corrupt chunk's
  // Error(Input), Error(Interrupted) on SIGINT). Any thread, any number of times.
  void wait();
  // From now on every thread the constructor's `most` allows decodes the chunks left (a count
  // whose plan, made beside the decoding, is done, and whose GPUs wait for the image's rows).
  // Any thread; no effect once the chunks are all taken.
  void widen();
  unsigned decoding_threads() const { return active_.load(std::memory_order_acquire); }
  // Whether chunk k (of the source's chunk index) is in the image already: true once decoded,
  // without waiting for the rest. The chunks are decoded from the last to the first (the plans
  // out of core start with the highest row parts).
  bool chunk_ready(std::uint64_t k) const {
    return whole_.load(std::memory_order_acquire) || done_[k].load(std::memory_order_acquire);
  }
  // Wait until the rebased offsets (and the padding after them) are in the image, or until
  // the columns of edges [e0, e1) are (every chunk holding one of them decoded). False when the
  // decoding ended without them (failed, stopped or interrupted: wait() then rethrows why).
  bool wait_offsets();
  bool wait_edges(eid_t e0, eid_t e1);
  // Registers the memory with the backend (pins it on CUDA; waits for the decoding first, since
  // a registration faults in the pages on one thread). Returns register_host's answer; the
  // destructor unregisters. Registers once: a later call (any thread) returns the first one's
  // answer.
  bool register_with(HostRegistrar& registrar);
  bool registered() const { return registered_.load(std::memory_order_acquire); }
  // Registers the whole pages holding the columns of edges [e0, e1) that no earlier call (nor
  // register_with) registered, in one registration (out of core: pair's row parts, each as soon
  // as the image holds it, so that no upload waits for the whole image). The image is then
  // covered by several registrations: a copy out of it may cross from one into the next, which
  // the registrar must allow for (the CUDA backend splits such copies). Waits for those
  // columns; true when every page of them is registered. Any thread; the destructor
  // unregisters. A later register_with registers the pages still left.
  bool register_columns(HostRegistrar& registrar, eid_t e0, eid_t e1);

  std::uint64_t n() const { return n_; }
  eid_t m() const { return m_; }
  std::uint64_t bytes() const { return bytes_; }      // the slot layout's bytes
  const unsigned char* data() const { return mem_; }  // valid after wait()
  unsigned char* data() { return mem_; }
  const eid_t* offsets() const { return reinterpret_cast<const eid_t*>(mem_); }
  // The source's offsets (the image's once decoded: they start at 0), readable at once; where
  // the columns start in the image (bytes).
  const eid_t* source_offsets() const { return g_.offsets(); }
  std::uint64_t column_offset() const { return cols_at_; }
  const vid_t* columns() const { return reinterpret_cast<const vid_t*>(mem_ + cols_at_); }
  vid_t* columns() { return reinterpret_cast<vid_t*>(mem_ + cols_at_); }

  // Adds every column's count to d[v] (n entries) on `threads` threads (InDegreeCounter); after
  // wait().
  void add_in_degrees(std::uint32_t* d, unsigned threads) const;
  // After wait() (they wait): the undirected degrees (out + in) of every vertex, and their
  // wedges (exact, as streamed_wedges gives them).
  std::vector<eid_t> degrees(unsigned threads);
  WedgeSum wedges(unsigned threads);

 private:
  void decode();

  // One decoding lane of the pool (lane < most_): the chunks from next_chunk_, once widen() or
  // the first threads_ let it.
  void decode_lane(std::size_t lane);

  const GraphSource& g_;
  unsigned threads_ = 0, most_ = 0;
  std::atomic<unsigned> active_{0};         // the lanes that may decode
  std::atomic<std::size_t> next_chunk_{0};  // the chunks handed out, the last first
  std::atomic<bool> lanes_done_{false};     // a lane has ended: no chunk left, or it failed
  std::atomic<bool> lanes_failed_{false};   // a lane failed: the others take no more chunks
  std::mutex lanes_mu_;                     // with lanes_cv_: the lanes waiting for widen()
  std::condition_variable lanes_cv_;
  std::uint64_t n_ = 0;
  eid_t m_ = 0;
  std::uint64_t cols_at_ = 0, bytes_ = 0, reserved_ = 0;
  unsigned char* mem_ = nullptr;
  HostRegistrar* registrar_ = nullptr;
  std::atomic<bool> registered_{false};
  std::mutex register_mu_;
  bool register_tried_ = false;  // (under register_mu_)
  // (under register_mu_) the registrations: byte offsets in the image, start -> end, disjoint
  std::map<std::uint64_t, std::uint64_t> pieces_;
  // Registers the pages of bytes [lo, hi) not registered yet; under register_mu_.
  bool register_bytes_locked(HostRegistrar& registrar, std::uint64_t lo, std::uint64_t hi);
  // Blocks until ready() or the decoding's end; returns ready().
  template <class Ready>
  bool wait_for(Ready ready);
  void notify();  // (the decoding thread, after each step)

  std::atomic<bool> stop_{false};
  std::atomic<bool> whole_{false};             // every chunk decoded
  std::unique_ptr<std::atomic<bool>[]> done_;  // per chunk: decoded
  std::atomic<bool> offsets_done_{false};
  std::mutex progress_mu_;  // with progress_: wait_offsets, wait_edges
  std::condition_variable progress_;
  bool ended_ = false;  // (under progress_mu_) the decoding has returned
  std::mutex mu_;
  bool joined_ = false;
  std::exception_ptr failure_;
  std::thread worker_;
};

// A source with g's metadata (offsets, chunks, stored census) whose chunks are copied from the
// image once decoded there, and read from g meanwhile (a count out of core does not wait for the
// whole image). g and image outlive it.
std::unique_ptr<GraphSource> image_source(const GraphSource& g, InCoreImage& image);

}  // namespace tristream::stream
