/* Hand-written reference of the fused acoustic step (ppstencil's `fd_step`), for benchmarks.
 *
 * pnew = 2 p - pold + kv2 (pxx + pzz) on rows and columns 2..n-2 of an nz x nx row-major
 * float32 grid, with the 4th-order second derivatives pxx (along x) and pzz (along z).
 * The arithmetic is written in the same order as the generated Rust kernel and compiled with
 * -ffp-contract=off, so results are bit-identical to it (speed is unaffected: the kernel is
 * memory bound). OpenMP splits rows statically between threads. */
#include <stddef.h>
#ifdef _OPENMP
#include <omp.h>
#endif

int ppref_has_openmp(void) {
#ifdef _OPENMP
    return 1;
#else
    return 0;
#endif
}

void ppref_fd_step_f32(float *restrict pnew, const float *restrict p,
                       const float *restrict pold, const float *restrict kv2,
                       size_t nz, size_t nx, int threads) {
    /* Constants rounded from double, as the Rust kernel's T::lit does. */
    const float c1 = (float)(4.0 / 3.0), c0 = 2.5f;
    const float m_c2 = (float)(-1.0 / 12.0);
    (void)threads;
#pragma omp parallel for schedule(static) num_threads(threads)
    for (size_t iz = 2; iz < nz - 2; iz++) {
        const float *restrict r = p + iz * nx;
        float *restrict out = pnew + iz * nx;
        const float *restrict old = pold + iz * nx;
        const float *restrict k = kv2 + iz * nx;
        for (size_t ix = 2; ix < nx - 2; ix++) {
            /* Each weight once over its symmetric pair, as the generated kernels factor it. */
            float pxx = m_c2 * (r[ix - 2] + r[ix + 2]) + c1 * (r[ix - 1] + r[ix + 1]) - c0 * r[ix];
            float pzz = m_c2 * (r[ix - 2 * nx] + r[ix + 2 * nx]) + c1 * (r[ix - nx] + r[ix + nx])
                        - c0 * r[ix];
            out[ix] = 2.0f * r[ix] - old[ix] + k[ix] * (pxx + pzz);
        }
    }
}
