// reindex.cpp — tristream::reindex: the stored census (plan.hpp: encode_stored_census) written
// into a .tcsr file as its census extension (format.hpp: attach_census).
#include "tristream/format.hpp"
#include "tristream/plan.hpp"
#include "tristream/tristream.hpp"

namespace tristream {

std::uint64_t reindex(const std::string& path, unsigned threads) {
  std::vector<unsigned char> payload;
  {
    const tcsr::Reader reader(path);
    const auto src = reader_source(reader);
    payload = encode_stored_census(*src, threads);
  }
  tcsr::attach_census(path, payload);
  return payload.size();
}

}  // namespace tristream
