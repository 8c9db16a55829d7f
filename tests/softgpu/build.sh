#!/usr/bin/env bash
# Builds the software GPU (test-only; never installed): DIR/lib/libcuda.so.1 and
# DIR/lib/libamdhip64.so.5 (with their unversioned names), from softgpu.cpp.
#
#   tests/softgpu/build.sh DIR [asan]
#
# With `asan` both libraries and the kernels they compile at module load are built with
# AddressSanitizer; a process using them then needs LD_PRELOAD of libasan (see .ci/soft-gpu-env).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=${1:?usage: build.sh DIR [asan]}
mode=${2:-plain}
mkdir -p "$dir/lib"
san=""
[ "$mode" = asan ] && san="-fsanitize=address -fno-omit-frame-pointer"
for api in CUDA HIP; do
    case $api in
    CUDA) so=libcuda.so.1 ;;
    HIP) so=libamdhip64.so.5 ;;
    esac
    g++ -std=c++17 -O1 -g -Wall -Wextra -Werror -shared -fPIC $san \
        -DPPSOFT_$api \
        -DPPSOFT_SHIM="\"$here/../gpu/emulation_shim.h\"" \
        -DPPSOFT_ABI="\"$here/kernel_abi.h\"" \
        -DPPSOFT_KERNEL_FLAGS="\"$san\"" \
        -Wl,-soname,$so -o "$dir/lib/$so.tmp" "$here/softgpu.cpp" -ldl
    mv "$dir/lib/$so.tmp" "$dir/lib/$so"
    ln -sf "$so" "$dir/lib/${so%.*}"
done
echo "$mode" > "$dir/mode"
