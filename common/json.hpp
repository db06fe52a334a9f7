// common/json.hpp — the project's one JSON writer (the CLI's --json outputs, the stats, the plan).
// Keys are written in insertion order; strings are escaped; doubles print in the shortest form
// that reads back to the same value (std::to_chars), so a figure such as a transitivity equals
// another tool's to the last digit; non-finite values become null.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>

namespace tristream {

// The shortest decimal text that parses back to exactly `value` ("null" when not finite).
std::string json_number(double value);

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
  JsonObject& add(const std::string& key, double value) { return raw(key, json_number(value)); }
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
