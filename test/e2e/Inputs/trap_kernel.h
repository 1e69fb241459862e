// Included by trap_cxx.sh: `lowbit_kernel_1` (an asm label, which the
// -Dlowbit_kernel_1 renaming of the real kernel does not touch) traps.
extern "C" void lowbit_trap_kernel() __asm__("lowbit_kernel_1");
extern "C" void lowbit_trap_kernel() { __builtin_trap(); }
