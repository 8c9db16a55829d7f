// CPU emulation of generated CUDA-C / HIP-C, for tests without a GPU.
//
// The generated source is compiled unchanged by the host C++ compiler after this header:
// the GPU qualifiers are defined away, threadIdx / blockIdx / blockDim / gridDim are
// thread-local variables, and ppemu_launch runs a kernel once per thread of every block, in
// order, setting those variables as a GPU would. The kernels' own index arithmetic and bounds
// guards therefore run exactly as written.
#pragma once
#define PPSTENCIL_PRELUDE 1
#define __global__
#define __device__
#define __shared__
#define __constant__
#include <math.h>

struct ppemu_dim3 {
    unsigned x, y, z;
};

static thread_local ppemu_dim3 threadIdx, blockIdx, blockDim, gridDim;

// Runs `kernel` (a callable invoking one generated kernel) over `grid` blocks of `block`
// threads.
template <class Kernel>
static void ppemu_launch(ppemu_dim3 grid, ppemu_dim3 block, Kernel kernel)
{
    gridDim = grid;
    blockDim = block;
    for (unsigned bz = 0; bz < grid.z; ++bz)
        for (unsigned by = 0; by < grid.y; ++by)
            for (unsigned bx = 0; bx < grid.x; ++bx)
                for (unsigned tz = 0; tz < block.z; ++tz)
                    for (unsigned ty = 0; ty < block.y; ++ty)
                        for (unsigned tx = 0; tx < block.x; ++tx) {
                            blockIdx = ppemu_dim3{bx, by, bz};
                            threadIdx = ppemu_dim3{tx, ty, tz};
                            kernel();
                        }
}
