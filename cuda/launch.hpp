// cuda/launch.hpp — the seam between the CUDA kernels (owned by cuda/kernel_*.cu) and the
// drivers that own device memory and streams (the CUDA Counter, the streaming pipeline). Both
// drivers count through enqueue_device_count, the one entry (below).
// Host-compilable: no CUDA headers here; streams are passed as void* (a cudaStream_t).
#pragma once

#include <string>

#include "tristream/counter.hpp"
#include "tristream/csr.hpp"
#include "tristream/packed_rows.hpp"

namespace tristream::cuda {

// Optional host copies of the views, for `auto` (any may be null): with A's columns and the
// offsets of B and C it estimates the work of both trust formulations on a sample of rows. A
// packed block (packed_rows.hpp) gives its packed rows instead of dense offsets.
struct HostViews {
  const vid_t* a_cols = nullptr;     // indexed like A's offsets
  const eid_t* b_offsets = nullptr;  // rows + 1
  const eid_t* c_offsets = nullptr;  // C.rows + 1
  // B's and C's columns, indexed like b_offsets and c_offsets (dense offsets only): with them
  // `auto` counts trust:in's probes of a sampled row exactly (the part of B(u) from C(v)'s first
  // id on) instead of estimating them as |A(u)| |B(u)| / 2.
  const vid_t* b_cols = nullptr;
  const vid_t* c_cols = nullptr;
  PackedRows a_packed, b_packed, c_packed;
  // A slice: C's rows outside [v_begin, v_end) are empty in the C view given (window offsets),
  // which lets kernels skip A's edges into them (Task::v_lo, v_hi).
  std::uint64_t v_begin = 0, v_end = ~0ull;
  // A cut from B (SlotBlock::cut; pair's A): no host image of A, but its rows are B's with their
  // columns in [a_cut_lo, a_cut_hi) less a_cut_lo, which `auto` samples through B's host copy
  // (b_offsets or b_packed, and b_cols); a_edges: A's edges (~0: unknown).
  bool a_cut = false;
  std::uint64_t a_cut_lo = 0, a_cut_hi = 0;
  std::uint64_t a_edges = ~0ull;
  // A = B (one view) are rows of C, an oriented graph (each row's columns above its own id): a
  // row piece of the in-core count. `trust:in` then probes only the part of B(u) after v, and
  // `trust:lite` skips C(v) of each row's largest neighbour v, as in core (the triangles are the
  // same: C(v) holds ids above v only, B(u) none above its largest).
  bool rows_of_oriented_c = false;
};

// Enqueues count(A, B, C) on `stream`. The three views hold DEVICE pointers (offsets, cols);
// `rows`, `col_space` are host values. The triangle count is ADDED to *d_total (a device
// unsigned long long). per_vertex holds device pointers or nulls. Scratch memory comes from
// cudaMallocAsync on the same stream. kernel: auto|lstc|trust|wedge|gui|bitmap.
// `host_offsets_A` optionally points to a host copy of A's offsets (rows+1) for planning the
// launch (degree classes, wedge counts); may be null (then the launch plans on the device).
// `host` optionally gives more host copies for `auto` (HostViews).
// Throws Error(Device) on a CUDA failure, Error(Usage) on an unknown kernel name.
void enqueue_count(const CsrView& A, const CsrView& B, const CsrView& C, const std::string& kernel,
                   unsigned long long* d_total, const PerVertexOut& per_vertex, void* stream,
                   const eid_t* host_offsets_A = nullptr, const HostViews& host = {});

// Enqueues out[v] = off[clamp(v, v0, v1)] for v in [0, rows] (device arrays): C's offsets with
// the rows outside a slice [v0, v1) empty (tristream::window_offsets on the host).
void enqueue_window_offsets(const eid_t* off, std::uint64_t rows, std::uint64_t v0,
                            std::uint64_t v1, eid_t* out, void* stream);
// Writes the dense offsets out[0..rows] of a packed block whose arrays (count ids, count + 1
// offsets) are in device memory (cuda/expand_rows.cu), on `stream`. Returns at once.
void enqueue_expand_packed(std::uint64_t rows, std::uint64_t count, const vid_t* ids,
                           const eid_t* offsets, eid_t* out, void* stream);
// Cuts a block from B on the device (SlotBlock::cut; cuda/cut_rows.cu): the rows of B (rows + 1
// dense offsets b_off, columns b_cols, sorted in each row) with their columns in [lo, hi), as
// ids column - lo, into out_off (rows + 1) and out_cols (room for cap columns; a census that
// undercounts leaves the rest out rather than writing past cap). Scratch comes from
// cudaMallocAsync on `stream`; returns at once. Throws DeviceOutOfMemory when scratch runs out.
void enqueue_cut_rows(std::uint64_t rows, const eid_t* b_off, const vid_t* b_cols, std::uint64_t lo,
                      std::uint64_t hi, eid_t* out_off, vid_t* out_cols, std::uint64_t cap,
                      void* stream);

// The kernel `auto` would pick for these views (for reports); the rule is in docs/kernels.md.
std::string choose_kernel(const CsrView& A, const CsrView& B, const CsrView& C,
                          const eid_t* host_offsets_A, const HostViews& host = {});

// ---- the one count entry ----------------------------------------------------------------------
// What enqueue_device_count counts: three DEVICE views, the host copies that plan the launch and
// `auto` (HostViews; host_offsets_A as for enqueue_count), and per-vertex device arrays.
struct DeviceCount {
  CsrView A, B, C;                        // device pointers; A and B have the same rows
  const eid_t* host_offsets_A = nullptr;  // A's offsets on the host (rows + 1), or null
  HostViews host;                         // host copies (any may be null)
  // A slice: only the triangles whose middle vertex (a row of C) lies in
  // [host.v_begin, host.v_end) are counted.
  bool sliced = false;
  PerVertexOut per_vertex;  // device arrays (zeroed by the caller; counts are added), or nulls
};

// The one entry by which a count runs on the device, for the CUDA Counter and the streaming
// backend alike (cuda/device_count.cu). Enqueues on `stream`: *d_total = 0; for a slice, C's
// window offsets (enqueue_window_offsets) in stream-ordered scratch; enqueue_count with `kernel`
// (auto|lstc|trust|wedge|gui|bitmap[:VARIANT]); then *h_total = *d_total. d_total is device
// memory; h_total is host memory that stays valid until the stream has run (pinned, for the copy
// to be asynchronous). Throws Error(Usage) for an unknown kernel name, DeviceOutOfMemory when
// scratch memory runs out, Error(Device) on another CUDA failure.
void enqueue_device_count(const DeviceCount& job, const std::string& kernel,
                          unsigned long long* d_total, unsigned long long* h_total, void* stream);

// Pays the kernels' first-launch costs (module loading, the scratch pool, occupancy queries) with
// a tiny count per kernel family `kernel` may use ("auto": all of them), on `stream`, and waits
// for it (cuda/warm_up.cu). Throws Error(Device) on a CUDA failure, Error(Internal) on a wrong
// count.
void warm_up_kernels(const std::string& kernel, void* stream);

}  // namespace tristream::cuda
