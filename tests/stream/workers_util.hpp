// workers_util.hpp — the workers tests' shared pieces: a CPU backend that sleeps before each
// wait() (a worker of a known slow rate) and n plain CPU workers.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "fake_backend.hpp"
#include "pipeline_util.hpp"
#include "stream/workers.hpp"

namespace tristream::stream_test {

// A backend around the CPU backend whose wait() sleeps first: a worker of a known slow rate.
class SlowBackend final : public StreamingBackend {
 public:
  SlowBackend(std::unique_ptr<StreamingBackend> inner, int sleep_ms)
      : in_(std::move(inner)), ms_(sleep_ms) {}
  std::string name() const override { return "slow"; }
  std::string describe() const override { return "slow " + in_->describe(); }
  bool device_is_host() const override { return in_->device_is_host(); }
  std::uint64_t free_device_bytes() override { return in_->free_device_bytes(); }
  void allocate(int slots, std::uint64_t bytes, std::uint64_t pv) override {
    in_->allocate(slots, bytes, pv);
  }
  unsigned char* host_slot(int slot) override { return in_->host_slot(slot); }
  void allocate_streamed(int slots, std::uint64_t bytes, std::uint64_t pv, int buffers,
                         std::uint64_t piece) override {
    in_->allocate_streamed(slots, bytes, pv, buffers, piece);
  }
  unsigned char* staging_buffer(int b) override { return in_->staging_buffer(b); }
  void wait_staging(int b) override { in_->wait_staging(b); }
  void upload_piece_async(int slot, std::uint64_t at, int b, std::uint64_t bytes) override {
    in_->upload_piece_async(slot, at, b, bytes);
  }
  void upload_async(int slot, const UnitLayout& L) override { in_->upload_async(slot, L); }
  bool register_host(void* p, std::uint64_t bytes) override { return in_->register_host(p, bytes); }
  void unregister_host(void* p) noexcept override { in_->unregister_host(p); }
  void count_async(int slot, const UnitLayout& L) override { in_->count_async(slot, L); }
  SlotResult wait(int slot) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(ms_));
    return in_->wait(slot);
  }
  void release() override { in_->release(); }

 private:
  std::unique_ptr<StreamingBackend> in_;
  int ms_;
};

inline std::vector<Worker> cpu_workers(int n) {
  std::vector<Worker> w;
  for (int i = 0; i < n; ++i) w.push_back({cpu_backend(), false});
  return w;
}

}  // namespace tristream::stream_test
