// Module 6: the code emitter. Pii nodes become concrete instructions in schedule order, with
// their attributes alpha then beta in declared order; identity instructions (slice^H, concat^H)
// are dropped, since the addresses of their neighbours already express them (App. B); the
// constant pool becomes `.constant` blocks.
#pragma once

#include <string>
#include <vector>

#include "act/alloc/csp.hpp"
#include "act/alloc/schedule.hpp"
#include "act/alloc/values.hpp"
#include "act/sim/assembly.hpp"

namespace act::alloc {

inline sim::Program emit(const GraphValues& v, const Schedule& schedule, const Assignment& assignment) {
  sim::Program program;
  for (NodeIndex i : schedule.order) {
    const select::PiiNode& x = v.node(i);
    if (x.kind != select::PiiNodeKind::Pii) continue;
    sim::ConcreteInstruction ci;
    ci.name = std::string(v.prepared(i).instruction->name);
    ci.attributes = x.alpha;
    ci.attributes.insert(ci.attributes.end(), assignment.beta.at(i).begin(), assignment.beta.at(i).end());
    program.instructions.push_back(std::move(ci));
  }
  for (const ConstantPlacement& c : v.constants) program.constants.push_back(sim::ConstantBlock{c.address, c.bytes});
  sim::normalize_constants(program.constants);
  return program;
}

}  // namespace act::alloc
