// plan/plan_wire.hpp — a Plan as bytes and back, for the processes of one count (every rank runs
// the same build: the work units travel as their bytes). Not a file format: nothing is checked
// beyond the lengths.
#pragma once

#include <string>

#include "tristream/plan.hpp"

namespace tristream {

std::string plan_to_bytes(const Plan& plan);
// Throws Error(Internal) when the bytes are not a plan_to_bytes result of the same build.
Plan plan_from_bytes(const std::string& bytes);

}  // namespace tristream
