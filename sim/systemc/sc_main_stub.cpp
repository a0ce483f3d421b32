// SystemC's shared library refers to sc_main, the entry point of a program whose main() is
// SystemC's own. Systole's programs have their own main() and drive the kernel themselves
// (platform.hpp), so they link this stub (library systole_systemc_main) to resolve the symbol;
// a platform with an sc_main of its own links systole_systemc alone.
#include <cstdio>

extern "C" int sc_main(int, char*[]) {  // as SystemC declares it (sc_externs.h)
  std::fputs("this program drives SystemC itself: sc_main is not its entry point\n", stderr);
  return 1;
}
