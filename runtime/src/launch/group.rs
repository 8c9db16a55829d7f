//! Group launches: several kernels launched as one, each on its own box, sharing fields,
//! which the host's [`Rayon`](crate::Rayon) space runs task by task in one parallel pass
//! (every task runs each kernel in turn on the same rows) rather than as one parallel pass
//! per kernel.
//!
//! A kernel on a small part of the grid (a face of the PML's layer) costs a whole launch's
//! fork and join; in a group it rides in the others' tasks (the PML's step is two groups;
//! `docs/design/0012-pml-storage-and-profiles.md`). A group launched band after band is
//! planned once ([`GroupPlan::new`]); [`GroupPlan::launch`] and [`GroupPlan::launch_planes`]
//! (some planes only) then only compare the fields' shapes and windows with the plan's.
//!
//! The rule that makes this safe, checked by [`launch_group`]: a kernel that reads a field
//! the group writes reads it only in the rows (3D: planes) it computes, that is with offset
//! 0 along the outermost axis (its stencil's radius there is 0). Then running the kernels
//! task by task gives every point what running them one after another over their whole
//! boxes gives it, bit for bit; the other execution spaces do exactly that
//! ([`Group::in_turn`]).
//!
//! ```
//! use ppstencil::launch::{launch_group, Arg, Member};
//! use ppstencil::{stencil, HostField, Rayon, ScalarField};
//! stencil! {
//!     fn smooth(o: out, p: in) { o[0, 0] = 0.25 * (p[-1, 0] + p[1, 0] + p[0, -1] + p[0, 1]); }
//!     fn twice(o: inout) { o[0, 0] = 2.0 * o[0, 0]; }
//! }
//! let p = HostField::<f64>::from_fn(6, 8, |z, x| (z * 8 + x) as f64)?;
//! let mut o: HostField<f64> = ScalarField::new(6, 8)?;
//! // `smooth` on rows 1..5, then `twice` on columns 1..3 of the rows it wrote.
//! let members = [
//!     Member::<Rayon, f64, 2>::new::<Smooth>([1..5, 1..7], &[0], &[Arg::In(0)], &[]),
//!     Member::new::<Twice>([1..5, 1..3], &[0], &[], &[]),
//! ];
//! launch_group(&Rayon::new(), &mut [&mut o], &[&p], &members)?;
//! assert_eq!(o[(2, 2)], 2.0 * 18.0);
//! assert_eq!(o[(2, 4)], 20.0);
//! # Ok::<(), ppstencil::Error>(())
//! ```

use super::{check_fields, check_windows, region_of, shared, Region, Stencil, StencilInfo, Window};
use crate::exec::rows::RowPlan;
use crate::{Error, ExecutionSpace, MemSpaceHost, MemorySpace, Real, Result, ScalarField};
use std::ops::Range;

/// Where a kernel of a group finds one of its input fields: the group's written fields
/// (`outs` of [`launch_group`]) or its read-only ones (`ins`), by index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arg {
    /// `outs[k]`: a field some kernel of the group writes (or may write).
    Out(usize),
    /// `ins[k]`: a field no kernel of the group writes.
    In(usize),
}

/// A buffer of execution space `E`'s memory.
type Buf<E, T> = <<E as ExecutionSpace>::Memory as MemorySpace>::Buffer<T>;

/// [`ExecutionSpace::launch`] of one stencil, as a function pointer.
type LaunchFn<E, T> =
    fn(&E, &Region, &[Window], &mut [&mut Buf<E, T>], &[&Buf<E, T>], &[T]) -> Result<()>;

/// [`Stencil::serial_with`] of one stencil, as a function pointer.
type HostFn<T> = fn(&Region, &[Window], &mut [&mut [T]], &[&[T]], &[T], RowPlan) -> Result<()>;

/// One kernel of a group launch: stencil `S` (chosen by [`Member::new`]) on the box
/// `region` of its domain (one range per axis, outermost first, as for
/// [`launch_in_region`](super::launch_in_region)), writing the group's fields `outs` (indices
/// into [`launch_group`]'s `outs`, in the stencil's order of outputs) and reading `ins` (in
/// its order of inputs).
pub struct Member<E: ExecutionSpace, T: Real, const D: usize> {
    info: StencilInfo,
    launch: LaunchFn<E, T>,
    host: HostFn<T>,
    region: [Range<usize>; D],
    outs: Vec<usize>,
    ins: Vec<Arg>,
    reals: Vec<T>,
}

impl<E: ExecutionSpace, T: Real, const D: usize> Member<E, T, D> {
    /// Stencil `S` on `region`, writing `outs` and reading `ins` of the group, with the real
    /// scalars `reals`; [`launch_group`] checks all of it.
    pub fn new<S: Stencil>(
        region: [Range<usize>; D],
        outs: &[usize],
        ins: &[Arg],
        reals: &[T],
    ) -> Self {
        Member {
            info: S::INFO,
            launch: E::launch::<S, T>,
            host: S::serial_with::<T>,
            region,
            outs: outs.to_vec(),
            ins: ins.to_vec(),
            reals: reals.to_vec(),
        }
    }
}

/// A checked member: its grid (the box as a [`Region`]) and every field's window (outputs,
/// then inputs); its fields and scalars as the member lists them.
struct Planned<E: ExecutionSpace, T: Real> {
    launch: LaunchFn<E, T>,
    host: HostFn<T>,
    /// The stencil's compulsory bytes per point for `T` (the IR's count): its weight in the
    /// host's task split ([`split_tasks`]).
    bytes: usize,
    grid: Region,
    wins: Vec<Window>,
    outs: Vec<usize>,
    ins: Vec<Arg>,
    reals: Vec<T>,
}

/// What a [`GroupPlan`] checked of one field: where it lies and its shape (its [`Window`]),
/// and whether it is a window. Two fields with the same layout pass every check alike.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Layout {
    window: Window,
    is_window: bool,
}

impl Layout {
    fn of<M: MemorySpace, T: Real, const D: usize>(f: &ScalarField<M, T, D>) -> Layout {
        Layout {
            window: f.window(),
            is_window: f.is_window(),
        }
    }
}

/// A checked group launch, made once and launched many times: [`launch_group`]'s checks
/// are made by [`GroupPlan::new`] against the fields' shapes and windows, and
/// [`GroupPlan::launch`] runs the members on any fields of the same shapes and windows
/// (other buffers, as a time loop's levels rotate), comparing only those. What it is for: a
/// blocked time loop launches the same few groups band after band, thousands of times per
/// second, and the checks of a group of eight kernels take a few microseconds each time,
/// during which the other threads wait (`docs/design/0012-pml-storage-and-profiles.md`).
///
/// ```
/// use ppstencil::launch::{Arg, GroupPlan, Member};
/// use ppstencil::{stencil, HostField, Serial, ScalarField};
/// stencil! {
///     fn twice(o: inout) { o[0, 0] = 2.0 * o[0, 0]; }
/// }
/// let mut a: HostField<f64> = HostField::from_fn(4, 4, |_, _| 1.0)?;
/// let mut b: HostField<f64> = HostField::from_fn(4, 4, |_, _| 3.0)?;
/// let members = [Member::<Serial, f64, 2>::new::<Twice>([0..4, 0..2], &[0], &[], &[])];
/// let plan = GroupPlan::new(&[&a], &[], &members)?;
/// plan.launch(&Serial, &mut [&mut a], &[])?;
/// plan.launch(&Serial, &mut [&mut b], &[])?;
/// assert_eq!((a[(1, 1)], a[(1, 2)], b[(1, 1)]), (2.0, 1.0, 6.0));
/// // Fields of another shape are refused, not run.
/// let mut c: HostField<f64> = ScalarField::new(4, 5)?;
/// assert!(plan.launch(&Serial, &mut [&mut c], &[]).is_err());
/// # Ok::<(), ppstencil::Error>(())
/// ```
pub struct GroupPlan<E: ExecutionSpace, T: Real, const D: usize> {
    members: Vec<Planned<E, T>>,
    /// Per field of `outs`, whether a member writes it (the others are only read, and may
    /// be read in any row).
    written: Vec<bool>,
    /// The layouts of the fields some member uses, `None` for the others (of `outs` and
    /// `ins` in turn): [`launch`](Self::launch) compares those only.
    outs: Vec<Option<Layout>>,
    ins: Vec<Option<Layout>>,
}

/// The layouts of the fields of `outs` and of `ins` that some member of `planned` uses,
/// `None` for the others.
fn layouts<E: ExecutionSpace, T: Real, const D: usize>(
    outs: &[&ScalarField<E::Memory, T, D>],
    ins: &[&ScalarField<E::Memory, T, D>],
    planned: &[Planned<E, T>],
) -> (Vec<Option<Layout>>, Vec<Option<Layout>>) {
    let (mut used_outs, mut used_ins) = (vec![false; outs.len()], vec![false; ins.len()]);
    for m in planned {
        let args = m
            .outs
            .iter()
            .map(|&k| Arg::Out(k))
            .chain(m.ins.iter().copied());
        for a in args {
            match a {
                Arg::Out(k) => used_outs[k] = true,
                Arg::In(k) => used_ins[k] = true,
            }
        }
    }
    let of = |fields: &[&ScalarField<E::Memory, T, D>], used: Vec<bool>| {
        (fields.iter().zip(used))
            .map(|(f, u)| u.then(|| Layout::of(*f)))
            .collect()
    };
    (of(outs, used_outs), of(ins, used_ins))
}

/// A checked group launch, handed to [`ExecutionSpace::launch_group`]: the kernels in order,
/// the buffers of the fields they write and of those they only read.
pub struct Group<'a, E: ExecutionSpace, T: Real> {
    members: &'a [Planned<E, T>],
    outs: Fields<&'a mut Buf<E, T>>,
    out_wins: Fields<Window>,
    /// Per field of `outs`, whether a member writes it.
    written: &'a [bool],
    ins: Fields<&'a Buf<E, T>>,
    /// The planes (indices along the outermost axis) the launch runs: every member on its
    /// box cut to them.
    planes: Range<usize>,
}

/// Runs `members` in order as one launch on `space`: each on its box, with fields taken from
/// `outs` (written by some member; [`Arg::Out`]) and `ins` (read only; [`Arg::In`]).
///
/// Each member is checked as [`launch_in_region`](super::launch_in_region) checks a launch
/// (arity, dimensions, shapes, windows, the box inside the domain), and the group as a
/// whole: indices in range, no field written twice by one member or both written and read
/// by it, all members on the same grid, and the row rule of the module's doc (a member that
/// reads a field of `outs` has radius 0 along the outermost axis). Errors name the member
/// and the fix; nothing runs unless every check passes.
///
/// The host's [`Rayon`](crate::Rayon) runs the group in one parallel pass, each task running
/// every member on the task's rows in turn; the other spaces run the members one after
/// another ([`Group::in_turn`]). Both give every point the same value, bit for bit.
pub fn launch_group<E: ExecutionSpace, T: Real, const D: usize>(
    space: &E,
    outs: &mut [&mut ScalarField<E::Memory, T, D>],
    ins: &[&ScalarField<E::Memory, T, D>],
    members: &[Member<E, T, D>],
) -> Result<()> {
    GroupPlan::new(&shared(outs), ins, members)?.launch(space, outs, ins)
}

impl<E: ExecutionSpace, T: Real, const D: usize> GroupPlan<E, T, D> {
    /// Checks `members` as [`launch_group`] does, on fields shaped and placed as `outs` (the
    /// fields some member writes) and `ins` (read only), and plans each member's launch.
    pub fn new(
        outs: &[&ScalarField<E::Memory, T, D>],
        ins: &[&ScalarField<E::Memory, T, D>],
        members: &[Member<E, T, D>],
    ) -> Result<Self> {
        let bad = |m: &Member<E, T, D>, problem: String, fix: &str| {
            Error::invalid(
                format!("group member `{}`", m.info.name),
                problem,
                fix.to_string(),
            )
        };
        // Per field of `outs`, whether a member writes it (an index out of range is reported
        // with its member below).
        let mut written = vec![false; outs.len()];
        for &k in members.iter().flat_map(|m| &m.outs) {
            if let Some(w) = written.get_mut(k) {
                *w = true;
            }
        }
        let mut planned = Vec::with_capacity(members.len());
        let mut shape = None;
        for m in members {
            let field = |a: Arg| match a {
                Arg::Out(k) => outs.get(k).copied(),
                Arg::In(k) => ins.get(k).copied(),
            };
            let args: Vec<Arg> = m
                .outs
                .iter()
                .map(|&k| Arg::Out(k))
                .chain(m.ins.clone())
                .collect();
            let mut fields = Vec::with_capacity(args.len());
            for &a in &args {
                fields.push(field(a).ok_or_else(|| {
                    bad(
                        m,
                        format!("field {a:?}"),
                        &format!(
                            "the group has {} written and {} read-only fields: index into those",
                            outs.len(),
                            ins.len()
                        ),
                    )
                })?);
            }
            let mut own: Vec<usize> = args
                .iter()
                .filter_map(|a| match a {
                    Arg::Out(k) => Some(*k),
                    Arg::In(_) => None,
                })
                .collect();
            own.sort_unstable();
            if own.windows(2).any(|w| w[0] == w[1]) {
                return Err(bad(
                    m,
                    format!("fields {args:?}"),
                    "a member writes each field once and does not also read a field it writes \
                     (its inout parameters read it)",
                ));
            }
            let rows_read = m.info.radii[0] > 0
                && m.ins
                    .iter()
                    .any(|a| matches!(a, Arg::Out(k) if written.get(*k) == Some(&true)));
            if rows_read {
                return Err(bad(
                    m,
                    format!("radius {} along the outermost axis", m.info.radii[0]),
                    "a member that reads a field the group writes must read it in its own rows \
                     only (radius 0 along the outermost axis): launch it on its own, after the group",
                ));
            }
            let (o, i) = fields.split_at(m.outs.len());
            let grid_shape = check_fields(&m.info, o, i, m.reals.len())?;
            if *shape.get_or_insert(grid_shape) != grid_shape {
                return Err(bad(
                    m,
                    format!("grid {grid_shape:?}"),
                    "every member of a group runs on the same grid (the first member's)",
                ));
            }
            let Some(grid) = region_of(&m.info, grid_shape, &m.region)? else {
                continue;
            };
            let wins = check_windows(&m.info, &grid, o, i)?;
            planned.push(Planned {
                launch: m.launch,
                host: m.host,
                bytes: m.info.bytes_per_point::<T>(),
                grid,
                wins,
                outs: m.outs.clone(),
                ins: m.ins.clone(),
                reals: m.reals.clone(),
            });
        }
        let (out_layouts, in_layouts) = layouts(outs, ins, &planned);
        Ok(GroupPlan {
            outs: out_layouts,
            ins: in_layouts,
            members: planned,
            written,
        })
    }

    /// Runs the planned members on `space` with fields `outs` and `ins`, which must have the
    /// shapes and windows of those the plan was made with (checked; their buffers may be
    /// others).
    pub fn launch(
        &self,
        space: &E,
        outs: &mut [&mut ScalarField<E::Memory, T, D>],
        ins: &[&ScalarField<E::Memory, T, D>],
    ) -> Result<()> {
        self.launch_planes(space, outs, ins, 0..usize::MAX)
    }

    /// [`launch`](Self::launch) on the planes `planes` only (indices along the outermost
    /// axis: rows in 2D): every member runs on its box cut to them, those with no plane there
    /// not at all (nor is anything launched when no member has one). What it is for: a
    /// blocked time loop runs a group band after band with one plan, whose few kB of metadata
    /// then stay in cache, rather than with a plan per band (a few hundred on the paper grid),
    /// each cold when its band comes round again (`docs/design/0012-pml-storage-and-profiles.md`).
    ///
    /// The result is that of the members run one after another on their cut boxes, as for a
    /// whole launch: [`launch_group`]'s rule (a member reads what the group writes only in
    /// the planes it computes) holds on any planes.
    ///
    /// ```
    /// use ppstencil::launch::{GroupPlan, Member};
    /// use ppstencil::{stencil, HostField, Rayon};
    /// stencil! {
    ///     fn twice(o: inout) { o[0, 0] = 2.0 * o[0, 0]; }
    /// }
    /// let mut a: HostField<f64> = HostField::from_fn(6, 4, |_, _| 1.0)?;
    /// let members = [Member::<Rayon, f64, 2>::new::<Twice>([1..5, 0..4], &[0], &[], &[])];
    /// let plan = GroupPlan::new(&[&a], &[], &members)?;
    /// plan.launch_planes(&Rayon::new(), &mut [&mut a], &[], 3..6)?;
    /// assert_eq!((a[(2, 0)], a[(3, 0)], a[(4, 3)], a[(5, 0)]), (1.0, 2.0, 2.0, 1.0));
    /// # Ok::<(), ppstencil::Error>(())
    /// ```
    pub fn launch_planes(
        &self,
        space: &E,
        outs: &mut [&mut ScalarField<E::Memory, T, D>],
        ins: &[&ScalarField<E::Memory, T, D>],
        planes: Range<usize>,
    ) -> Result<()> {
        if self.members.is_empty() {
            return Ok(());
        }
        // The fields some member uses (`None` in the plan for the others).
        let same = |f: Layout, l: &Option<Layout>| l.is_none_or(|l| f == l);
        let same = outs.len() == self.outs.len()
            && ins.len() == self.ins.len()
            && outs
                .iter()
                .zip(&self.outs)
                .all(|(f, l)| same(Layout::of(&**f), l))
            && ins
                .iter()
                .zip(&self.ins)
                .all(|(f, l)| same(Layout::of(*f), l));
        if !same {
            return Err(Error::invalid(
                "group launch",
                "fields of other shapes or windows than the plan's",
                "launch a group plan with fields shaped and placed as those it was made with, \
                 or make a new plan (GroupPlan::new)",
            ));
        }
        // No member has a plane there (the PML's second group in most bands of a blocked
        // run): nothing to launch.
        if self.members.iter().all(|m| cut(m.grid, &planes).is_none()) {
            return Ok(());
        }
        let group = Group {
            members: &self.members,
            written: &self.written,
            out_wins: outs.iter().map(|f| f.window()).collect(),
            outs: outs.iter_mut().map(|f| f.buffer_mut()).collect(),
            ins: ins.iter().map(|f| f.buffer()).collect(),
            planes,
        };
        space.launch_group(group)
    }
}

/// `grid` with its box cut to `planes` along the outermost axis, `None` where it has none of
/// them: a member's box cut to a launch's planes, and that cut to a task's.
fn cut(mut grid: Region, planes: &Range<usize>) -> Option<Region> {
    grid.lo[0] = grid.lo[0].max(planes.start);
    grid.hi[0] = grid.hi[0].min(planes.end);
    (grid.lo[0] < grid.hi[0]).then_some(grid)
}

impl<E: ExecutionSpace, T: Real> Group<'_, E, T> {
    /// Runs every member over its box (cut to the launch's planes), one after another, with
    /// [`ExecutionSpace::launch`]: what every space but the host's rayon does with a group.
    pub fn in_turn(mut self, space: &E) -> Result<()> {
        for m in self.members {
            let Some(grid) = cut(m.grid, &self.planes) else {
                continue;
            };
            let mut slots: Vec<Option<&mut Buf<E, T>>> =
                self.outs.iter_mut().map(|b| Some(&mut **b)).collect();
            let mut outs = Vec::with_capacity(m.outs.len());
            for &k in &m.outs {
                outs.push(slots[k].take().expect("launch_group checked the indices"));
            }
            let ins: Vec<&Buf<E, T>> = m
                .ins
                .iter()
                .map(|a| match *a {
                    Arg::Out(k) => slots[k].as_deref().expect("launch_group checked"),
                    Arg::In(k) => self.ins[k],
                })
                .collect();
            (m.launch)(space, &grid, &m.wins, &mut outs, &ins, &m.reals)?;
        }
        Ok(())
    }
}

/// A member of a host run cut to the launch's planes: its grid and the row plan of that box
/// (`None` for a member with no plane there).
type Cut = Option<(Region, RowPlan)>;

/// The tasks of a host run: ranges of planes (rows in 2D), together covering every member's
/// box `cuts` (cut to the launch's planes), of about equal estimated work ([`split_tasks`]),
/// as many as the member with the most tasks would have alone (`chunk(grid, fields)`: its
/// planes per task), rounded up to a multiple of `threads`. Made on the stack at each launch,
/// from the plan's members: no list to keep per band of a blocked run.
fn tasks<E: ExecutionSpace, T: Real>(
    members: &[Planned<E, T>],
    cuts: &[Cut],
    chunk: impl Fn(&Region, usize) -> usize,
    threads: usize,
) -> TaskList {
    let loads: smallvec::SmallVec<[Load; 32]> = (members.iter().zip(cuts))
        .filter_map(|(m, cut)| {
            let (grid, _) = cut.as_ref()?;
            let planes = grid.lo[0]..grid.hi[0];
            let (rows, cols) = (grid.hi[1] - grid.lo[1], grid.hi[2] - grid.lo[2]);
            Some(Load {
                tasks: planes.len().div_ceil(chunk(grid, m.wins.len()).max(1)),
                per_plane: rows * (cols * m.bytes.max(1) + ROW_SETUP_BYTES),
                planes,
            })
        })
        .collect();
    split_tasks(&loads, threads)
}

/// The fixed cost of one row of a generated host kernel (slicing each tap, the vector loop's
/// tail) in the bytes of points it would move in that time: an 18-point row of the PML's side
/// strips takes about 40 ns (`docs/design/0009-host-row-loops.md`), where the fused step moves
/// its 16 bytes per point at about 32 bytes per ns, so about a kilobyte.
const ROW_SETUP_BYTES: usize = 1024;

/// One member of a host run as [`split_tasks`] weighs it: its planes, its estimated work per
/// plane (bytes moved, [`ROW_SETUP_BYTES`] per row included) and its task count alone.
#[derive(Clone, Debug)]
struct Load {
    planes: Range<usize>,
    per_plane: usize,
    tasks: usize,
}

/// Cuts the planes from the first to the last of `loads` into tasks of about equal work (the
/// sum of the loads' `per_plane` over a task's planes), each cut at the plane boundary nearest
/// its share: `n` tasks, the most `tasks` of any load rounded up to a multiple of `threads`
/// (fewer where planes are too few), so that rayon, which hands tasks out by halves, keeps
/// every thread busy where members are unequal (a band holding a face of the PML's layer;
/// `docs/design/0011-temporal-blocking.md`). Only the tasks' boundaries move: a group's
/// results are the same bits for any split.
fn split_tasks(loads: &[Load], threads: usize) -> TaskList {
    let mut out = TaskList::new();
    let lo = loads.iter().map(|l| l.planes.start).min().unwrap_or(0);
    let hi = loads.iter().map(|l| l.planes.end).max().unwrap_or(0);
    if lo >= hi {
        return out;
    }
    let most = loads.iter().map(|l| l.tasks).max().unwrap_or(1).max(1);
    let n = most.next_multiple_of(threads.max(1)).min(hi - lo) as u128;
    // The work of each plane from `lo`: each load added where it starts and taken off where
    // it ends, then summed along the planes (one pass, not a scan of the loads per plane:
    // this runs on the launching thread at every launch).
    let mut cost: smallvec::SmallVec<[u64; 128]> = smallvec::smallvec![0; hi - lo + 1];
    for l in loads {
        let (a, b) = (l.planes.start - lo, l.planes.end - lo);
        cost[a] = cost[a].wrapping_add(l.per_plane as u64);
        cost[b] = cost[b].wrapping_sub(l.per_plane as u64);
    }
    let mut sum = 0u64;
    for c in &mut cost {
        sum = sum.wrapping_add(*c);
        *c = sum;
    }
    let total: u128 = cost[..hi - lo].iter().map(|&c| c as u128).sum();
    // Task k (1 to n - 1) ends at the plane boundary nearest to k / n of the work.
    let (mut start, mut done, mut k) = (lo, 0u128, 1u128);
    for z in lo..hi {
        let c = cost[z - lo] as u128;
        while k < n && done + c >= k * total / n {
            let target = k * total / n;
            let end = if target.saturating_sub(done) < done + c - target {
                z
            } else {
                z + 1
            };
            if end > start {
                out.push(start..end);
                start = end;
            }
            k += 1;
        }
        done += c;
    }
    if start < hi {
        out.push(start..hi);
    }
    out
}

/// The tasks of a host run, on the stack up to 32.
type TaskList = smallvec::SmallVec<[Range<usize>; 32]>;

impl<E: ExecutionSpace<Memory = MemSpaceHost>, T: Real> Group<'_, E, T> {
    /// Runs the group on the current rayon pool of `threads` threads in its [`tasks`]: each
    /// task runs every member on the task's planes of its box (cut to the launch's planes), in
    /// order, writing the task's planes of the written fields only.
    pub(crate) fn by_rows(
        self,
        chunk: impl Fn(&Region, usize) -> usize,
        threads: usize,
    ) -> Result<()> {
        use crate::HostAccessible;
        use rayon::prelude::*;
        let cuts: smallvec::SmallVec<[Cut; 32]> = (self.members.iter())
            .map(|m| {
                let grid = cut(m.grid, &self.planes)?;
                Some((grid, RowPlan::for_launch::<T>(&grid, m.wins.len())))
            })
            .collect();
        let tasks = tasks(self.members, &cuts, chunk, threads);
        // Each written field cut into the tasks' planes (an empty piece where its window has
        // none of them): `pieces[t * n + k]` is task `t`'s piece of `outs[k]`, `None` for the
        // fields no member writes, which are read whole from `whole`. One flat list, not a
        // list per task: this runs on one thread while the others wait, band after band of a
        // blocked run.
        let n = self.outs.len();
        let mut pieces: smallvec::SmallVec<[Option<&mut [T]>; 128]> = smallvec::SmallVec::new();
        pieces.resize_with(tasks.len() * n, || None);
        let mut whole: Fields<Option<&[T]>> = Fields::new();
        for (k, ((buf, w), &written)) in self
            .outs
            .into_iter()
            .zip(&self.out_wins)
            .zip(self.written)
            .enumerate()
        {
            if !written {
                whole.push(Some(MemSpaceHost::as_slice(buf)));
                continue;
            }
            whole.push(None);
            let mut rest: &mut [T] = MemSpaceHost::as_mut_slice(buf);
            let mut at = w.origin[0];
            for (t, zs) in tasks.iter().enumerate() {
                let piece = task_window(w, zs);
                let (a, planes) = (piece.origin[0], piece.shape[0]);
                let (_, after) = std::mem::take(&mut rest).split_at_mut((a - at) * w.plane());
                let (piece, after) = after.split_at_mut(planes * w.plane());
                rest = after;
                at = a + planes;
                pieces[t * n + k] = Some(piece);
            }
        }
        let ins: Fields<&[T]> = self.ins.iter().map(|b| MemSpaceHost::as_slice(b)).collect();
        let (members, whole, wins) = (self.members, &whole, &self.out_wins);
        // Borrowed, not moved, into the tasks, so that the lists are freed by the thread that
        // allocated them (freed by the workers, they contended for its malloc arena's lock).
        pieces
            .par_chunks_mut(n)
            .zip(&tasks[..])
            .try_for_each(|(mine, zs)| {
                run_task(members, &cuts, mine, wins, whole, &ins, zs.clone())
            })
    }
}

/// A list of one entry per field of a task or member, on the stack up to 16 fields: a task
/// runs every member on a few rows, and heap lists cost each of them several allocations.
type Fields<X> = smallvec::SmallVec<[X; 16]>;

/// Where a task's piece of a field lies in the grid: the field's window `w` cut to the task's
/// planes `zs` (no plane where they do not meet, placed where they would).
fn task_window(w: &Window, zs: &Range<usize>) -> Window {
    let (first, end) = (w.origin[0], w.origin[0] + w.shape[0]);
    let a = zs.start.clamp(first, end);
    let mut piece = *w;
    (piece.origin[0], piece.shape[0]) = (a, zs.end.clamp(a, end) - a);
    piece
}

/// One task of [`Group::by_rows`]: every member on planes `zs` of its box, in order, with
/// the grid and row plan of its box cut to the launch's planes (`cuts`). `mine` holds the
/// task's piece of each written field of `outs` (whose windows are `out_wins`), `whole` the
/// fields of `outs` no member writes, `ins` the read-only fields.
#[allow(clippy::too_many_arguments)]
fn run_task<E: ExecutionSpace, T: Real>(
    members: &[Planned<E, T>],
    cuts: &[Cut],
    mine: &mut [Option<&mut [T]>],
    out_wins: &[Window],
    whole: &[Option<&[T]>],
    ins: &[&[T]],
    zs: Range<usize>,
) -> Result<()> {
    for (m, member_cut) in members.iter().zip(cuts) {
        let Some((grid, plan)) = *member_cut else {
            continue;
        };
        let Some(grid) = cut(grid, &zs) else {
            continue;
        };
        // The member's written pieces are taken out of `mine` for the call and put back
        // after it (it neither reads them nor writes any field twice: checked), so that the
        // fields it reads are read from `mine` in place, without a copy of the whole list.
        let mut wins: Fields<Window> = Fields::new();
        let mut outs: Fields<&mut [T]> = Fields::new();
        for &k in &m.outs {
            outs.push(mine[k].take().expect("launch_group checked the indices"));
            wins.push(task_window(&out_wins[k], &zs));
        }
        let mut reads: Fields<&[T]> = Fields::new();
        for (j, a) in m.ins.iter().enumerate() {
            let (read, win) = match *a {
                Arg::Out(k) => match (whole[k], &mine[k]) {
                    (Some(all), _) => (all, m.wins[m.outs.len() + j]),
                    (None, Some(piece)) => (&**piece, task_window(&out_wins[k], &zs)),
                    (None, None) => unreachable!("launch_group checked the indices"),
                },
                Arg::In(k) => (ins[k], m.wins[m.outs.len() + j]),
            };
            reads.push(read);
            wins.push(win);
        }
        let done = (m.host)(&grid, &wins, &mut outs, &reads, &m.reals, plan);
        drop(reads);
        for (&k, piece) in m.outs.iter().zip(outs) {
            mine[k] = Some(piece);
        }
        done?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{split_tasks, Load};
    use std::ops::Range;

    fn load(planes: Range<usize>, per_plane: usize, tasks: usize) -> Load {
        Load {
            planes,
            per_plane,
            tasks,
        }
    }

    /// The work of each task: the sum over its planes of the loads there.
    fn work(loads: &[Load], task: &Range<usize>) -> usize {
        task.clone()
            .map(|z| {
                (loads.iter())
                    .filter(|l| l.planes.contains(&z))
                    .map(|l| l.per_plane)
                    .sum::<usize>()
            })
            .sum()
    }

    /// Tasks cover the loads' planes once, in order, none empty, and each holds its share of
    /// the work to within one plane's work; the boundaries worked out by hand.
    #[test]
    fn tasks_get_equal_work_not_equal_planes() {
        // Equal planes: halves.
        let even = [load(0..32, 100, 2)];
        assert_eq!(split_tasks(&even, 2).to_vec(), vec![0..16, 16..32]);
        // A face of 10 heavy planes (400 = 300 + 100 a plane) over 40 light ones (100): 7000
        // in all, 4 tasks (the light load's 3, rounded up to 2 threads), shares of 1750: the
        // nearest boundaries give 1600, 2000, 1700 and 1700, where equal planes (10 each)
        // would give 4000, 1000, 1000, 1000.
        let face = [load(0..10, 300, 2), load(0..40, 100, 3)];
        let tasks = split_tasks(&face, 2);
        assert_eq!(tasks.to_vec(), vec![0..4, 4..9, 9..23, 23..40]);
        let works: Vec<usize> = tasks.iter().map(|t| work(&face, t)).collect();
        assert_eq!(works, vec![1600, 2000, 1700, 1700]);
        // Two faces far apart (the bottom and top of a grid): one task each.
        let apart = [load(0..10, 100, 1), load(30..40, 100, 1)];
        assert_eq!(split_tasks(&apart, 2).to_vec(), vec![0..10, 10..40]);
        // Fewer planes than threads: one task a plane at most.
        assert_eq!(split_tasks(&[load(5..6, 100, 1)], 4).to_vec(), vec![5..6]);
        assert_eq!(split_tasks(&[load(5..8, 100, 1)], 4).len(), 3);
        assert!(split_tasks(&[], 2).is_empty());
        // Any mix: a cover of the planes, each task within one plane's work of its share.
        for threads in 1..=4 {
            let mix = [
                load(3..50, 40, 3),
                load(3..12, 900, 2),
                load(40..47, 250, 2),
            ];
            let tasks = split_tasks(&mix, threads);
            assert_eq!(tasks.len() % threads, 0, "{threads} threads: {tasks:?}");
            assert_eq!(tasks[0].start, 3);
            assert_eq!(tasks.last().unwrap().end, 50);
            assert!(tasks.windows(2).all(|w| w[0].end == w[1].start));
            assert!(tasks.iter().all(|t| !t.is_empty()));
            let total: usize = tasks.iter().map(|t| work(&mix, t)).sum();
            for t in &tasks {
                let share = total / tasks.len();
                assert!(
                    work(&mix, t).abs_diff(share) <= 940 + 1,
                    "{t:?} of {tasks:?}"
                );
            }
        }
    }
}
