// Works around Verilator 5.006 tearing models down through the *thread's* current context
// (VerilatedScope::~VerilatedScope → Verilated::threadContextp()->impp()->scopeErase) instead
// of the model's own. Every model constructed sets that pointer to its context, so after one
// model (and its context) is destroyed the pointer dangles, and destroying the next model locks
// a mutex in freed memory: the usb+sim/pcie+sim tests hung destroying an `rtl` device made
// before them. Clearing the pointer makes Verilator fall back to its default context, which
// lives as long as the process. Call it around destroying a model.
#pragma once

#include <verilated.h>

namespace systole::rtl {

inline void ForgetThreadContext() { Verilated::threadContextp(nullptr); }

}  // namespace systole::rtl
