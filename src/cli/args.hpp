// args.hpp — a small declarative command-line parser for the tristream subcommands.
//
// Each subcommand declares its positionals, options and flags with their help text; parse()
// fills the bound variables, prints --help, and throws Error(Usage) on anything unexpected.
// Accepted forms: --name VALUE, --name=VALUE, -x VALUE, -xVALUE, bundled short flags (-qj, and
// -qo FILE where the last one takes a value), and "--" before positionals that start with '-'.
// Numbers are parsed strictly: digits only, range-checked, never wrapped.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "units.hpp"

namespace tristream::cli {

// Parses a size: tristream::parse_byte_size (tristream.hpp), a decimal number, optionally with a
// fraction ("1.5G"), and an optional K/M/G/T suffix (powers of 1024; "B", "KiB", "KB" accepted).
// A fraction needs a suffix; the result is rounded down to whole bytes. Throws Error(Usage)
// naming `what` on a malformed or overflowing value.
std::uint64_t parse_size(const std::string& text, const std::string& what);
// Parses an unsigned decimal integer in [lo, hi] (digits only: no sign, spaces or suffix).
// Throws Error(Usage) naming `what` and the range otherwise.
std::uint64_t parse_uint(const std::string& text, const std::string& what, std::uint64_t lo = 0,
                         std::uint64_t hi = UINT64_MAX);
using tristream::format_bytes;  // units.hpp

class ArgParser {
 public:
  ArgParser(std::string command, std::string summary);

  // A positional argument. Required ones come first.
  ArgParser& positional(const std::string& name, const std::string& help, std::string* out,
                        bool required = true);
  // --name VALUE (also --name=VALUE). short_name like "-o" may be empty.
  ArgParser& option(const std::string& name, const std::string& short_name,
                    const std::string& metavar, const std::string& help, std::string* out);
  // --name SIZE with K/M/G/T suffixes, at least `lo` bytes.
  ArgParser& size_option(const std::string& name, const std::string& help, std::uint64_t* out,
                         std::uint64_t lo = 0);
  // --name N, an unsigned integer in [lo, hi].
  ArgParser& uint_option(const std::string& name, const std::string& metavar,
                         const std::string& help, std::uint64_t* out, std::uint64_t lo = 0,
                         std::uint64_t hi = UINT64_MAX);
  // --name (no value).
  ArgParser& flag(const std::string& name, const std::string& short_name, const std::string& help,
                  bool* out);
  // Text appended to --help (examples, notes).
  ArgParser& epilog(const std::string& text);

  // Parses argv[first..argc). Returns false when --help was printed (the caller exits 0).
  bool parse(int argc, char** argv, int first = 1);
  std::string help() const;
  // True when the option was given on the command line.
  bool given(const std::string& name) const;

 private:
  struct Opt {
    std::string name, short_name, metavar, help;
    bool takes_value = true;
    std::function<void(const std::string&)> set;
    bool seen = false;
  };
  struct Pos {
    std::string name, help;
    std::string* out;
    bool required;
  };
  Opt* find(const std::string& name);
  // Handles one argument starting with '-' (not "-" or "--"); may consume argv[i + 1].
  void parse_option(const std::string& arg, int argc, char** argv, int& i);
  std::string command_, summary_, epilog_;
  std::vector<Opt> opts_;
  std::vector<Pos> pos_;
};

}  // namespace tristream::cli
