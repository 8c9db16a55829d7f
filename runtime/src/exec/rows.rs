//! The row runtime of generated host kernels: the order rows are computed in ([`row_runs`],
//! with the y-blocking of 3D launches, [`y_block`]), the per-launch [`RowPlan`] (prefetch?
//! stream?), [`run_rows`], which runs a task's row loops compiled for the widest vector unit, and the
//! row and block views ([`RowMode`], `RowOutput`, `OutputBlock`) through which generated
//! loops prefetch ahead and write with non-temporal stores (fenced by `Fence`).
//!
//! Crate-private: generated code reaches these items through `ppstencil::__private`; users
//! never call them. The execution spaces themselves live in the parent module.

use super::numerics::{numerics, Arithmetic, FlushScope, Subnormals};
use super::{cache_sizes, simd, vectorized, Simd};
use crate::geometry::Region;
use crate::Real;
use std::marker::PhantomData;
use std::sync::OnceLock;

/// Bytes of one block of a generated row loop: four 64-byte cache lines.
pub const BLOCK_BYTES: usize = 256;

/// How far ahead of the block being computed the generated row loops prefetch, in bytes.
///
/// One core's bandwidth is bounded by how many cache misses it keeps in flight. A kernel
/// that reads several rows of a field (`p[z-2..=z+2]`) issues five load streams of which
/// only the leading row misses the caches; the out-of-order window then reaches too few
/// misses ahead and the hardware prefetchers do not make up for it: one thread ran `fd_pzz`
/// at half the bandwidth of `fd_pxx`. Prefetching the leading row 4 KiB ahead (and the
/// outputs, for writing) restores it (`docs/design/0009-host-row-loops.md`).
pub const PREFETCH_BYTES: usize = 4096;

/// Most rows ahead the generated row loops prefetch in a launch whose columns are a small
/// part of each row (see [`RowPlan::ahead`]).
pub const MAX_ROWS_AHEAD: usize = 8;

/// Whether the generated row loops prefetch ahead for a launch over `grid` touching `fields`
/// fields of `T`: only when those fields do not fit the last-level cache. On cache-resident
/// grids the hardware keeps up and the prefetch instructions only cost issue slots (about
/// 10 % on 1001 x 1001). A 3D launch never prefetches: its y-blocks keep the planes it
/// re-reads in L2 ([`y_block`]), and the hardware prefetchers follow its few remaining streams
/// (see `docs/design/0009-host-row-loops.md`). `PPSTENCIL_PREFETCH=on|off` overrides the
/// choice (for comparisons).
pub fn prefetch_pays<T>(grid: &Region, fields: usize) -> bool {
    static FORCED: OnceLock<Option<bool>> = OnceLock::new();
    let forced = *FORCED.get_or_init(|| forced_switch("PPSTENCIL_PREFETCH"));
    forced.unwrap_or_else(|| !is_3d(grid) && exceeds_llc::<T>(grid, fields))
}

/// Whether the generated row loops write their `out` fields with non-temporal (streaming)
/// stores for a launch over `grid` touching `fields` fields of `T`: only when those fields do
/// not fit the last-level cache (the rule of `prefetch_pays`).
///
/// A store to a line that is not in cache first reads it (write-allocate), so a kernel that
/// reads one field and writes one moves 12 bytes per `f32` point instead of 8; streaming
/// stores write whole cache lines to memory without reading them. On cache-resident grids
/// they would push the result out of the cache the next kernel reads it from, so they stay
/// off there, and a 3D launch (whose y-blocks write a few rows per plane) writes through the
/// cache too: measured faster there. `PPSTENCIL_STREAM=on|off` overrides the choice (for
/// comparisons). Streaming also needs AVX2 (see [`simd`]); elsewhere the plan's `stream` has
/// no effect.
pub fn stream_pays<T>(grid: &Region, fields: usize) -> bool {
    static FORCED: OnceLock<Option<bool>> = OnceLock::new();
    let forced = *FORCED.get_or_init(|| forced_switch("PPSTENCIL_STREAM"));
    forced.unwrap_or_else(|| !is_3d(grid) && exceeds_llc::<T>(grid, fields))
}

/// Whether `grid` has more than one row per plane (a 3D launch, blocked along y).
fn is_3d(grid: &Region) -> bool {
    grid.shape[1] > 1
}

/// `Some(true)` / `Some(false)` when the environment variable `name` is `on` / `off`.
fn forced_switch(name: &str) -> Option<bool> {
    match std::env::var(name).map(|v| v.to_ascii_lowercase()) {
        Ok(v) if v == "on" => Some(true),
        Ok(v) if v == "off" => Some(false),
        _ => None,
    }
}

/// Whether `fields` fields of `T` over the rows `grid` computes are larger than the
/// last-level cache: the rows of the launch, not the whole field, so that the bands of a
/// temporally blocked step (`solver::blocking`), which the next step reads at once, stay in
/// the cache.
fn exceeds_llc<T>(grid: &Region, fields: usize) -> bool {
    let bytes = (grid.hi[0] - grid.lo[0])
        .saturating_mul(grid.shape[1])
        .saturating_mul(grid.shape[2])
        .saturating_mul(fields)
        .saturating_mul(std::mem::size_of::<T>());
    bytes > cache_sizes().llc
}

/// Rows (numbered `z * ny + y`) per y-block of a 3D launch over `grid` by a stencil of z
/// radius `rz` touching `fields` fields of `T`: as many as keep the `2 rz + 1` planes' rows
/// the block reads, of every field, in one core's L2 cache, and at least `4 rz` (so that the
/// rows a block re-reads beyond its edges stay under half of its own). Each plane is then
/// read from memory once per step and the re-reads along z come from L2. Blocking changes
/// only the order in which points are computed, never their arithmetic.
/// `PPSTENCIL_Y_BLOCK=N` fixes it to `N` rows (for measurements).
pub fn y_block<T>(grid: &Region, rz: usize, fields: usize) -> usize {
    static FORCED: OnceLock<Option<usize>> = OnceLock::new();
    let forced = *FORCED.get_or_init(|| {
        std::env::var("PPSTENCIL_Y_BLOCK")
            .ok()
            .and_then(|v| v.parse::<usize>().ok())
            .filter(|&n| n > 0)
    });
    if let Some(n) = forced {
        return n;
    }
    let row_bytes = grid.nx().max(1) * fields.max(1) * std::mem::size_of::<T>().max(1);
    (cache_sizes().l2 / ((2 * rz + 1) * row_bytes))
        .max(4 * rz)
        .max(1)
}

/// The runs of consecutive rows (flat row numbers `z * ny + y`, each run contiguous in
/// memory) that cover planes `zs` of `grid`, in the order the host backends compute them:
/// blocks of `y_block` rows outermost, then z, then the rows of the block; adjacent runs
/// are merged, so a 1D or 2D launch (`ny = 1`) is one run of all its rows. The runs are
/// kept on the stack (up to four): a group launch's tasks call this once per kernel and
/// task, thousands of times per time step (`launch::group`).
pub fn row_runs<T>(grid: &Region, zs: std::ops::Range<usize>, rz: usize, fields: usize) -> RowRuns {
    let ny = grid.shape[1];
    // A grid of one row per plane (1D, 2D) has nothing to block along y.
    let block = if ny == 1 {
        1
    } else {
        y_block::<T>(grid, rz, fields)
    };
    let mut runs = RowRuns::new();
    for y0 in (grid.lo[1]..grid.hi[1]).step_by(block) {
        let y1 = (y0 + block).min(grid.hi[1]);
        for z in zs.clone() {
            let run = z * ny + y0..z * ny + y1;
            match runs.last_mut() {
                Some(last) if last.end == run.start => last.end = run.end,
                _ => runs.push(run),
            }
        }
    }
    runs
}

/// The runs of rows of [`row_runs`], up to four on the stack.
pub type RowRuns = smallvec::SmallVec<[std::ops::Range<usize>; 4]>;

/// How a launch's generated row loops run, chosen once per launch by the generated drivers
/// ([`RowPlan::for_launch`]) and handed to every task through [`run_rows`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RowPlan {
    /// Compute rows in blocks of `BLOCK_BYTES` and prefetch ahead (`prefetch_pays`).
    pub prefetch: bool,
    /// Write `out` fields with non-temporal stores (`stream_pays`); also computes in
    /// blocks. Has an effect only where [`simd`] is AVX2.
    pub stream: bool,
    /// How far ahead of a block the prefetches reach: `None` for `PREFETCH_BYTES` (4 KiB)
    /// further along the row; `Some(k)` for the same columns `k` rows further (each field's
    /// own rows: a window's rows are shorter than the grid's), in a launch whose columns are
    /// at most half of each row (a strip along the side of the grid: `PREFETCH_BYTES` further
    /// along its row would be columns it never reads, and the hardware prefetchers do not
    /// follow a stride of a whole row).
    pub ahead: Option<usize>,
    /// Fuse `a * b + c` into FMAs ([`Arithmetic::Fast`]); the default is exact.
    pub fused: bool,
    /// Flush subnormals to zero while the rows run ([`Subnormals::Flush`]); the default
    /// keeps them.
    pub flush: bool,
}

impl RowPlan {
    /// The plan for a launch over `grid` touching `fields` fields of `T`: prefetching and
    /// streaming when the fields are larger than the last-level cache; in a narrow launch
    /// the prefetches reach `PREFETCH_BYTES` of its columns ahead, rows ahead (at most
    /// `MAX_ROWS_AHEAD` = 8); with the launching thread's [`numerics`].
    ///
    /// ```
    /// use ppstencil::__private::{Region, RowPlan};
    /// let strip = Region { shape: [2000, 1, 5000], lo: [2, 0, 2], hi: [1998, 1, 18] };
    /// assert_eq!(RowPlan::for_launch::<f32>(&strip, 7).ahead, Some(8));
    /// let rows = Region { lo: [2, 0, 2], hi: [1998, 1, 4998], ..strip };
    /// assert_eq!(RowPlan::for_launch::<f32>(&rows, 7).ahead, None);
    /// ```
    pub fn for_launch<T>(grid: &Region, fields: usize) -> RowPlan {
        let cols = grid.cols().len().max(1);
        let ahead = (2 * cols <= grid.nx()).then(|| {
            let rows = PREFETCH_BYTES.div_ceil(cols * std::mem::size_of::<T>().max(1));
            rows.min(MAX_ROWS_AHEAD)
        });
        let numerics = numerics();
        RowPlan {
            prefetch: prefetch_pays::<T>(grid, fields),
            stream: stream_pays::<T>(grid, fields),
            ahead,
            fused: numerics.arithmetic == Arithmetic::Fast,
            flush: numerics.subnormals == Subnormals::Flush,
        }
    }
}

/// Runs `f` (a generated driver's call of its row loops, for one task) compiled for the
/// widest vector unit (see [`vectorized`]), with the [`RowMode`] of `plan`, and with
/// subnormals flushed on this thread while it runs if the plan says so.
///
/// Non-temporal stores made through the mode are fenced (`sfence`) before this returns,
/// also when `f` panics, so they are ordered before everything the thread does afterwards.
///
/// ```
/// use ppstencil::__private::{run_rows, RowPlan};
/// let mut row = vec![0.0f32; 1000];
/// let plan = RowPlan { prefetch: true, stream: true, ..RowPlan::default() };
/// run_rows(plan, |mode| {
///     let mut out = mode.output(&mut row[..], 1000);
///     for cols in out.blocks() {
///         let mut block = out.block(cols.clone());
///         for i in 0..block.len() {
///             block[i] = (cols.start + i) as f32;
///         }
///     }
/// });
/// assert!(row.iter().enumerate().all(|(i, &v)| v == i as f32));
/// ```
#[inline(always)]
pub fn run_rows<R>(plan: RowPlan, f: impl for<'s> FnOnce(RowMode<'s>) -> R) -> R {
    // `inline(always)` on the closures: each must be inlined into `vectorized`'s AVX2 copy,
    // or what it calls is compiled for the baseline vector unit (LLVM outlined them for the
    // PML's kernels, whose many fields make the body large).
    let _flush = FlushScope::enter(plan.flush);
    vectorized(
        plan.fused,
        #[inline(always)]
        |fused| {
            streaming(
                plan.stream,
                #[inline(always)]
                |stream| {
                    f(RowMode {
                        prefetch: plan.prefetch,
                        ahead: plan.ahead,
                        stream,
                        fused,
                    })
                },
            )
        },
    )
}

/// Permission to make non-temporal stores, only ever created by `streaming`: the CPU has
/// AVX, and the scope it belongs to fences before it ends. Not `Send` (a fence orders only
/// the stores of its own thread) and it cannot outlive that scope (`for<'s>` in
/// `streaming`).
#[derive(Clone, Copy, Debug)]
struct Stream<'s> {
    _scope: PhantomData<(&'s (), *const ())>,
}

/// Runs `f` with a `Stream` permission if `on` and the CPU allows, and fences afterwards.
///
/// `f` has a single call site, so that it is inlined into [`vectorized`]'s AVX2 copy.
#[inline(always)]
fn streaming<R>(on: bool, f: impl for<'s> FnOnce(Option<Stream<'s>>) -> R) -> R {
    let stream = (on && simd() >= Simd::Avx2).then_some(Stream {
        _scope: PhantomData,
    });
    let _fence = stream.map(|_| Fence);
    f(stream)
}

/// Issues `sfence` when dropped: on every way out of a `streaming` scope, unwinding
/// included.
struct Fence;

impl Drop for Fence {
    #[inline(always)]
    fn drop(&mut self) {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `sfence` is part of SSE, which every x86_64 CPU has; it only waits until
        // this thread's earlier stores are globally visible.
        //
        // Memory ordering: non-temporal stores are weakly ordered, i.e. they may become
        // visible to other cores after later ordinary stores of the same thread (Rust
        // requires the storing thread to `sfence` before the memory is accessed otherwise).
        // This fence runs before the scope returns, so before anything the thread does after
        // it: in particular before rayon's release store that marks the task done, which the
        // joining thread acquires before it (or the caller of the launch) reads the field.
        // Without the fence that thread could read stale data.
        #[allow(unused_unsafe)]
        unsafe {
            std::arch::x86_64::_mm_sfence()
        }
    }
}

/// How one task runs the generated row loops (given by [`run_rows`]): whether rows are
/// computed in blocks with prefetching, and whether `out` fields are streamed.
#[derive(Clone, Copy, Debug)]
pub struct RowMode<'s> {
    prefetch: bool,
    ahead: Option<usize>,
    stream: Option<Stream<'s>>,
    fused: bool,
}

impl<'s> RowMode<'s> {
    /// Whether the row loops run their fused arithmetic (`a.mul_add(b, c)`, one rounding)
    /// instead of the exact one: a constant of the vectorised copy they run in (see
    /// [`vectorized`]).
    #[inline(always)]
    pub fn fused(&self) -> bool {
        self.fused
    }

    /// Whether to prefetch ahead before each block ([`RowPlan::prefetch`]).
    #[inline(always)]
    pub fn prefetch(&self) -> bool {
        self.prefetch
    }

    /// Prefetches, for reading, the `BLOCK_BYTES` of `data` (a field whose rows are `nx`
    /// long) the plan's distance ([`RowPlan::ahead`]) after `data[from]`: `PREFETCH_BYTES`
    /// further along the row, or the same columns some rows further in a narrow launch.
    #[inline(always)]
    pub fn fetch<T>(&self, data: &[T], from: usize, nx: usize) {
        prefetch(data, from + ahead_of::<T>(self.ahead, nx));
    }

    /// Whether the row loops run plain: neither prefetching nor streaming, so a row is one
    /// loop over plain slices of its fields (the generated row kernel's first branch),
    /// without the blocks and output wrappers of the other modes. Those cost a row a fixed
    /// time that is most of it on a narrow strip: the PML's side-strip update (18 points)
    /// took 30–44 ns per row plain against 48–52 ns through one block (in cache;
    /// `docs/design/0009-host-row-loops.md`).
    #[inline(always)]
    pub fn plain(&self) -> bool {
        !self.prefetch && self.stream.is_none()
    }

    /// Whether `out` fields are written with non-temporal stores.
    pub fn streams(&self) -> bool {
        self.stream.is_some()
    }

    /// An `out` field's columns of one row (of a field whose rows are `nx` long), written
    /// one block at a time (streamed when the mode says so).
    #[inline(always)]
    pub fn output<'r, T: Real>(&self, row: &'r mut [T], nx: usize) -> RowOutput<'r, 's, T> {
        RowOutput {
            row,
            blocked: !self.plain(),
            ahead: ahead_of::<T>(self.ahead, nx),
            stream: self.stream,
            buffer: None,
        }
    }

    /// An `inout` field's columns of one row: like [`output`](Self::output), but never
    /// streamed, since the kernel reads the field where it writes it.
    #[inline(always)]
    pub fn inout<'r, T: Real>(&self, row: &'r mut [T], nx: usize) -> RowOutput<'r, 's, T> {
        RowOutput {
            stream: None,
            ..self.output(row, nx)
        }
    }
}

/// Largest block, in elements, that is computed in a stack buffer and then streamed:
/// `BLOCK_BYTES` of `f32`.
const BLOCK_CAPACITY: usize = BLOCK_BYTES / 4;

/// A cache-line-aligned stack buffer for one streamed block.
#[repr(C, align(64))]
struct AlignedBlock<T>([T; BLOCK_CAPACITY]);

/// One output field's columns of one row in a generated row loop (from
/// `RowMode::output` or `RowMode::inout`): it splits the row into blocks and lends
/// each block to the loop as an `OutputBlock`.
pub struct RowOutput<'r, 's, T: Real> {
    row: &'r mut [T],
    blocked: bool,
    /// The prefetch distance, in elements.
    ahead: usize,
    stream: Option<Stream<'s>>,
    buffer: Option<AlignedBlock<T>>,
}

impl<T: Real> RowOutput<'_, '_, T> {
    /// The row's columns `0..n` in blocks of `BLOCK_BYTES` with prefetching or streaming;
    /// otherwise the whole row is one block (one long loop, fastest on cache-resident data).
    /// A generated row never asks in that last mode: it takes its plain branch first
    /// ([`RowMode::plain`]) and makes no `RowOutput`; the one block keeps a `RowOutput` made
    /// by hand (`__private`) correct in every mode.
    /// Streamed, the first block ends at the row's first 64-byte boundary, so that every
    /// block but the first and last covers whole cache lines (streaming stores write whole
    /// lines; a line written partly by plain stores would be read first). Only prefetched,
    /// the blocks start at the row's first column: aligning them measured ~15 % slower for
    /// `fd_pzz` (`docs/design/0009-host-row-loops.md`).
    ///
    /// ```
    /// use ppstencil::__private::{run_rows, RowPlan};
    /// let mut row = vec![0.0f32; 100];
    /// let plain = run_rows(RowPlan::default(), |mode| mode.output(&mut row[..], 100).blocks().collect::<Vec<_>>());
    /// assert_eq!(plain, [0..100]);
    /// let plan = RowPlan { prefetch: true, ..RowPlan::default() };
    /// let blocked = run_rows(plan, |mode| {
    ///     mode.output(&mut row[..], 100).blocks().collect::<Vec<_>>()
    /// });
    /// assert!(blocked.len() >= 2 && blocked.iter().all(|b| b.len() <= 64));
    /// assert_eq!((blocked[0].start, blocked.last().unwrap().end), (0, 100));
    /// ```
    #[inline(always)]
    pub fn blocks(&self) -> Blocks {
        let n = self.row.len();
        if !self.blocked {
            return Blocks {
                next: 0,
                n,
                len: n.max(1),
                head: 0,
            };
        }
        let size = std::mem::size_of::<T>().max(1);
        let addr = self.row.as_ptr() as usize;
        let head = if self.stream.is_some() && addr.is_multiple_of(size) {
            (addr.next_multiple_of(64) - addr) / size
        } else {
            0
        };
        Blocks {
            next: 0,
            n,
            len: (BLOCK_BYTES / size).max(1),
            head,
        }
    }

    /// Prefetches for writing (see `prefetch_for_write`) the columns the plan's distance
    /// after `from` ([`RowMode::fetch`]), unless the row is streamed (streaming stores need
    /// no line in cache: fetching it is exactly the traffic they avoid).
    #[inline(always)]
    pub fn prefetch(&mut self, from: usize) {
        if self.stream.is_none() {
            prefetch_for_write(self.row, from + self.ahead);
        }
    }

    /// Columns `cols` of the row, to be written through the returned block. Streamed, the
    /// block is a stack buffer copied to the row with non-temporal stores when the block is
    /// dropped; otherwise it is the row's columns themselves.
    ///
    /// # Panics
    /// If `cols` is not within the row (never for the ranges of [`blocks`](Self::blocks)).
    #[inline(always)]
    pub fn block(&mut self, cols: std::ops::Range<usize>) -> OutputBlock<'_, '_, T> {
        let dst = &mut self.row[cols];
        match self.stream {
            Some(stream) if dst.len() <= BLOCK_CAPACITY => {
                // Zeroed once per row, on its first block (not per block, not when plain).
                #[allow(clippy::unnecessary_lazy_evaluations)]
                let buffer = self
                    .buffer
                    .get_or_insert_with(|| AlignedBlock([T::ZERO; BLOCK_CAPACITY]));
                OutputBlock {
                    target: &mut buffer.0[..dst.len()],
                    dst: Some((dst, stream)),
                }
            }
            _ => OutputBlock {
                target: dst,
                dst: None,
            },
        }
    }
}

/// One block of an output row, written by the generated loop through `Deref<Target =
/// [T]>` (`pzz[i] = ...`). Streamed blocks reach the row when the block is dropped.
pub struct OutputBlock<'b, 's, T: Real> {
    target: &'b mut [T],
    dst: Option<(&'b mut [T], Stream<'s>)>,
}

impl<T: Real> std::ops::Deref for OutputBlock<'_, '_, T> {
    type Target = [T];
    #[inline(always)]
    fn deref(&self) -> &[T] {
        self.target
    }
}

impl<T: Real> std::ops::DerefMut for OutputBlock<'_, '_, T> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut [T] {
        self.target
    }
}

impl<T: Real> Drop for OutputBlock<'_, '_, T> {
    #[inline(always)]
    fn drop(&mut self) {
        if let Some((dst, stream)) = self.dst.take() {
            stream_copy(stream, dst, self.target);
        }
    }
}

/// The blocks of one row (see `RowOutput::blocks`).
#[derive(Clone, Debug)]
pub struct Blocks {
    next: usize,
    n: usize,
    len: usize,
    head: usize,
}

impl Iterator for Blocks {
    type Item = std::ops::Range<usize>;

    #[inline(always)]
    fn next(&mut self) -> Option<Self::Item> {
        if self.next >= self.n {
            return None;
        }
        let start = self.next;
        let end = if start < self.head {
            self.head
        } else {
            start + self.len
        };
        self.next = end.min(self.n);
        Some(start..self.next)
    }
}

/// `dst.copy_from_slice(src)`, with non-temporal stores for the cache lines `dst` covers
/// whole (plain stores for the partial lines at its ends).
#[inline(always)]
fn stream_copy<T: Real>(stream: Stream<'_>, dst: &mut [T], src: &[T]) {
    let _ = stream;
    #[cfg(target_arch = "x86_64")]
    {
        let size = std::mem::size_of::<T>();
        let addr = dst.as_ptr() as usize;
        if size > 0 && 64 % size == 0 && addr.is_multiple_of(size) && dst.len() == src.len() {
            let head = ((addr.next_multiple_of(64) - addr) / size).min(dst.len());
            let lines = (dst.len() - head) * size / 64;
            let end = head + lines * 64 / size;
            // Only the row's first and last blocks have partial lines: skip the call for the
            // others.
            if head > 0 {
                dst[..head].copy_from_slice(&src[..head]);
            }
            let (to, from) = (&mut dst[head..end], &src[head..end]);
            // SAFETY: a `Stream` exists only where the CPU has AVX (`simd() == Avx2`).
            // `to` and `from` are `lines * 64` bytes long (`end - head` elements of `64 /
            // size` per line); `to` starts on a 64-byte boundary, as `_mm256_stream_si256`
            // needs; `from` has no alignment requirement (`loadu`). `T` is `f32` or `f64`
            // (`Real`), whose every byte is initialised, so reading it as integers is fine.
            unsafe { stream_lines(to.as_mut_ptr().cast(), from.as_ptr().cast(), lines) };
            if end < dst.len() {
                dst[end..].copy_from_slice(&src[end..]);
            }
            return;
        }
    }
    dst.copy_from_slice(src);
}

/// Copies `lines` 64-byte lines from `src` to `dst` with non-temporal stores.
///
/// # Safety
/// The CPU must have AVX; `dst` must be 64-byte aligned; both must be valid for `64 * lines`
/// bytes and not overlap.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
#[inline]
unsafe fn stream_lines(dst: *mut u8, src: *const u8, lines: usize) {
    use std::arch::x86_64::{__m256i, _mm256_loadu_si256, _mm256_stream_si256};
    for line in 0..lines {
        // SAFETY: within the `64 * lines` bytes the caller vouches for; `d` and `d + 32` are
        // 32-byte aligned because `dst` is 64-byte aligned.
        unsafe {
            let (d, s) = (dst.add(64 * line), src.add(64 * line));
            let lo = _mm256_loadu_si256(s.cast::<__m256i>());
            let hi = _mm256_loadu_si256(s.add(32).cast::<__m256i>());
            _mm256_stream_si256(d.cast::<__m256i>(), lo);
            _mm256_stream_si256(d.add(32).cast::<__m256i>(), hi);
        }
    }
}

/// A plan's prefetch distance in elements of `T` ([`RowPlan::ahead`]) in a field whose rows
/// are `nx` long.
#[inline(always)]
fn ahead_of<T>(ahead: Option<usize>, nx: usize) -> usize {
    match ahead {
        Some(rows) => rows * nx,
        None => PREFETCH_BYTES / std::mem::size_of::<T>().max(1),
    }
}

/// Asks the CPU to fetch into cache the `BLOCK_BYTES` that start at `data[from]`, for
/// reading. Only a hint: it never faults, also past the end of `data`, and does nothing on
/// other architectures.
#[inline(always)]
fn prefetch<T>(data: &[T], from: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let ahead = data.as_ptr().wrapping_add(from).cast::<i8>();
        for line in 0..BLOCK_BYTES / 64 {
            let at = ahead.wrapping_add(64 * line);
            // SAFETY: a prefetch only hints the cache; it never dereferences or faults, for
            // any address (`wrapping_add` keeps the pointer arithmetic defined).
            #[allow(unused_unsafe)]
            unsafe {
                _mm_prefetch::<_MM_HINT_T0>(at)
            }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (data, from);
}

/// Like [`prefetch`], for data about to be written (`prefetchw` where the CPU has it), so
/// that the stores do not wait for their cache lines.
#[inline(always)]
pub fn prefetch_for_write<T>(data: &mut [T], from: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        if !has_prefetchw() {
            return prefetch(data, from);
        }
        let ahead = data.as_ptr().wrapping_add(from).cast::<u8>();
        for line in 0..BLOCK_BYTES / 64 {
            let at = ahead.wrapping_add(64 * line);
            // SAFETY: `prefetchw` exists on this CPU (checked above); like every prefetch it
            // only hints the cache, never dereferences or faults, and touches no register or
            // flag. (`_MM_HINT_ET0` would need the unstable `prfchw` target feature.)
            unsafe {
                std::arch::asm!("prefetchw [{0}]", in(reg) at, options(nostack, preserves_flags, readonly))
            }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (data, from);
}

/// Whether the CPU has `prefetchw` (CPUID 8000_0001h ECX bit 8, "3DNowPrefetch"), read once.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn has_prefetchw() -> bool {
    use std::sync::atomic::{AtomicU8, Ordering};
    static KNOWN: AtomicU8 = AtomicU8::new(0); // 0 unknown, 1 no, 2 yes
    match KNOWN.load(Ordering::Relaxed) {
        0 => {
            // SAFETY: `cpuid` exists on every x86_64 CPU; leaf 8000_0000h gives the highest
            // extended leaf, so 8000_0001h is only read where it exists. (Safe to call since
            // Rust 1.87; the block keeps the declared MSRV 1.85 building.)
            #[allow(unused_unsafe)]
            let yes = unsafe {
                use std::arch::x86_64::__cpuid;
                __cpuid(0x8000_0000).eax >= 0x8000_0001 && __cpuid(0x8000_0001).ecx & (1 << 8) != 0
            };
            KNOWN.store(if yes { 2 } else { 1 }, Ordering::Relaxed);
            yes
        }
        known => known == 2,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::tests::interior;
    use crate::{Rayon, Serial};

    /// `stream_copy` against a plain copy: every destination alignment within a cache line
    /// (heads of 0..16 elements), lengths 0..70 (tails, whole lines, nothing), and no element
    /// outside the destination touched.
    fn stream_copy_matches_plain<T: Real>(from: impl Fn(usize) -> T) {
        let per_line = 64 / std::mem::size_of::<T>();
        let src: Vec<T> = (0..80).map(&from).collect();
        let sentinel = T::lit(-7.0);
        // 64-byte aligned storage so that `offset` is the head's true alignment.
        let mut store = vec![AlignedBlock([sentinel; BLOCK_CAPACITY]); 4];
        let streamed = streaming(true, |s| s.is_some());
        for offset in 0..per_line {
            for len in 0..70 {
                let all: &mut [T] = flat(&mut store);
                all.fill(sentinel);
                streaming(true, |s| match s {
                    Some(s) => stream_copy(s, &mut all[offset..offset + len], &src[..len]),
                    None => all[offset..offset + len].copy_from_slice(&src[..len]),
                });
                let mut expected = vec![sentinel; all.len()];
                expected[offset..offset + len].copy_from_slice(&src[..len]);
                assert!(
                    all.iter()
                        .zip(&expected)
                        .all(|(a, b)| a.to_f64().to_bits() == b.to_f64().to_bits()),
                    "{} offset {offset} len {len} (streamed: {streamed})",
                    T::NAME
                );
            }
        }
    }

    fn flat<T>(blocks: &mut [AlignedBlock<T>]) -> &mut [T] {
        let len = blocks.len() * BLOCK_CAPACITY;
        // SAFETY: `AlignedBlock<T>` is `repr(C)` over `[T; BLOCK_CAPACITY]`, 64-byte aligned,
        // whose size is a multiple of 64 bytes for `f32` and `f64` (no padding), so the blocks
        // are `len` contiguous `T`s.
        unsafe { std::slice::from_raw_parts_mut(blocks.as_mut_ptr().cast::<T>(), len) }
    }

    impl<T: Clone> Clone for AlignedBlock<T> {
        fn clone(&self) -> Self {
            AlignedBlock(self.0.clone())
        }
    }

    #[test]
    fn stream_copy_equals_a_plain_copy_f32() {
        stream_copy_matches_plain::<f32>(|i| i as f32 * 0.5 + 1.0);
    }

    #[test]
    fn stream_copy_equals_a_plain_copy_f64() {
        stream_copy_matches_plain::<f64>(|i| i as f64 * 0.25 - 3.0);
    }

    /// `row_runs` covers the asked planes' rows of the grid, each once, in one run per
    /// plane block: in 2D one run (none for no planes), in 3D per y-block, against the rows
    /// listed from the definition (row `z * ny + y` for `y` in the grid's rows).
    #[test]
    fn row_runs_cover_the_planes_rows_once() {
        let rows_of =
            |runs: &RowRuns| -> Vec<usize> { runs.iter().flat_map(|r| r.clone()).collect() };
        let flat = interior(40, 30);
        let runs = row_runs::<f32>(&flat, 5..17, 2, 4);
        assert_eq!((runs.len(), runs[0].clone()), (1, 5..17));
        assert!(row_runs::<f32>(&flat, 9..9, 2, 4).is_empty());
        let cube = Region {
            shape: [6, 50, 40],
            lo: [1, 2, 1],
            hi: [5, 47, 39],
        };
        for zs in [1..5, 2..3, 3..3] {
            let mut got = rows_of(&row_runs::<f32>(&cube, zs.clone(), 1, 3));
            got.sort_unstable();
            let want: Vec<usize> = zs.flat_map(|z| (2..47).map(move |y| z * 50 + y)).collect();
            assert_eq!(got, want);
        }
    }

    /// The row machinery the generated loops use: blocks cover the row once, in order,
    /// start on a cache line after the first, and what is written through the blocks lands
    /// in the row, streamed or not.
    #[test]
    fn row_blocks_cover_the_row_and_reach_it() {
        for plan in [
            RowPlan::default(),
            RowPlan {
                prefetch: true,
                stream: false,
                ahead: None,
                ..RowPlan::default()
            },
            RowPlan {
                prefetch: false,
                stream: true,
                ahead: None,
                ..RowPlan::default()
            },
            RowPlan {
                prefetch: true,
                stream: true,
                ahead: None,
                ..RowPlan::default()
            },
        ] {
            for (skip, n) in [(0, 0), (1, 1), (3, 63), (2, 100), (5, 1000), (0, 4096)] {
                let mut store = vec![0.0f64; skip + n + 3];
                let row = &mut store[skip..skip + n];
                let blocks = run_rows(plan, |mode| {
                    let mut out = mode.output(&mut row[..], 1000);
                    let blocks: Vec<_> = out.blocks().collect();
                    for cols in out.blocks() {
                        let mut block = out.block(cols.clone());
                        for i in 0..block.len() {
                            block[i] = (cols.start + i) as f64 + 0.5;
                        }
                    }
                    blocks
                });
                let mut next = 0;
                for (k, b) in blocks.iter().enumerate() {
                    assert_eq!(b.start, next, "{plan:?} n {n}: {blocks:?}");
                    assert!(b.end > b.start);
                    if plan.prefetch || plan.stream {
                        assert!(b.len() <= 32, "{plan:?}: {blocks:?}");
                    }
                    if plan.prefetch && !plan.stream {
                        assert_eq!(b.start % 32, 0, "{plan:?}: {blocks:?}");
                    }
                    if plan.stream && streaming(true, |s| s.is_some()) && k > 0 {
                        assert_eq!(row[b.start..].as_ptr() as usize % 64, 0, "{blocks:?}");
                    }
                    next = b.end;
                }
                assert_eq!(next, n, "{plan:?}: {blocks:?}");
                assert!(row.iter().enumerate().all(|(i, &v)| v == i as f64 + 0.5));
                assert!(store[..skip]
                    .iter()
                    .chain(&store[skip + n..])
                    .all(|&v| v == 0.0));
            }
        }
    }

    /// Every row mode of the generated loops (plain; blocks with prefetching along the row or
    /// rows ahead; streamed) computes the same bits, for kernels with one and several
    /// outputs, `inout` fields, 2D and 3D taps, and fields that are windows of the grid
    /// (the PML's side strips). The plain mode itself is what every generic test checks
    /// against hand-computed values on its small grids.
    #[test]
    fn every_row_mode_computes_the_same_bits() {
        use crate::kernels::{FdStep3d8, FdStep8, PmlUpdate3d, PmlUpdateX};
        use crate::launch::{Region, Stencil, Window};
        fn check<S: Stencil>(shape: [usize; 3], lo: [usize; 3], hi: [usize; 3], wins: &[Window]) {
            let region = Region { shape, lo, hi };
            let (no, ni) = (S::INFO.outputs.len(), S::INFO.inputs.len());
            let field = |k: usize| -> Vec<f32> {
                (0..wins[k].len())
                    .map(|i| ((i * 7919 + k * 104729) % 1013) as f32 * 0.01 - 5.0)
                    .collect()
            };
            let ins: Vec<Vec<f32>> = (no..no + ni).map(field).collect();
            let ins: Vec<&[f32]> = ins.iter().map(|v| &v[..]).collect();
            let run = |plan: RowPlan| -> Vec<Vec<f32>> {
                let mut outs: Vec<Vec<f32>> = (0..no).map(field).collect();
                let mut o: Vec<&mut [f32]> = outs.iter_mut().map(|v| &mut v[..]).collect();
                S::serial_with(&region, wins, &mut o, &ins, &[], plan).unwrap();
                outs
            };
            let plain = run(RowPlan::default());
            assert_ne!(
                plain,
                (0..no).map(field).collect::<Vec<_>>(),
                "{}",
                S::INFO.name
            );
            for plan in [
                RowPlan {
                    prefetch: true,
                    stream: false,
                    ahead: None,
                    ..RowPlan::default()
                },
                RowPlan {
                    prefetch: true,
                    stream: false,
                    ahead: Some(3),
                    ..RowPlan::default()
                },
                RowPlan {
                    prefetch: false,
                    stream: true,
                    ahead: None,
                    ..RowPlan::default()
                },
                RowPlan {
                    prefetch: true,
                    stream: true,
                    ahead: Some(1),
                    ..RowPlan::default()
                },
            ] {
                let got = run(plan);
                for (k, (g, w)) in got.iter().zip(&plain).enumerate() {
                    let bad = g
                        .iter()
                        .zip(w)
                        .position(|(a, b)| a.to_bits() != b.to_bits());
                    assert_eq!(
                        bad,
                        None,
                        "{} output {k}, {plan:?}, {shape:?}",
                        S::INFO.name
                    );
                }
            }
        }
        // 2D, whole-grid fields, an odd row length (rows start at every alignment).
        let shape = [40, 1, 203];
        let full = Window::full(shape);
        check::<FdStep8>(shape, [4, 0, 4], [36, 1, 199], &[full; 4]);
        // The PML's left strip: pnew, p and kv2 whole, zeta, psi, a and b windows of 24
        // columns (the slab of the layer and the kernel's reach).
        let strip = Window {
            origin: [0, 0, 0],
            shape: [40, 1, 24],
        };
        let wins = [full, strip, full, strip, full, strip, strip];
        check::<PmlUpdateX>(shape, [2, 0, 2], [38, 1, 20], &wins);
        // 3D.
        let shape = [14, 15, 37];
        let full = Window::full(shape);
        check::<FdStep3d8>(shape, [4, 4, 4], [10, 11, 33], &[full; 4]);
        check::<PmlUpdate3d>(shape, [2, 2, 2], [12, 13, 35], &[full; 15]);
    }

    /// A generated kernel on a grid larger than the last-level cache (so it blocks,
    /// prefetches and, with AVX2, streams) against the 4th-order formula written out by hand
    /// in the same operation order, bit for bit; odd row length, so the rows start at every
    /// alignment. Serial and rayon.
    #[test]
    fn streamed_fd_pzz_is_bit_identical_to_the_formula() {
        use crate::{kernels::fd_pzz, HostField, ScalarField};
        // Two f32 fields just above the LLC (capped, for small test runs on huge caches).
        let points = (cache_sizes().llc / 8 + (1 << 16)).min(24 << 20);
        let nx = 1001;
        let nz = points.div_ceil(nx);
        let grid = interior(nz, nx);
        let plan = RowPlan::for_launch::<f32>(&grid, 2);
        eprintln!("{nz} x {nx}: {plan:?}, simd {:?}", simd());
        let mut p: HostField<f32> = ScalarField::new(nz, nx).unwrap();
        for (k, v) in p.as_mut_slice().iter_mut().enumerate() {
            *v = ((k * 7919) % 1013) as f32 * 0.01 - 3.0;
        }
        let a = (-1.0f64 / 12.0) as f32;
        let b = (4.0f64 / 3.0) as f32;
        let at = |z: usize, x: usize| p.as_slice()[z * nx + x];
        let mut expected = vec![0.0f32; nz * nx];
        // The weights factored over the symmetric taps, as the IR's arithmetic pass writes
        // every stencil (`kernels_gen::simplify`).
        for z in 2..nz - 2 {
            for x in 2..nx - 2 {
                expected[z * nx + x] = a * (at(z - 2, x) + at(z + 2, x))
                    + b * (at(z - 1, x) + at(z + 1, x))
                    - 2.5 * at(z, x);
            }
        }
        for rayon in [false, true] {
            let mut pzz: HostField<f32> = ScalarField::new(nz, nx).unwrap();
            if rayon {
                fd_pzz(&Rayon::with_threads(2).unwrap(), &mut pzz, &p).unwrap();
            } else {
                fd_pzz(&Serial, &mut pzz, &p).unwrap();
            }
            let got = pzz.as_slice();
            let bad = (0..nz * nx).find(|&k| got[k].to_bits() != expected[k].to_bits());
            assert_eq!(
                bad,
                None,
                "rayon {rayon}: {:?}",
                bad.map(|k| (got[k], expected[k]))
            );
        }
    }
}
