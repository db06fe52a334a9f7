// tristream/error.hpp — the one error type of the project and the checking macros.
//
// Library code never calls exit(); it throws tristream::Error. The CLI maps the error kind to
// the exit status: Input and Usage -> 1, Internal and Device -> 2, Interrupted -> 128 + the
// signal (130 for SIGINT, 143 for SIGTERM; common/interrupt.hpp).
#pragma once

#include <stdexcept>
#include <string>

namespace tristream {

enum class ErrorKind {
  Input,        // bad input: an unparsable edge list, a damaged .tcsr file, a missing file
  Usage,        // bad command line or option value
  Internal,     // a bug or an unexpected system failure (I/O error, out of memory)
  Device,       // a CUDA failure
  Interrupted,  // SIGINT or SIGTERM stopped the work (common/interrupt.hpp)
};

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  ErrorKind kind() const noexcept { return kind_; }
  // Exit status the CLI uses for this error: 1 for input/usage errors, 130 when interrupted (the
  // CLI makes that 143 for SIGTERM), 2 otherwise.
  int exit_code() const noexcept {
    if (kind_ == ErrorKind::Interrupted) return 130;
    return (kind_ == ErrorKind::Input || kind_ == ErrorKind::Usage) ? 1 : 2;
  }

 private:
  ErrorKind kind_;
};

// An input error located in a file: the message reads "FILE:LINE: what" (LINE omitted when 0).
inline Error input_error(const std::string& file, unsigned long long line,
                         const std::string& what) {
  std::string msg = file;
  if (line > 0) msg += ":" + std::to_string(line);
  msg += ": " + what;
  return Error(ErrorKind::Input, msg);
}

[[noreturn]] inline void throw_internal(const char* expr, const char* file, int line,
                                        const std::string& what) {
  throw Error(ErrorKind::Internal, std::string(what.empty() ? "internal check failed" : what) +
                                       " (" + expr + " at " + file + ":" + std::to_string(line) +
                                       ")");
}

}  // namespace tristream

// TS_CHECK(cond, message): throws an Internal error naming the failed condition.
#define TS_CHECK(cond, msg)                                                     \
  do {                                                                          \
    if (!(cond)) ::tristream::throw_internal(#cond, __FILE__, __LINE__, (msg)); \
  } while (0)
