// E-graph ids: one 32-bit number names both an e-node (the order it was added in) and, once
// canonical, the e-class that node started. Kept as a plain integer so ids index vectors directly.
#pragma once

#include <cstdint>
#include <limits>

namespace act::egraph {

using Id = std::uint32_t;

// Never names a node or a class; used for "absent" inside fixed-size tables.
inline constexpr Id kNoId = std::numeric_limits<Id>::max();

}  // namespace act::egraph
