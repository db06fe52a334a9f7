#include "args.hpp"

#include <cstdio>
#include <sstream>

#include "tristream/error.hpp"

namespace tristream::cli {

namespace {
Error usage(const std::string& msg) {
  return Error(ErrorKind::Usage, msg);
}
}  // namespace

std::uint64_t parse_uint(const std::string& text, const std::string& what) {
  if (text.empty()) throw usage(what + ": expected a non-negative integer, got an empty value");
  std::uint64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9')
      throw usage(what + ": expected a non-negative integer, got '" + text + "'");
    const std::uint64_t d = static_cast<std::uint64_t>(c - '0');
    if (v > (UINT64_MAX - d) / 10) throw usage(what + ": value '" + text + "' is too large");
    v = v * 10 + d;
  }
  return v;
}

std::uint64_t parse_size(const std::string& text, const std::string& what) {
  std::size_t i = 0;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
  if (i == 0) throw usage(what + ": expected a size like 512M or 4G, got '" + text + "'");
  const std::uint64_t base = parse_uint(text.substr(0, i), what);
  std::string suffix = text.substr(i);
  for (auto& c : suffix) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  int shift = 0;
  if (suffix.empty() || suffix == "B")
    shift = 0;
  else if (suffix == "K" || suffix == "KB" || suffix == "KIB")
    shift = 10;
  else if (suffix == "M" || suffix == "MB" || suffix == "MIB")
    shift = 20;
  else if (suffix == "G" || suffix == "GB" || suffix == "GIB")
    shift = 30;
  else if (suffix == "T" || suffix == "TB" || suffix == "TIB")
    shift = 40;
  else
    throw usage(what + ": unknown size suffix '" + text.substr(i) + "' (use K, M, G or T)");
  if (shift > 0 && base > (UINT64_MAX >> shift))
    throw usage(what + ": size '" + text + "' is too large");
  return base << shift;
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
                                  std::uint64_t* out) {
  opts_.push_back(Opt{name, "", "SIZE", help, true,
                      [out, name](const std::string& v) { *out = parse_size(v, "--" + name); }});
  return *this;
}

ArgParser& ArgParser::uint_option(const std::string& name, const std::string& metavar,
                                  const std::string& help, std::uint64_t* out) {
  opts_.push_back(Opt{name, "", metavar, help, true,
                      [out, name](const std::string& v) { *out = parse_uint(v, "--" + name); }});
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

bool ArgParser::parse(int argc, char** argv, int first) {
  std::size_t next_pos = 0;
  bool only_positionals = false;
  for (int i = first; i < argc; ++i) {
    std::string a = argv[i];
    if (!only_positionals && (a == "--help" || a == "-h")) {
      std::fputs(help().c_str(), stdout);
      return false;
    }
    if (!only_positionals && a == "--") {
      only_positionals = true;
      continue;
    }
    if (!only_positionals && a.size() > 1 && a[0] == '-') {
      std::string value;
      bool has_inline = false;
      const auto eq = a.find('=');
      if (a.rfind("--", 0) == 0 && eq != std::string::npos) {
        value = a.substr(eq + 1);
        a = a.substr(0, eq);
        has_inline = true;
      }
      Opt* o = find(a);
      if (!o) throw usage(command_ + ": unknown option '" + a + "' (see --help)");
      if (o->takes_value) {
        if (!has_inline) {
          if (i + 1 >= argc) throw usage(command_ + ": option '" + a + "' needs a value");
          value = argv[++i];
        }
      } else if (has_inline) {
        throw usage(command_ + ": option '" + a + "' takes no value");
      }
      o->set(value);
      o->seen = true;
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
    for (const auto& p : pos_) {
      os << "  " << p.name;
      const std::size_t w = p.name.size() + 2;
      os << std::string(w < 28 ? 28 - w : 1, ' ') << p.help << "\n";
    }
  }
  os << "\noptions:\n";
  for (const auto& o : opts_) {
    std::string lhs = "  ";
    if (!o.short_name.empty()) lhs += o.short_name + ", ";
    lhs += "--" + o.name;
    if (o.takes_value) lhs += " " + o.metavar;
    os << lhs << std::string(lhs.size() < 28 ? 28 - lhs.size() : 1, ' ') << o.help << "\n";
  }
  os << "  -h, --help" << std::string(18, ' ') << "show this help and exit\n";
  if (!epilog_.empty()) os << "\n" << epilog_ << "\n";
  return os.str();
}

}  // namespace tristream::cli
