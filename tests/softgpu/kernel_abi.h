// Included (after tests/gpu/emulation_shim.h and the generated kernel source) by the
// trampolines the software device compiles at module load: PPSOFT_KERNEL(name) exports, for
// the generated kernel `name`, its parameter list as the C++ compiler sees it
// (ppsoft_describe_<name>) and a launcher taking the driver's `void **kernelParams`
// (ppsoft_run_<name>), which runs the kernel over every thread of every block.
#pragma once
#include <cstddef>
#include <type_traits>
#include <utility>

struct ppsoft_param {
    unsigned size;
    int pointer;
};

template <class... A>
static int ppsoft_describe(void (*)(A...), ppsoft_param *out, int cap)
{
    int n = 0;
    ((n < cap ? (void)(out[n] = ppsoft_param{(unsigned)sizeof(A), std::is_pointer<A>::value}) : (void)0, ++n), ...);
    return n;
}

template <class... A, std::size_t... I>
static void ppsoft_call(void (*k)(A...), void **p, std::index_sequence<I...>)
{
    k(*static_cast<std::remove_cv_t<A> *>(p[I])...);
}

template <class... A>
static void ppsoft_run(void (*k)(A...), const unsigned *g, const unsigned *b, void **p)
{
    ppemu_launch(ppemu_dim3{g[0], g[1], g[2]}, ppemu_dim3{b[0], b[1], b[2]},
                 [&] { ppsoft_call(k, p, std::index_sequence_for<A...>{}); });
}

#define PPSOFT_KERNEL(name)                                                                    \
    extern "C" int ppsoft_describe_##name(ppsoft_param *out, int cap)                         \
    {                                                                                          \
        return ppsoft_describe(name, out, cap);                                                \
    }                                                                                          \
    extern "C" void ppsoft_run_##name(const unsigned *g, const unsigned *b, void **p)         \
    {                                                                                          \
        ppsoft_run(name, g, b, p);                                                             \
    }
