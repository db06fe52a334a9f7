// plan_internal.hpp — the planner's order and estimate steps (src/plan/), for the tests: they run
// on a plan built by hand, so a test can make the tail of an order upload-bound, or cut units
// into slices the way the tail cover does (unit_slice, which the cover itself uses).
#pragma once

#include "plan/cost.hpp"
#include "plan/order.hpp"
#include "plan/replay.hpp"
