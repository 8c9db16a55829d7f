// The software GPU: a CPU-backed libcuda.so.1 (built with -DPPSOFT_CUDA) or libamdhip64.so
// (-DPPSOFT_HIP) implementing the driver entry points ppstencil's device code calls, for the
// tests only (never installed). See tests/softgpu/README.md for what it models and the
// environment variables it reads.
//
// - Modules: PTX (CUDA) is parsed for `.version`, `.target` and every `.entry` with its
//   `.param` list; code objects (HIP) are ELF files whose size, machine, architecture, kernel
//   symbols (`name.kd`) and metadata note (msgpack `.args`) are read. The HIP module keeps
//   the caller's pointer (as ROCm's loader may) and re-reads the image at every function
//   lookup and launch: an image freed or changed after loading is reported.
// - Kernels run on the CPU: the image is matched byte for byte against the `*.ptx` / `*.co`
//   files under PPSOFT_SOURCE_DIRS, and the generated source beside it (`X.cu` / `X.hip`) is
//   compiled with g++ against tests/gpu/emulation_shim.h and kernel_abi.h into a cached shared
//   object, which is dlopened.
// - Launches check the grid and block against the device limits and the function's maximum
//   threads per block, copy every parameter with the size the image declares (so a short
//   parameter slot is an out-of-bounds read under AddressSanitizer), compare the image's
//   parameter list with the source's, and are queued: they run at the next synchronising call
//   (synchronize, copy, memset, free). Pointer parameters must be live allocations of the
//   launching device; otherwise the kernel "faults" (sticky CUDA_ERROR_ILLEGAL_ADDRESS).
// - Per-thread state: CUDA context stacks (primary contexts of two devices, push/pop/set),
//   HIP current device. Memory calls without a current context fail as on a real driver.
// - Live allocations are counted; allocations still live at exit are a failure (exit 86).
#include <algorithm>
#include <atomic>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <dlfcn.h>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

#if defined(PPSOFT_CUDA) == defined(PPSOFT_HIP)
#error "build with exactly one of -DPPSOFT_CUDA and -DPPSOFT_HIP"
#endif

#define EXPORT extern "C" __attribute__((visibility("default")))

namespace {

namespace fs = std::filesystem;
using u64 = unsigned long long;

// Result codes: CUDA and HIP share these numbers.
enum : int {
    OK = 0,
    INVALID_VALUE = 1,
    OUT_OF_MEMORY = 2,
    NOT_INITIALIZED = 3,
    INVALID_DEVICE_FUNCTION = 98,
    NO_DEVICE = 100,
    INVALID_DEVICE = 101,
    INVALID_IMAGE = 200,
    INVALID_CONTEXT = 201,
    NO_BINARY_FOR_GPU = 209,
    INVALID_PTX = 218,
    UNSUPPORTED_PTX_VERSION = 222,
    INVALID_HANDLE = 400,
    NOT_FOUND = 500,
    ILLEGAL_ADDRESS = 700,
    LAUNCH_OUT_OF_RESOURCES = 701,
    LAUNCH_FAILED = 719,
    UNKNOWN = 999,
};

struct Code {
    int code;
    const char *cuda, *hip, *text;
};
const Code CODES[] = {
    {OK, "CUDA_SUCCESS", "hipSuccess", "no error"},
    {INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "hipErrorInvalidValue", "invalid argument"},
    {OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "hipErrorOutOfMemory", "out of memory"},
    {NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "hipErrorNotInitialized", "initialization error"},
    {INVALID_DEVICE_FUNCTION, "CUDA_ERROR_INVALID_HANDLE", "hipErrorInvalidDeviceFunction", "invalid device function"},
    {NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "hipErrorNoDevice", "no device"},
    {INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "hipErrorInvalidDevice", "invalid device ordinal"},
    {INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE", "hipErrorInvalidImage", "device kernel image is invalid"},
    {INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "hipErrorInvalidContext", "invalid device context"},
    {NO_BINARY_FOR_GPU, "CUDA_ERROR_NO_BINARY_FOR_GPU", "hipErrorNoBinaryForGpu", "no kernel image is available for execution on the device"},
    {INVALID_PTX, "CUDA_ERROR_INVALID_PTX", "hipErrorInvalidKernelFile", "a PTX JIT compilation failed"},
    {UNSUPPORTED_PTX_VERSION, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION", "hipErrorUnknown", "the provided PTX was compiled with an unsupported toolchain"},
    {INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "hipErrorInvalidHandle", "invalid resource handle"},
    {NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "hipErrorNotFound", "named symbol not found"},
    {ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS", "hipErrorIllegalAddress", "an illegal memory access was encountered"},
    {LAUNCH_OUT_OF_RESOURCES, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", "hipErrorLaunchOutOfResources", "too many resources requested for launch"},
    {LAUNCH_FAILED, "CUDA_ERROR_LAUNCH_FAILED", "hipErrorLaunchFailure", "unspecified launch failure"},
    {UNKNOWN, "CUDA_ERROR_UNKNOWN", "hipErrorUnknown", "unknown error"},
};
const Code *find_code(int c)
{
    for (const Code &k : CODES)
        if (k.code == c)
            return &k;
    return nullptr;
}

long env_long(const char *name, long def)
{
    const char *v = getenv(name);
    return v && *v ? strtol(v, nullptr, 0) : def;
}
std::string env_str(const char *name, const char *def)
{
    const char *v = getenv(name);
    return v && *v ? v : def;
}

void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void note(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "ppsoftgpu: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

u64 fnv(const void *p, size_t n, u64 h = 1469598103934665603ull)
{
    const unsigned char *b = static_cast<const unsigned char *>(p);
    for (size_t i = 0; i < n; ++i)
        h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

struct ppsoft_param {
    unsigned size;
    int pointer;
};
using DescribeFn = int (*)(ppsoft_param *, int);
using RunFn = void (*)(const unsigned *, const unsigned *, void **);

struct Entry {
    std::string name;
    std::vector<unsigned> sizes; // parameter sizes the image declares, in order
};

struct Module {
    int device = 0;
    const unsigned char *image = nullptr; // HIP: the caller's bytes; CUDA: `copy`
    size_t len = 0;
    std::vector<unsigned char> copy;
    u64 sum = 0;
    std::vector<Entry> entries;
    void *so = nullptr;
    std::string origin;
};

struct Function {
    Module *module;
    const Entry *entry;
    RunFn run;
    std::vector<ppsoft_param> sig;
    int max_threads;
};

struct Launch {
    Function *f;
    unsigned g[3], b[3];
    std::vector<std::vector<unsigned char>> args;
};

struct Alloc {
    unsigned char *host;
    size_t size;
    int device;
};

struct Device {
    std::deque<Launch> queue;
    int sticky = OK;
    size_t used = 0;
};

struct Ctx {
    int device;
    bool primary;
    int refs;
};

struct State {
    std::mutex mu;
    bool init = false;
    int ndev = 2;
    Device dev[8];
    Ctx primary[8];
    std::map<u64, Alloc> allocs;
    u64 next[8] = {};
    std::vector<std::unique_ptr<Module>> modules;
    std::vector<std::unique_ptr<Function>> functions;
    std::vector<std::unique_ptr<Ctx>> created;
    std::vector<std::pair<std::string, size_t>> images; // (path, size) under PPSOFT_SOURCE_DIRS
    bool faulted = false;
};

State &S()
{
    static State *s = new State; // never destroyed: used by atexit handlers
    return *s;
}

#ifdef PPSOFT_CUDA
thread_local std::vector<Ctx *> tl_stack; // the thread's context stack
#else
thread_local int tl_device = 0; // the thread's current device
#endif

// ---------------------------------------------------------------------------------------------
// Images

bool is_module_live(const Module *m)
{
    for (auto &p : S().modules)
        if (p.get() == m)
            return true;
    return false;
}

// The image must still hold the bytes it held at load (ROCm may read it later).
int check_image(const Module *m, const char *when)
{
    if (fnv(m->image, m->len) != m->sum) {
        note("%s: the module image (%zu bytes at %p) changed since it was loaded: it was freed or "
             "overwritten; keep it alive for the module's life",
             when, m->len, (const void *)m->image);
        return INVALID_IMAGE;
    }
    return OK;
}

// PTX: `.version`, `.target` and the entries with their parameter sizes.
int parse_ptx(const char *text, size_t len, std::vector<Entry> &out, std::string &why)
{
    std::string s(text, len);
    if (s.find(".version") == std::string::npos || s.find(".target") == std::string::npos) {
        why = "not PTX (no .version / .target directive)";
        return INVALID_IMAGE;
    }
    auto ver = s.find(".version");
    double v = atof(s.c_str() + ver + 8);
    double max_v = atof(env_str("PPSOFT_CUDA_MAX_PTX", "8.0").c_str());
    if (v > max_v + 1e-9) {
        why = "PTX ISA " + std::to_string(v).substr(0, 3) + " is newer than this driver supports (" +
              std::to_string(max_v).substr(0, 3) + ")";
        return UNSUPPORTED_PTX_VERSION;
    }
    auto tgt = s.find("sm_", s.find(".target"));
    int sm = tgt == std::string::npos ? 0 : atoi(s.c_str() + tgt + 3);
    int cc = (int)env_long("PPSOFT_CUDA_CC", 80);
    if (sm > cc) {
        why = "PTX for sm_" + std::to_string(sm) + " cannot be JIT-compiled for this sm_" +
              std::to_string(cc) + " device";
        return INVALID_PTX;
    }
    size_t pos = 0;
    while ((pos = s.find(".entry", pos)) != std::string::npos) {
        pos += 6;
        size_t open = s.find('(', pos), close = s.find(')', pos);
        if (open == std::string::npos || close == std::string::npos || close < open) {
            why = "malformed .entry";
            return INVALID_PTX;
        }
        std::string name = s.substr(pos, open - pos);
        name.erase(std::remove_if(name.begin(), name.end(), ::isspace), name.end());
        Entry e{name, {}};
        std::string params = s.substr(open + 1, close - open - 1);
        size_t p = 0;
        while ((p = params.find(".param", p)) != std::string::npos) {
            p += 6;
            size_t end = params.find(',', p);
            std::string decl = params.substr(p, end == std::string::npos ? std::string::npos : end - p);
            unsigned size = 0;
            auto br = decl.find('[');
            auto ty = decl.find_first_of("busf", decl.find('.'));
            if (br != std::string::npos)
                size = (unsigned)atoi(decl.c_str() + br + 1);
            else if (ty != std::string::npos)
                size = (unsigned)atoi(decl.c_str() + ty + 1) / 8;
            if (!size) {
                why = "cannot read parameter `" + decl + "` of " + name;
                return INVALID_PTX;
            }
            e.sizes.push_back(size);
        }
        out.push_back(e);
        pos = close;
    }
    return OK;
}

// A minimal msgpack reader for the AMDGPU metadata note.
struct Msg {
    enum Kind { Nil, Int, Str, Arr, Map, Other } kind = Nil;
    long long i = 0;
    std::string s;
    std::vector<Msg> items; // array items, or keys and values alternating
    const Msg *get(const char *key) const
    {
        if (kind != Map)
            return nullptr;
        for (size_t k = 0; k + 1 < items.size(); k += 2)
            if (items[k].kind == Str && items[k].s == key)
                return &items[k + 1];
        return nullptr;
    }
};

bool msg_read(const unsigned char *&p, const unsigned char *end, Msg &m, int depth = 0)
{
    auto need = [&](size_t n) { return (size_t)(end - p) >= n; };
    auto be = [&](int n) {
        u64 v = 0;
        for (int k = 0; k < n; ++k)
            v = v << 8 | *p++;
        return v;
    };
    if (depth > 32 || !need(1))
        return false;
    unsigned c = *p++;
    size_t n = 0;
    if (c <= 0x7f || c >= 0xe0) {
        m.kind = Msg::Int;
        m.i = (signed char)c;
        if (c <= 0x7f)
            m.i = c;
        return true;
    }
    if ((c & 0xf0) == 0x80 || c == 0xde || c == 0xdf) {
        n = (c & 0xf0) == 0x80 ? (c & 15) : c == 0xde ? (need(2) ? be(2) : 0) : (need(4) ? be(4) : 0);
        m.kind = Msg::Map;
        m.items.resize(2 * n);
        for (auto &x : m.items)
            if (!msg_read(p, end, x, depth + 1))
                return false;
        return true;
    }
    if ((c & 0xf0) == 0x90 || c == 0xdc || c == 0xdd) {
        n = (c & 0xf0) == 0x90 ? (c & 15) : c == 0xdc ? (need(2) ? be(2) : 0) : (need(4) ? be(4) : 0);
        m.kind = Msg::Arr;
        m.items.resize(n);
        for (auto &x : m.items)
            if (!msg_read(p, end, x, depth + 1))
                return false;
        return true;
    }
    if ((c & 0xe0) == 0xa0 || c == 0xd9 || c == 0xda || c == 0xdb || c == 0xc4 || c == 0xc5 || c == 0xc6) {
        int w = (c & 0xe0) == 0xa0 ? 0 : (c == 0xd9 || c == 0xc4) ? 1 : (c == 0xda || c == 0xc5) ? 2 : 4;
        if (!need(w))
            return false;
        n = w ? be(w) : (c & 31);
        if (!need(n))
            return false;
        m.kind = Msg::Str;
        m.s.assign((const char *)p, n);
        p += n;
        return true;
    }
    if (c >= 0xcc && c <= 0xd3) {
        int w = 1 << ((c - 0xcc) & 3);
        if (!need(w))
            return false;
        m.kind = Msg::Int;
        m.i = (long long)be(w);
        return true;
    }
    if (c == 0xca || c == 0xcb) {
        int w = c == 0xca ? 4 : 8;
        if (!need(w))
            return false;
        p += w;
        m.kind = Msg::Other;
        return true;
    }
    if (c == 0xc0 || c == 0xc2 || c == 0xc3) {
        m.kind = Msg::Other;
        return true;
    }
    return false;
}

template <class T> T rd(const unsigned char *p)
{
    T v;
    memcpy(&v, p, sizeof v);
    return v;
}

struct Arch {
    unsigned mach;
    const char *name;
};
const Arch ARCHS[] = {{0x2f, "gfx906"}, {0x30, "gfx908"}, {0x3f, "gfx90a"}, {0x36, "gfx1030"},
                      {0x40, "gfx940"}, {0x4c, "gfx942"}, {0x41, "gfx1100"}, {0x2c, "gfx900"}};
const char *arch_name(unsigned mach)
{
    for (const Arch &a : ARCHS)
        if (a.mach == mach)
            return a.name;
    return "unknown gfx";
}

// Declared size of an ELF image (headers, tables, sections), read from the image itself as a
// loader given only a pointer does. Reads past the caller's buffer when it is truncated.
size_t elf_size(const unsigned char *img)
{
    u64 phoff = rd<u64>(img + 32), shoff = rd<u64>(img + 40);
    unsigned phentsize = rd<uint16_t>(img + 54), phnum = rd<uint16_t>(img + 56);
    unsigned shentsize = rd<uint16_t>(img + 58), shnum = rd<uint16_t>(img + 60);
    size_t size = std::max<u64>(64, std::max(phoff + (u64)phentsize * phnum, shoff + (u64)shentsize * shnum));
    for (unsigned k = 0; k < shnum; ++k) {
        const unsigned char *sh = img + shoff + (u64)k * shentsize;
        if (rd<uint32_t>(sh + 4) != 8 /* SHT_NOBITS */)
            size = std::max<u64>(size, rd<u64>(sh + 24) + rd<u64>(sh + 32));
    }
    return size;
}

int parse_code_object(const unsigned char *img, size_t len, std::vector<Entry> &out, std::string &why)
{
    u64 shoff = rd<u64>(img + 40);
    unsigned shentsize = rd<uint16_t>(img + 58), shnum = rd<uint16_t>(img + 60);
    auto sec = [&](unsigned k) { return img + shoff + (u64)k * shentsize; };
    std::vector<std::string> kernels;
    std::map<std::string, std::vector<unsigned>> args;
    for (unsigned k = 0; k < shnum; ++k) {
        const unsigned char *sh = sec(k);
        unsigned type = rd<uint32_t>(sh + 4);
        u64 off = rd<u64>(sh + 24), size = rd<u64>(sh + 32);
        if (off + size > len) {
            why = "a section lies outside the image";
            return INVALID_IMAGE;
        }
        if (type == 11 /* SHT_DYNSYM */ || type == 2 /* SHT_SYMTAB */) {
            const unsigned char *str = sec(rd<uint32_t>(sh + 40));
            u64 stroff = rd<u64>(str + 24);
            for (u64 s = 0; s + 24 <= size; s += 24) {
                std::string name((const char *)img + stroff + rd<uint32_t>(img + off + s));
                if (name.size() > 3 && name.compare(name.size() - 3, 3, ".kd") == 0)
                    kernels.push_back(name.substr(0, name.size() - 3));
            }
        } else if (type == 7 /* SHT_NOTE */) {
            for (u64 p = off; p + 12 <= off + size;) {
                unsigned namesz = rd<uint32_t>(img + p), descsz = rd<uint32_t>(img + p + 4),
                         ntype = rd<uint32_t>(img + p + 8);
                const unsigned char *name = img + p + 12;
                const unsigned char *desc = name + ((namesz + 3) & ~3u);
                if (ntype == 32 && namesz >= 6 && !memcmp(name, "AMDGPU", 6)) {
                    const unsigned char *q = desc;
                    Msg root;
                    if (!msg_read(q, desc + descsz, root)) {
                        why = "unreadable AMDGPU metadata note";
                        return INVALID_IMAGE;
                    }
                    const Msg *ks = root.get("amdhsa.kernels");
                    for (size_t i = 0; ks && i < ks->items.size(); ++i) {
                        const Msg &kk = ks->items[i];
                        const Msg *nm = kk.get(".name"), *as = kk.get(".args");
                        if (!nm)
                            continue;
                        std::vector<unsigned> sizes;
                        for (size_t a = 0; as && a < as->items.size(); ++a) {
                            const Msg *vk = as->items[a].get(".value_kind"), *sz = as->items[a].get(".size");
                            if (vk && vk->s.rfind("hidden_", 0) == 0)
                                continue;
                            sizes.push_back(sz ? (unsigned)sz->i : 0);
                        }
                        args[nm->s] = sizes;
                    }
                }
                p = (desc - img) + ((descsz + 3) & ~3u);
            }
        }
    }
    std::sort(kernels.begin(), kernels.end());
    kernels.erase(std::unique(kernels.begin(), kernels.end()), kernels.end());
    for (const std::string &k : kernels) {
        auto a = args.find(k);
        if (a == args.end()) {
            why = "kernel " + k + " has no metadata";
            return INVALID_IMAGE;
        }
        out.push_back(Entry{k, a->second});
    }
    return OK;
}

// ---------------------------------------------------------------------------------------------
// Kernel sources: the image's twin file under PPSOFT_SOURCE_DIRS, and its compiled trampolines.

void scan_images(const char *ext)
{
    auto &images = S().images;
    images.clear();
    std::stringstream dirs(env_str("PPSOFT_SOURCE_DIRS", ""));
    std::string dir;
    while (std::getline(dirs, dir, ':')) {
        std::error_code ec;
        if (dir.empty() || !fs::is_directory(dir, ec))
            continue;
        for (auto it = fs::recursive_directory_iterator(dir, fs::directory_options::skip_permission_denied, ec);
             it != fs::recursive_directory_iterator(); it.increment(ec)) {
            if (ec)
                break;
            if (it->is_regular_file(ec) && it->path().extension() == ext)
                images.emplace_back(it->path().string(), (size_t)it->file_size(ec));
        }
    }
}

bool same_file(const std::string &path, const unsigned char *img, size_t len)
{
    std::ifstream f(path, std::ios::binary);
    std::vector<char> buf(len);
    return f.read(buf.data(), (std::streamsize)len) && !memcmp(buf.data(), img, len);
}

std::string source_for(const unsigned char *img, size_t len, const char *ext, const char *src_ext)
{
    for (int pass = 0; pass < 2; ++pass) {
        if (pass == 1 || S().images.empty())
            scan_images(ext);
        for (auto &[path, size] : S().images) {
            if (size != len || !same_file(path, img, len))
                continue;
            fs::path p(path);
            for (int strip = 0; strip < 2; ++strip) {
                p.replace_extension(strip ? "" : src_ext);
                if (strip)
                    p.replace_extension(src_ext);
                if (fs::exists(p))
                    return p.string();
                p = fs::path(path).replace_extension("");
            }
        }
    }
    return "";
}

void *compile(const std::string &source, const std::vector<Entry> &entries, std::string &why)
{
    std::string text = "#include \"" PPSOFT_SHIM "\"\n#include \"" PPSOFT_ABI "\"\n#include \"" + source + "\"\n";
    for (const Entry &e : entries)
        text += "PPSOFT_KERNEL(" + e.name + ")\n";
    std::ifstream in(source, std::ios::binary);
    std::string body((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::string flags = PPSOFT_KERNEL_FLAGS;
    u64 key = fnv(body.data(), body.size(), fnv(text.data(), text.size(), fnv(flags.data(), flags.size())));
    std::string dir = env_str("PPSOFT_CACHE_DIR", "/tmp/ppsoftgpu-cache");
    std::error_code ec;
    fs::create_directories(dir, ec);
    char name[64];
    snprintf(name, sizeof name, "/k%016llx", key);
    std::string so = dir + name + ".so";
    if (!fs::exists(so)) {
        std::string tmp = dir + name + "." + std::to_string(getpid());
        std::ofstream(tmp + ".cpp") << text;
        std::string cmd = env_str("PPSOFT_CXX", "g++") + " -std=c++17 -O1 -ffp-contract=off -shared -fPIC " +
                          flags + " -o '" + tmp + ".so' '" + tmp + ".cpp' 2>'" + tmp + ".log'";
        if (system(cmd.c_str()) != 0) {
            std::ifstream log(tmp + ".log");
            std::string l((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
            why = "compiling " + source + " failed: " + cmd + "\n" + l;
            return nullptr;
        }
        fs::rename(tmp + ".so", so, ec);
        fs::remove(tmp + ".cpp", ec);
        fs::remove(tmp + ".log", ec);
    }
    void *h = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h)
        why = std::string("dlopen ") + so + ": " + dlerror();
    return h;
}

// ---------------------------------------------------------------------------------------------
// Devices, memory, launches

int current_device(int &d)
{
#ifdef PPSOFT_CUDA
    if (tl_stack.empty() || !tl_stack.back())
        return INVALID_CONTEXT;
    d = tl_stack.back()->device;
#else
    d = tl_device;
#endif
    return OK;
}

// Allocation containing device address `a` (or null).
Alloc *find_alloc(u64 a, u64 *base = nullptr)
{
    auto &m = S().allocs;
    auto it = m.upper_bound(a);
    if (it == m.begin())
        return nullptr;
    --it;
    if (a >= it->first + it->second.size)
        return nullptr;
    if (base)
        *base = it->first;
    return &it->second;
}

// Host address of `bytes` device bytes at `a`, or null.
unsigned char *host_of(u64 a, size_t bytes, int *device = nullptr)
{
    u64 base;
    Alloc *al = find_alloc(a, &base);
    if (!al || a + bytes > base + al->size)
        return nullptr;
    if (device)
        *device = al->device;
    return al->host + (a - base);
}

void execute(Launch &l, int device)
{
    Device &dv = S().dev[device];
    if (dv.sticky)
        return;
    const char *fault = getenv("PPSOFT_FAULT_KERNEL");
    if (fault && l.f->entry->name == fault) {
        note("kernel %s faults (PPSOFT_FAULT_KERNEL)", fault);
        dv.sticky = ILLEGAL_ADDRESS;
        S().faulted = true;
        return;
    }
    std::vector<void *> ptrs(l.args.size());
    std::vector<unsigned char *> hosts(l.args.size());
    for (size_t i = 0; i < l.args.size(); ++i) {
        ptrs[i] = l.args[i].data();
        if (l.f->sig[i].pointer) {
            u64 a = rd<u64>(l.args[i].data());
            int owner = -1;
            hosts[i] = a ? host_of(a, 1, &owner) : nullptr;
            if (a && (!hosts[i] || owner != device)) {
                note("kernel %s: parameter %zu (0x%llx) is not memory of device %d; the kernel faults",
                     l.f->entry->name.c_str(), i, a, device);
                dv.sticky = ILLEGAL_ADDRESS;
                S().faulted = true;
                return;
            }
            ptrs[i] = &hosts[i];
        }
    }
    l.f->run(l.g, l.b, ptrs.data());
}

int flush(int device)
{
    Device &dv = S().dev[device];
    while (!dv.queue.empty()) {
        Launch l = std::move(dv.queue.front());
        dv.queue.pop_front();
        execute(l, device);
    }
    return dv.sticky;
}

// Common prologue of calls that need the current device: initialised, a current context,
// no sticky fault, queued work done when `sync`.
int enter(int &d, bool sync)
{
    if (!S().init)
        return NOT_INITIALIZED;
    if (int r = current_device(d))
        return r;
    if (sync)
        return flush(d);
    return S().dev[d].sticky;
}

void at_exit()
{
    State &s = S();
    std::lock_guard<std::mutex> g(s.mu);
    if (s.allocs.empty())
        return;
    size_t bytes = 0;
    for (auto &a : s.allocs)
        bytes += a.second.size;
    note("%zu device allocation(s), %zu bytes, still live at exit: a leak", s.allocs.size(), bytes);
    if (!s.faulted && env_str("PPSOFT_LEAKS", "fail") == "fail") {
        fflush(nullptr);
        _exit(86);
    }
}

int do_init()
{
    State &s = S();
    std::lock_guard<std::mutex> g(s.mu);
    if (env_long("PPSOFT_NO_DEVICE", 0))
        return NO_DEVICE;
    if (!s.init) {
        s.ndev = (int)std::clamp(env_long("PPSOFT_DEVICES", 2), 1L, 8L);
        for (int d = 0; d < s.ndev; ++d) {
            s.primary[d] = Ctx{d, true, 0};
            s.next[d] = 0x700000000000ull + ((u64)d << 40);
        }
        s.init = true;
        atexit(at_exit);
    }
    return OK;
}

int do_malloc(u64 *out, size_t bytes)
{
    State &s = S();
    std::lock_guard<std::mutex> g(s.mu);
    int d;
    if (int r = enter(d, false))
        return r;
    if (!out)
        return INVALID_VALUE;
    size_t cap = (size_t)env_long("PPSOFT_MEMORY_BYTES", 1L << 30);
    if (bytes == 0)
        return INVALID_VALUE;
    if (bytes > cap || s.dev[d].used + bytes > cap)
        return OUT_OF_MEMORY;
    unsigned char *h = static_cast<unsigned char *>(malloc(bytes));
    if (!h)
        return OUT_OF_MEMORY;
    memset(h, 0xa5, bytes); // device memory is not zeroed
    u64 a = s.next[d];
    s.next[d] += (bytes + 511) / 256 * 256; // a gap after every allocation
    s.allocs[a] = Alloc{h, bytes, d};
    s.dev[d].used += bytes;
    *out = a;
    return OK;
}

int do_free(u64 a)
{
    State &s = S();
    std::lock_guard<std::mutex> g(s.mu);
    int d;
    if (int r = enter(d, true))
        return r;
    if (!a)
        return OK;
    auto it = s.allocs.find(a);
    if (it == s.allocs.end())
        return INVALID_VALUE;
    flush(it->second.device);
    s.dev[it->second.device].used -= it->second.size;
    free(it->second.host);
    s.allocs.erase(it);
    return OK;
}

int do_mem_info(size_t *fr, size_t *total)
{
    State &s = S();
    std::lock_guard<std::mutex> g(s.mu);
    int d;
    if (int r = enter(d, false))
        return r;
    size_t cap = (size_t)env_long("PPSOFT_MEMORY_BYTES", 1L << 30);
    if (fr)
        *fr = cap - s.dev[d].used;
    if (total)
        *total = cap;
    return OK;
}

enum Dir { HtoD, DtoH, DtoD };
int do_copy(void *dst, const void *src, size_t bytes, Dir dir)
{
    State &s = S();
    std::lock_guard<std::mutex> g(s.mu);
    int d;
    if (int r = enter(d, true))
        return r;
    unsigned char *to = dir == DtoH ? static_cast<unsigned char *>(dst) : host_of((u64)dst, bytes);
    const unsigned char *from = dir == HtoD ? static_cast<const unsigned char *>(src) : host_of((u64)src, bytes);
    if (!to || !from)
        return INVALID_VALUE;
    memcpy(to, from, bytes);
    return OK;
}

int do_memset(u64 dst, int value, size_t bytes)
{
    State &s = S();
    std::lock_guard<std::mutex> g(s.mu);
    int d;
    if (int r = enter(d, true))
        return r;
    unsigned char *to = host_of(dst, bytes);
    if (!to)
        return INVALID_VALUE;
    memset(to, value, bytes);
    return OK;
}

int do_sync()
{
    State &s = S();
    std::lock_guard<std::mutex> g(s.mu);
    int d;
    return enter(d, true);
}

int do_load(void **out, const void *image, bool cuda)
{
    State &s = S();
    std::lock_guard<std::mutex> g(s.mu);
    int d;
    if (int r = enter(d, false))
        return r;
    if (!out || !image)
        return INVALID_VALUE;
    if (long inj = env_long("PPSOFT_FAIL_MODULE_LOAD", 0)) {
        note("module load refused (PPSOFT_FAIL_MODULE_LOAD=%ld)", inj);
        return (int)inj;
    }
    auto m = std::make_unique<Module>();
    m->device = d;
    const unsigned char *img = static_cast<const unsigned char *>(image);
    std::string why;
    int r;
    if (cuda) {
        if (!memcmp(img, "\x7f" "ELF", 4) || rd<uint32_t>(img) == 0xba55ed50u) {
            note("cuModuleLoadData: a cubin/fatbin image; the software device runs PTX only");
            return NO_BINARY_FOR_GPU;
        }
        size_t len = strlen(reinterpret_cast<const char *>(img)); // the driver reads PTX to NUL
        m->copy.assign(img, img + len);
        m->image = m->copy.data();
        m->len = len;
        r = parse_ptx(reinterpret_cast<const char *>(m->image), len, m->entries, why);
    } else {
        if (memcmp(img, "\x7f" "ELF", 4) != 0 || img[4] != 2 || rd<uint16_t>(img + 18) != 224) {
            note("hipModuleLoadData: not an AMDGPU code object (ELF64, e_machine 224)");
            return INVALID_IMAGE;
        }
        std::string want = env_str("PPSOFT_HIP_ARCH", "gfx90a");
        const char *arch = arch_name(rd<uint32_t>(img + 48) & 0xff);
        if (want != arch) {
            if (env_long("PPSOFT_VERBOSE", 0))
                note("hipModuleLoadData: code object for %s, device is %s", arch, want.c_str());
            return NO_BINARY_FOR_GPU;
        }
        m->image = img; // kept: read again at every lookup and launch
        m->len = elf_size(img);
        r = parse_code_object(img, m->len, m->entries, why);
    }
    if (r) {
        note("module load failed: %s", why.c_str());
        return r;
    }
    m->sum = fnv(m->image, m->len);
    std::string src = source_for(m->image, m->len, cuda ? ".ptx" : ".co", cuda ? ".cu" : ".hip");
    if (src.empty()) {
        note("no image file with these %zu bytes (and its generated source beside it) under "
             "PPSOFT_SOURCE_DIRS=%s: the software device cannot run this module",
             m->len, env_str("PPSOFT_SOURCE_DIRS", "").c_str());
        return INVALID_IMAGE;
    }
    m->origin = src;
    m->so = compile(src, m->entries, why);
    if (!m->so) {
        note("%s", why.c_str());
        return INVALID_IMAGE;
    }
    *out = m.get();
    s.modules.push_back(std::move(m));
    return OK;
}

int do_unload(void *mod)
{
    State &s = S();
    std::lock_guard<std::mutex> g(s.mu);
    for (auto it = s.modules.begin(); it != s.modules.end(); ++it)
        if (it->get() == mod) {
            for (int d = 0; d < s.ndev; ++d)
                flush(d);
            s.functions.erase(std::remove_if(s.functions.begin(), s.functions.end(),
                                             [&](auto &f) { return f->module == mod; }),
                              s.functions.end());
            s.modules.erase(it);
            return OK;
        }
    return INVALID_HANDLE;
}

int do_get_function(void **out, void *mod, const char *name)
{
    State &s = S();
    std::lock_guard<std::mutex> g(s.mu);
    int d;
    if (int r = enter(d, false))
        return r;
    Module *m = static_cast<Module *>(mod);
    if (!out || !name || !is_module_live(m))
        return INVALID_HANDLE;
    if (int r = check_image(m, "module function lookup"))
        return r;
    for (const Entry &e : m->entries) {
        if (e.name != name)
            continue;
        auto f = std::make_unique<Function>();
        f->module = m;
        f->entry = &e;
        auto describe = reinterpret_cast<DescribeFn>(dlsym(m->so, ("ppsoft_describe_" + e.name).c_str()));
        f->run = reinterpret_cast<RunFn>(dlsym(m->so, ("ppsoft_run_" + e.name).c_str()));
        if (!describe || !f->run)
            return NOT_FOUND;
        // The first call counts the parameters (a kernel with many fields has over a
        // hundred: five window integers per field), the second lists them.
        f->sig.resize((size_t)describe(nullptr, 0));
        describe(f->sig.data(), (int)f->sig.size());
        f->max_threads = (int)env_long("PPSOFT_MAX_THREADS_PER_BLOCK", 1024);
        if (f->sig.size() != e.sizes.size()) {
            note("%s: the image declares %zu parameters, the source %zu", name, e.sizes.size(), f->sig.size());
            return INVALID_IMAGE;
        }
        for (size_t i = 0; i < e.sizes.size(); ++i)
            if (f->sig[i].size != e.sizes[i]) {
                note("%s: parameter %zu is %u bytes in the image, %u in the source", name, i, e.sizes[i],
                     f->sig[i].size);
                return INVALID_IMAGE;
            }
        *out = f.get();
        s.functions.push_back(std::move(f));
        return OK;
    }
    return NOT_FOUND;
}

Function *live_function(void *f)
{
    for (auto &p : S().functions)
        if (p.get() == f)
            return p.get();
    return nullptr;
}

int do_func_attr(int *value, int attr, void *func)
{
    State &s = S();
    std::lock_guard<std::mutex> g(s.mu);
    Function *f = live_function(func);
    if (!value || !f)
        return INVALID_HANDLE;
    switch (attr) {
    case 0: // MAX_THREADS_PER_BLOCK
        *value = f->max_threads;
        return OK;
    case 4: // NUM_REGS (CUDA) / NUM_REGS (HIP)
        *value = 32;
        return OK;
    default:
        *value = 0;
        return OK;
    }
}

int do_launch(void *func, const unsigned g[3], const unsigned b[3], unsigned shared, void *stream,
              void **params, void **extra)
{
    State &s = S();
    std::lock_guard<std::mutex> lk(s.mu);
    int d;
    if (int r = enter(d, false))
        return r;
    Function *f = live_function(func);
    if (!f)
        return INVALID_HANDLE;
    if (f->module->device != d) {
        note("launch of %s: its module was loaded on device %d, the current device is %d",
             f->entry->name.c_str(), f->module->device, d);
        return INVALID_HANDLE;
    }
    if (int r = check_image(f->module, "kernel launch"))
        return r;
    if (shared || stream || extra)
        return INVALID_VALUE;
    if (!g[0] || !g[1] || !g[2] || !b[0] || !b[1] || !b[2] || g[0] > 0x7fffffffu || g[1] > 65535 ||
        g[2] > 65535 || b[0] > 1024 || b[1] > 1024 || b[2] > 64) {
        note("launch of %s: grid %u x %u x %u, block %u x %u x %u exceed the device limits (grid.y, "
             "grid.z <= 65535; block.x, block.y <= 1024, block.z <= 64)",
             f->entry->name.c_str(), g[0], g[1], g[2], b[0], b[1], b[2]);
        return INVALID_VALUE;
    }
    if ((u64)b[0] * b[1] * b[2] > (u64)f->max_threads) {
        note("launch of %s: %u threads per block, the function allows %d", f->entry->name.c_str(),
             b[0] * b[1] * b[2], f->max_threads);
        return LAUNCH_OUT_OF_RESOURCES;
    }
    if (!params && !f->entry->sizes.empty())
        return INVALID_VALUE;
    Launch l{f, {g[0], g[1], g[2]}, {b[0], b[1], b[2]}, {}};
    for (size_t i = 0; i < f->entry->sizes.size(); ++i) {
        const unsigned char *p = static_cast<const unsigned char *>(params[i]);
        if (!p)
            return INVALID_VALUE;
        l.args.emplace_back(p, p + f->entry->sizes[i]); // the driver copies the arguments now
    }
    s.dev[d].queue.push_back(std::move(l));
    if (env_long("PPSOFT_SYNC_LAUNCH", 0))
        return flush(d);
    return OK;
}

const char *code_name(int c)
{
    const Code *k = find_code(c);
#ifdef PPSOFT_CUDA
    return k ? k->cuda : nullptr;
#else
    return k ? k->hip : "hipErrorUnknown";
#endif
}

// PPSOFT_RESULT_OVERRIDE=<call>:<code> makes <call> fail with <code> (e.g. an unknown 12345)
// without doing anything; 0 when not overridden.
int override_for(const char *call)
{
    std::string o = env_str("PPSOFT_RESULT_OVERRIDE", "");
    auto colon = o.find(':');
    if (colon != std::string::npos && o.substr(0, colon) == call)
        return atoi(o.c_str() + colon + 1);
    return OK;
}

} // namespace

// -------------------------------------------------------------------------------------------
#ifdef PPSOFT_CUDA
typedef int CUresult;
typedef int CUdevice;
typedef Ctx *CUcontext;
typedef u64 CUdeviceptr;

EXPORT CUresult cuInit(unsigned) { return do_init(); }
EXPORT CUresult cuDriverGetVersion(int *v) { return v ? (*v = 12020, OK) : INVALID_VALUE; }
EXPORT CUresult cuDeviceGetCount(int *n)
{
    if (!S().init)
        return NOT_INITIALIZED;
    return n ? (*n = S().ndev, OK) : INVALID_VALUE;
}
EXPORT CUresult cuDeviceGet(CUdevice *dev, int ordinal)
{
    if (!S().init)
        return NOT_INITIALIZED;
    if (!dev || ordinal < 0 || ordinal >= S().ndev)
        return INVALID_DEVICE;
    *dev = ordinal;
    return OK;
}
EXPORT CUresult cuDeviceGetName(char *name, int len, CUdevice dev)
{
    if (!name || len < 1 || dev < 0 || dev >= S().ndev)
        return INVALID_VALUE;
    snprintf(name, (size_t)len, "ppsoftgpu CUDA device %d", dev);
    return OK;
}
EXPORT CUresult cuDeviceGetAttribute(int *v, int attr, CUdevice dev)
{
    if (!v || dev < 0 || dev >= S().ndev)
        return INVALID_VALUE;
    int cc = (int)env_long("PPSOFT_CUDA_CC", 80);
    switch (attr) {
    case 1: *v = 1024; return OK;             // MAX_THREADS_PER_BLOCK
    case 2: case 3: *v = 1024; return OK;     // MAX_BLOCK_DIM_X / Y
    case 4: *v = 64; return OK;               // MAX_BLOCK_DIM_Z
    case 5: *v = 0x7fffffff; return OK;       // MAX_GRID_DIM_X
    case 6: case 7: *v = 65535; return OK;    // MAX_GRID_DIM_Y / Z
    case 10: *v = 32; return OK;              // WARP_SIZE
    case 75: *v = cc / 10; return OK;         // COMPUTE_CAPABILITY_MAJOR
    case 76: *v = cc % 10; return OK;         // COMPUTE_CAPABILITY_MINOR
    default: *v = 0; return OK;
    }
}
EXPORT CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice)
{
    return bytes ? (*bytes = (size_t)env_long("PPSOFT_MEMORY_BYTES", 1L << 30), OK) : INVALID_VALUE;
}
EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice dev)
{
    std::lock_guard<std::mutex> g(S().mu);
    if (!S().init)
        return NOT_INITIALIZED;
    if (!ctx || dev < 0 || dev >= S().ndev)
        return INVALID_DEVICE;
    S().primary[dev].refs++;
    *ctx = &S().primary[dev];
    return OK;
}
EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
    std::lock_guard<std::mutex> g(S().mu);
    if (dev < 0 || dev >= S().ndev || S().primary[dev].refs < 1)
        return INVALID_CONTEXT;
    S().primary[dev].refs--;
    return OK;
}
EXPORT CUresult cuDevicePrimaryCtxRelease(CUdevice dev) { return cuDevicePrimaryCtxRelease_v2(dev); }

static bool valid_ctx(CUcontext c)
{
    State &s = S();
    for (int d = 0; d < s.ndev; ++d)
        if (c == &s.primary[d])
            return s.primary[d].refs > 0;
    for (auto &p : s.created)
        if (p.get() == c)
            return true;
    return false;
}
EXPORT CUresult cuCtxCreate_v2(CUcontext *ctx, unsigned, CUdevice dev)
{
    std::lock_guard<std::mutex> g(S().mu);
    if (!ctx || dev < 0 || dev >= S().ndev)
        return INVALID_DEVICE;
    S().created.push_back(std::make_unique<Ctx>(Ctx{dev, false, 1}));
    *ctx = S().created.back().get();
    tl_stack.push_back(*ctx);
    return OK;
}
EXPORT CUresult cuCtxDestroy_v2(CUcontext ctx)
{
    std::lock_guard<std::mutex> g(S().mu);
    auto &c = S().created;
    for (auto it = c.begin(); it != c.end(); ++it)
        if (it->get() == ctx) {
            tl_stack.erase(std::remove(tl_stack.begin(), tl_stack.end(), ctx), tl_stack.end());
            c.erase(it);
            return OK;
        }
    return INVALID_CONTEXT;
}
EXPORT CUresult cuCtxSetCurrent(CUcontext ctx)
{
    std::lock_guard<std::mutex> g(S().mu);
    if (ctx && !valid_ctx(ctx))
        return INVALID_CONTEXT;
    if (tl_stack.empty())
        tl_stack.push_back(ctx);
    else
        tl_stack.back() = ctx;
    if (!ctx)
        tl_stack.pop_back();
    return OK;
}
EXPORT CUresult cuCtxGetCurrent(CUcontext *ctx)
{
    if (!ctx)
        return INVALID_VALUE;
    *ctx = tl_stack.empty() ? nullptr : tl_stack.back();
    return OK;
}
EXPORT CUresult cuCtxPushCurrent_v2(CUcontext ctx)
{
    std::lock_guard<std::mutex> g(S().mu);
    if (!ctx || !valid_ctx(ctx))
        return INVALID_CONTEXT;
    tl_stack.push_back(ctx);
    return OK;
}
EXPORT CUresult cuCtxPopCurrent_v2(CUcontext *ctx)
{
    if (tl_stack.empty())
        return INVALID_CONTEXT;
    if (ctx)
        *ctx = tl_stack.back();
    tl_stack.pop_back();
    return OK;
}
EXPORT CUresult cuCtxGetDevice(CUdevice *dev)
{
    int d;
    if (int r = current_device(d))
        return r;
    return dev ? (*dev = d, OK) : INVALID_VALUE;
}
EXPORT CUresult cuCtxSynchronize()
{
    if (int o = override_for("cuCtxSynchronize"))
        return o;
    return do_sync();
}
EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t bytes)
{
    if (int o = override_for("cuMemAlloc"))
        return o;
    return do_malloc(p, bytes);
}
EXPORT CUresult cuMemFree_v2(CUdeviceptr p) { return do_free(p); }
EXPORT CUresult cuMemGetInfo_v2(size_t *fr, size_t *total) { return do_mem_info(fr, total); }
EXPORT CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n)
{
    return do_copy((void *)dst, src, n, HtoD);
}
EXPORT CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n) { return do_copy(dst, (void *)src, n, DtoH); }
EXPORT CUresult cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
    return do_copy((void *)dst, (void *)src, n, DtoD);
}
EXPORT CUresult cuMemsetD8_v2(CUdeviceptr dst, unsigned char v, size_t n) { return do_memset(dst, v, n); }
EXPORT CUresult cuModuleLoadData(void **m, const void *image) { return do_load(m, image, true); }
EXPORT CUresult cuModuleLoadDataEx(void **m, const void *image, unsigned, void *, void **)
{
    return do_load(m, image, true);
}
EXPORT CUresult cuModuleUnload(void *m) { return do_unload(m); }
EXPORT CUresult cuModuleGetFunction(void **f, void *m, const char *name) { return do_get_function(f, m, name); }
EXPORT CUresult cuFuncGetAttribute(int *v, int attr, void *f) { return do_func_attr(v, attr, f); }
EXPORT CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                               unsigned bz, unsigned shared, void *stream, void **params, void **extra)
{
    const unsigned g[3] = {gx, gy, gz}, b[3] = {bx, by, bz};
    return do_launch(f, g, b, shared, stream, params, extra);
}
EXPORT CUresult cuGetErrorName(CUresult r, const char **s)
{
    const char *n = code_name(r);
    if (!s || !n)
        return INVALID_VALUE;
    *s = n;
    return OK;
}
EXPORT CUresult cuGetErrorString(CUresult r, const char **s)
{
    const Code *k = find_code(r);
    if (!s || !k)
        return INVALID_VALUE;
    *s = k->text;
    return OK;
}
#else
// -------------------------------------------------------------------------------------------
typedef int hipError_t;
static thread_local int tl_last = OK;
static int last(int r)
{
    if (r)
        tl_last = r;
    return r;
}
EXPORT hipError_t hipInit(unsigned) { return last(do_init()); }
EXPORT hipError_t hipDriverGetVersion(int *v) { return v ? (*v = 50221153, OK) : INVALID_VALUE; }
EXPORT hipError_t hipGetDeviceCount(int *n)
{
    if (int r = do_init())
        return last(r);
    return n ? (*n = S().ndev, OK) : INVALID_VALUE;
}
EXPORT hipError_t hipSetDevice(int d)
{
    if (int r = do_init())
        return last(r);
    if (d < 0 || d >= S().ndev)
        return last(INVALID_DEVICE);
    tl_device = d;
    return OK;
}
EXPORT hipError_t hipGetDevice(int *d)
{
    if (int r = do_init())
        return last(r);
    return d ? (*d = tl_device, OK) : INVALID_VALUE;
}
EXPORT hipError_t hipDeviceGetAttribute(int *v, int, int dev)
{
    if (!v || dev < 0 || dev >= S().ndev)
        return INVALID_VALUE;
    *v = 0;
    return OK;
}
EXPORT hipError_t hipMalloc(void **p, size_t bytes)
{
    if (int o = override_for("hipMalloc"))
        return last(o);
    return last(do_malloc(reinterpret_cast<u64 *>(p), bytes));
}
EXPORT hipError_t hipFree(void *p) { return last(do_free((u64)p)); }
EXPORT hipError_t hipMemGetInfo(size_t *fr, size_t *total) { return last(do_mem_info(fr, total)); }
EXPORT hipError_t hipMemcpyHtoD(void *dst, void *src, size_t n) { return last(do_copy(dst, src, n, HtoD)); }
EXPORT hipError_t hipMemcpyDtoH(void *dst, void *src, size_t n) { return last(do_copy(dst, src, n, DtoH)); }
EXPORT hipError_t hipMemcpyDtoD(void *dst, void *src, size_t n) { return last(do_copy(dst, src, n, DtoD)); }
EXPORT hipError_t hipMemset(void *dst, int v, size_t n) { return last(do_memset((u64)dst, v, n)); }
EXPORT hipError_t hipModuleLoadData(void **m, const void *image) { return last(do_load(m, image, false)); }
EXPORT hipError_t hipModuleUnload(void *m) { return last(do_unload(m)); }
EXPORT hipError_t hipModuleGetFunction(void **f, void *m, const char *name)
{
    return last(do_get_function(f, m, name));
}
EXPORT hipError_t hipFuncGetAttribute(int *v, int attr, void *f) { return last(do_func_attr(v, attr, f)); }
EXPORT hipError_t hipModuleLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                        unsigned by, unsigned bz, unsigned shared, void *stream,
                                        void **params, void **extra)
{
    const unsigned g[3] = {gx, gy, gz}, b[3] = {bx, by, bz};
    return last(do_launch(f, g, b, shared, stream, params, extra));
}
EXPORT hipError_t hipDeviceSynchronize()
{
    if (int o = override_for("hipDeviceSynchronize"))
        return last(o);
    return last(do_sync());
}
EXPORT hipError_t hipGetLastError()
{
    int r = tl_last;
    tl_last = OK;
    return r;
}
EXPORT const char *hipGetErrorName(hipError_t r) { return code_name(r); }
EXPORT const char *hipGetErrorString(hipError_t r)
{
    const Code *k = find_code(r);
    return k ? k->text : "unknown error";
}
#endif
