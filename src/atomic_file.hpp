// atomic_file.hpp — writes a file through a temporary beside it: write, fsync, rename. A reader
// never sees a half-written file, and a failure leaves the previous file (if any) untouched.
#pragma once

#include <cstdio>
#include <functional>
#include <string>

namespace tristream {

// Calls write(FILE*) on "<path>.tmp.<pid>", checks every stdio call, fsyncs and renames it to
// `path`. Throws Error(Internal) naming the file on an I/O failure (the temporary is removed).
void write_file_atomically(const std::string& path, const std::function<void(std::FILE*)>& write);

}  // namespace tristream
