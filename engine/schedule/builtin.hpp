#pragma once
#include "engine/core/registry.hpp"
#include "engine/schedule/schedule.hpp"

namespace laconic::schedule {

/// Every built-in schedule, one registration line each (engine/schedule/builtin.cpp).
Registry<Schedule> builtin_schedules();

}  // namespace laconic::schedule
