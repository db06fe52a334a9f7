// reseal.hpp — recomputes every checksum of a .tcsr image in memory, so that an edited or
// mutated file reaches the reader's structural checks instead of stopping at a checksum. For
// tests and fuzzing only; internal to formats/.
#pragma once

#include <vector>

namespace tristream::tcsr::detail {

// Rewrites, where they lie inside `file`: each chunk index entry's frame checksum (for a frame
// inside the file), the section checksums of the row offsets, chunk index and permutation, and
// the header checksum. Entries and sections pointing outside the image are left alone. Any bytes
// are accepted (an image shorter than the header is left unchanged).
void reseal(std::vector<unsigned char>& file);

}  // namespace tristream::tcsr::detail
