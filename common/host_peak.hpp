// common/host_peak.hpp — the process's own memory as the kernel counts it: the resident set now
// (VmRSS) and its high-water mark (VmHWM) from /proc/self/status. This is the one measurement
// behind `host_peak_bytes` (the figure a count reports beside its host budget) and the tests that
// hold the planner's host model to what a run really uses.
//
// Resident pages are what a memory limit charges to the process: heap, thread stacks, the
// program's own code and libraries. Pages of the input file read with pread sit in the kernel's
// page cache, not in the process (a cgroup may charge them, but reclaims them before it kills).
#pragma once

#include <cstdint>
#include <string>

namespace tristream {

// A "Key:   123 kB" line's value in bytes from the text of /proc/self/status (0 when absent or
// malformed).
std::uint64_t parse_status_bytes(const std::string& status, const std::string& key);

// The resident set now (VmRSS); 0 when /proc/self/status cannot be read.
std::uint64_t host_resident_bytes();
// The high-water mark of the resident set since the process started or the last
// reset_host_peak() (VmHWM); 0 when unknown.
std::uint64_t host_peak_bytes();
// Sets the high-water mark to the resident set now (writes 5 to /proc/self/clear_refs, Linux
// 4.0 on). Returns false when the kernel refuses (the mark then keeps counting from the start).
bool reset_host_peak();

// Makes the C allocator give large freed blocks back to the kernel at once (glibc: a fixed mmap
// threshold of 1 MiB instead of one that grows with the blocks freed, which would keep freed
// chunk buffers of many MiB resident, and trimming from 1 MiB), so the resident set follows
// what the process holds. A no-op elsewhere. Called once by the command line at start.
void release_freed_memory_promptly();

}  // namespace tristream
