// json.hpp — a minimal JSON object writer for the CLI's --json outputs and the stats.
// Keys are written in insertion order; strings are escaped; doubles print with 6 significant
// digits (non-finite values become null).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>

namespace tristream {

class JsonObject {
 public:
  JsonObject& add(const std::string& key, const std::string& value) {
    return raw(key, quote(value));
  }
  JsonObject& add(const std::string& key, const char* value) {
    return add(key, std::string(value));
  }
  JsonObject& add(const std::string& key, bool value) { return raw(key, value ? "true" : "false"); }
  JsonObject& add(const std::string& key, std::uint64_t value) {
    return raw(key, std::to_string(value));
  }
  JsonObject& add(const std::string& key, std::int64_t value) {
    return raw(key, std::to_string(value));
  }
  JsonObject& add(const std::string& key, unsigned value) { return add(key, std::uint64_t{value}); }
  JsonObject& add(const std::string& key, int value) { return add(key, std::int64_t{value}); }
  JsonObject& add(const std::string& key, double value) {
    if (!std::isfinite(value)) return raw(key, "null");
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.6g", value);
    return raw(key, buf);
  }
  JsonObject& add_null(const std::string& key) { return raw(key, "null"); }
  // Adds an already-serialised JSON value (object, array).
  JsonObject& raw(const std::string& key, const std::string& json) {
    body_ += (body_.empty() ? "" : ",") + quote(key) + ":" + json;
    return *this;
  }
  std::string str() const { return "{" + body_ + "}"; }

  static std::string quote(const std::string& s) {
    std::string out = "\"";
    for (unsigned char c : s) {
      switch (c) {
        case '"':
          out += "\\\"";
          break;
        case '\\':
          out += "\\\\";
          break;
        case '\n':
          out += "\\n";
          break;
        case '\r':
          out += "\\r";
          break;
        case '\t':
          out += "\\t";
          break;
        default:
          if (c < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            out += buf;
          } else {
            out += static_cast<char>(c);
          }
      }
    }
    return out + "\"";
  }

 private:
  std::string body_;
};

}  // namespace tristream
