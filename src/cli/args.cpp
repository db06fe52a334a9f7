// args.cpp — the subcommands' argument parser: strict numbers and sizes, GNU-style options and
// help text aligned in one column and wrapped.
#include "args.hpp"

#include <cctype>
#include <cstdio>
#include <sstream>

#include "tristream/error.hpp"
#include "tristream/tristream.hpp"

namespace tristream::cli {

namespace {

Error usage(const std::string& msg) {
  return Error(ErrorKind::Usage, msg);
}

std::string range_text(std::uint64_t lo, std::uint64_t hi) {
  if (hi == UINT64_MAX)
    return lo == 0 ? "a non-negative integer" : "an integer >= " + std::to_string(lo);
  return "an integer in " + std::to_string(lo) + ".." + std::to_string(hi);
}

// The help column: option names up to here, their help after it, wrapped at kWidth.
constexpr std::size_t kColumn = 28, kWidth = 79;

// Appends `lhs` then `text` wrapped to kWidth with continuation lines indented to kColumn.
void help_line(std::ostringstream& os, const std::string& lhs, const std::string& text) {
  std::string line = lhs;
  if (line.size() + 2 > kColumn) {
    os << line << "\n";
    line.clear();
  }
  line.resize(kColumn, ' ');
  std::istringstream words(text);
  std::string w;
  bool first = true;
  while (words >> w) {
    if (!first && line.size() + 1 + w.size() > kWidth) {
      os << line << "\n";
      line = std::string(kColumn, ' ');
      first = true;
    }
    line += (first ? "" : " ") + w;
    first = false;
  }
  os << line << "\n";
}

}  // namespace

std::uint64_t parse_uint(const std::string& text, const std::string& what, std::uint64_t lo,
                         std::uint64_t hi) {
  const std::string expected = what + ": expected " + range_text(lo, hi);
  if (text.empty()) throw usage(expected + ", got an empty value");
  std::uint64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') throw usage(expected + ", got '" + text + "'");
    const std::uint64_t d = static_cast<std::uint64_t>(c - '0');
    if (v > (UINT64_MAX - d) / 10) throw usage(expected + ", got '" + text + "' (too large)");
    v = v * 10 + d;
  }
  if (v < lo || v > hi) throw usage(expected + ", got " + text);
  return v;
}

std::uint64_t parse_size(const std::string& text, const std::string& what) {
  return parse_byte_size(text, what);  // the API's: one size syntax for the CLI and the library
}

ArgParser::ArgParser(std::string command, std::string summary)
    : command_(std::move(command)), summary_(std::move(summary)) {}

ArgParser& ArgParser::positional(const std::string& name, const std::string& help, std::string* out,
                                 bool required) {
  pos_.push_back(Pos{name, help, out, required});
  return *this;
}

ArgParser& ArgParser::option(const std::string& name, const std::string& short_name,
                             const std::string& metavar, const std::string& help,
                             std::string* out) {
  opts_.push_back(
      Opt{name, short_name, metavar, help, true, [out](const std::string& v) { *out = v; }});
  return *this;
}

ArgParser& ArgParser::size_option(const std::string& name, const std::string& help,
                                  std::uint64_t* out, std::uint64_t lo) {
  opts_.push_back(Opt{name, "", "SIZE", help, true, [out, name, lo](const std::string& v) {
                        *out = parse_size(v, "--" + name);
                        if (*out < lo)
                          throw usage("--" + name + ": at least " + format_bytes(lo) + ", got '" +
                                      v + "'");
                      }});
  return *this;
}

ArgParser& ArgParser::uint_option(const std::string& name, const std::string& metavar,
                                  const std::string& help, std::uint64_t* out, std::uint64_t lo,
                                  std::uint64_t hi) {
  opts_.push_back(Opt{name, "", metavar, help, true, [out, name, lo, hi](const std::string& v) {
                        *out = parse_uint(v, "--" + name, lo, hi);
                      }});
  return *this;
}

ArgParser& ArgParser::flag(const std::string& name, const std::string& short_name,
                           const std::string& help, bool* out) {
  opts_.push_back(
      Opt{name, short_name, "", help, false, [out](const std::string&) { *out = true; }});
  return *this;
}

ArgParser& ArgParser::epilog(const std::string& text) {
  epilog_ = text;
  return *this;
}

ArgParser::Opt* ArgParser::find(const std::string& name) {
  for (auto& o : opts_)
    if ("--" + o.name == name || (!o.short_name.empty() && o.short_name == name)) return &o;
  return nullptr;
}

bool ArgParser::given(const std::string& name) const {
  for (const auto& o : opts_)
    if (o.name == name) return o.seen;
  return false;
}

void ArgParser::parse_option(const std::string& arg, int argc, char** argv, int& i) {
  auto take_next = [&](const std::string& shown) {
    if (i + 1 >= argc) throw usage(command_ + ": option '" + shown + "' needs a value");
    return std::string(argv[++i]);
  };
  // 1. Long options: --name, --name=VALUE, --name VALUE.
  if (arg.rfind("--", 0) == 0) {
    const auto eq = arg.find('=');
    const std::string name = arg.substr(0, eq);
    Opt* o = find(name);
    if (!o) throw usage(command_ + ": unknown option '" + name + "' (see --help)");
    if (!o->takes_value && eq != std::string::npos)
      throw usage(command_ + ": option '" + name + "' takes no value");
    o->set(!o->takes_value           ? std::string()
           : eq != std::string::npos ? arg.substr(eq + 1)
                                     : take_next(name));
    o->seen = true;
    return;
  }
  // 2. Short options, bundled like getopt: -qj is -q -j; in -qo FILE or -qoFILE the option
  //    taking a value ends the bundle.
  for (std::size_t k = 1; k < arg.size(); ++k) {
    const std::string name = std::string("-") + arg[k];
    Opt* o = find(name);
    if (!o)
      throw usage(command_ + ": unknown option '" + name + "'" +
                  (arg.size() > 2 ? " in '" + arg + "'" : "") + " (see --help)");
    o->seen = true;
    if (!o->takes_value) {
      o->set("");
      continue;
    }
    o->set(k + 1 < arg.size() ? arg.substr(k + 1) : take_next(name));
    return;
  }
}

bool ArgParser::parse(int argc, char** argv, int first) {
  std::size_t next_pos = 0;
  bool only_positionals = false;
  for (int i = first; i < argc; ++i) {
    const std::string a = argv[i];
    if (!only_positionals && (a == "--help" || a == "-h")) {
      std::fputs(help().c_str(), stdout);
      return false;
    }
    if (!only_positionals && a == "--") {
      only_positionals = true;
      continue;
    }
    if (!only_positionals && a.size() > 1 && a[0] == '-') {
      parse_option(a, argc, argv, i);
      continue;
    }
    if (next_pos >= pos_.size())
      throw usage(command_ + ": unexpected argument '" + a + "' (see --help)");
    *pos_[next_pos++].out = a;
  }
  for (std::size_t k = next_pos; k < pos_.size(); ++k)
    if (pos_[k].required) throw usage(command_ + ": missing " + pos_[k].name + " (see --help)");
  return true;
}

std::string ArgParser::help() const {
  std::ostringstream os;
  os << "usage: " << command_;
  if (!opts_.empty()) os << " [options]";
  for (const auto& p : pos_) os << (p.required ? " " + p.name : " [" + p.name + "]");
  os << "\n\n" << summary_ << "\n";
  if (!pos_.empty()) {
    os << "\narguments:\n";
    for (const auto& p : pos_) help_line(os, "  " + p.name, p.help);
  }
  // Options in GNU style: "  -o, --output FILE" or "      --format FMT", help in one column.
  os << "\noptions:\n";
  for (const auto& o : opts_) {
    std::string lhs = o.short_name.empty() ? "      " : "  " + o.short_name + ", ";
    lhs += "--" + o.name;
    if (o.takes_value) lhs += " " + o.metavar;
    help_line(os, lhs, o.help);
  }
  help_line(os, "  -h, --help", "show this help and exit");
  if (!epilog_.empty()) os << "\n" << epilog_ << "\n";
  return os.str();
}

}  // namespace tristream::cli
