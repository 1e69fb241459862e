//===- npy_copy.cpp - read_npy then write_npy, for npy_interop.py ---------===//

#include "lowbit/error.h"
#include "lowbit/npy.h"

#include <cstdio>

int main(int argc, char **argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: lowbit_npy_copy IN.npy OUT.npy\n");
    return 2;
  }
  try {
    lowbit::NpyArray a = lowbit::read_npy(argv[1]);
    lowbit::write_npy(argv[2], a.shape, a.data.data());
  } catch (const lowbit::Error &e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
