// common/json.cpp — number formatting for the JSON writer: shortest round-trip doubles.
#include "common/json.hpp"

#include <charconv>
#include <cmath>

namespace tristream {

std::string json_number(double value) {
  if (!std::isfinite(value)) return "null";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, value);
  std::string s(buf, r.ptr);
  // to_chars may print an integral double as "3" or in exponent form "1e+20"; both are valid
  // JSON numbers, so they are kept as they are.
  return s;
}

}  // namespace tristream
