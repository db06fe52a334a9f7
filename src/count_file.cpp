// count_file.cpp — the streamed count of a .tcsr file: the Reader as a GraphSource, the backend
// choice, the SIGINT handler; and the CUDA streaming backend's stub in a build without CUDA.
#include "common/interrupt.hpp"
#include "tristream/error.hpp"
#include "tristream/format.hpp"
#include "tristream/pipeline.hpp"

namespace tristream {

namespace {

class ReaderSource final : public GraphSource {
 public:
  explicit ReaderSource(const tcsr::Reader& r) : r_(r) {
    for (const auto& c : r.chunks()) compressed_ += c.compressed_size;
  }
  std::string name() const override { return r_.path(); }
  std::uint64_t n() const override { return r_.n(); }
  eid_t m() const override { return r_.m(); }
  const eid_t* offsets() const override { return r_.offsets(); }
  const std::vector<tcsr::ChunkInfo>& chunks() const override { return r_.chunks(); }
  void read_chunk(std::uint64_t k, vid_t* out) const override { r_.read_chunk(k, out); }
  std::uint64_t compressed_bytes() const override { return compressed_; }

 private:
  const tcsr::Reader& r_;
  std::uint64_t compressed_ = 0;
};

}  // namespace

std::unique_ptr<GraphSource> reader_source(const tcsr::Reader& reader) {
  return std::make_unique<ReaderSource>(reader);
}

std::unique_ptr<StreamingBackend> make_streaming_backend(const PipelineOptions& options) {
  const std::string& b = options.backend;
  if (b == "cpu" || (b == "auto" && cuda_device_count() == 0))
    return make_cpu_streaming_backend(make_cpu_counter(options.counter));
  if (b == "cuda" || b == "auto") return make_cuda_streaming_backend(options.counter);
  throw Error(ErrorKind::Usage, "--backend: unknown backend '" + b + "' (use auto, cpu or cuda)");
}

CountReport count_source(const GraphSource& g, const PipelineOptions& options,
                         StreamingBackend* backend) {
  std::unique_ptr<StreamingBackend> owned;
  if (!backend) {
    owned = make_streaming_backend(options);
    backend = owned.get();
  }
  SigintScope sigint(options.handle_sigint);
  return count_with_backend(g, options, *backend);
}

CountReport count_file(const tcsr::Reader& reader, const PipelineOptions& options,
                       StreamingBackend* backend) {
  auto src = reader_source(reader);
  return count_source(*src, options, backend);
}

#ifndef TRISTREAM_HAVE_CUDA
std::unique_ptr<StreamingBackend> make_cuda_streaming_backend(const CounterOptions&) {
  throw Error(ErrorKind::Usage,
              "the CUDA backend is not available: tristream was built without CUDA (no nvcc at "
              "configure time); use --backend cpu");
}
#endif

}  // namespace tristream
