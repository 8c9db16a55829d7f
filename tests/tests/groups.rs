//! Group launches on every execution space (host → space → run → host → assert), in 1D, 2D
//! and 3D: three kernels launched as one group — `blur` over a box of the grid, `side`
//! writing a window over a strip, `fix` updating the blurred field on the strip from `side`'s
//! output at its neighbours along the inner axes — compute, at every point, what a hand loop
//! computes for the three in turn, and leave every other point alone; with the boxes at
//! either side of the grid and in its middle, and with `blur` over fewer rows than the others
//! (the host's tasks are cut where each kernel's own would be); and the same group as one
//! [`GroupPlan`] launched twice, on two sets of fields, and on two ranges of planes in turn
//! ([`GroupPlan::launch_planes`]). Bad groups (each class of mistake)
//! are errors naming the member and the fix, and write nothing; so is a plan launched on
//! fields of other shapes or windows than its own.

use ppstencil::launch::{launch_group, Arg, GroupPlan, Member, Stencil};
use ppstencil::{stencil, Error, ExecutionSpace, HostField, ScalarField};
use ppstencil_tests::grid::{assert_value, at, points, random};
use ppstencil_tests::{for_each_space, Rng};
use std::ops::Range;

stencil! {
    /// 1D: the whole field's kernel.
    fn gblur1(o: out, p: in) { o[0] = p[-1] + 2.0 * p[0] * p[1]; }
    /// 1D: the strip's first kernel.
    fn gside1(s: out, p: in) { s[0] = p[2] - p[-1]; }
    /// 1D: the strip's second kernel, reading the first's output at its neighbours.
    fn gfix1(o: inout, s: in, q: in) { o[0] = o[0] + s[-1] * q[0] + s[1]; }

    /// 2D: reads along both axes.
    fn gblur2(o: out, p: in) { o[0, 0] = p[-1, 0] + 2.0 * p[0, 0] * p[1, 0] - p[0, -1]; }
    /// 2D: reads `p` rows away (no kernel of the group writes it).
    fn gside2(s: out, p: in) { s[0, 0] = p[0, 1] - p[-2, 0]; }
    /// 2D: reads `s` along the row only.
    fn gfix2(o: inout, s: in, q: in) { o[0, 0] = o[0, 0] + s[0, -1] * q[0, 0] + s[0, 1]; }
    /// 2D: reads `s` a row away: not allowed in a group that writes `s`.
    fn gbad2(o: inout, s: in) { o[0, 0] = o[0, 0] + s[1, 0]; }

    /// 3D: reads along all axes.
    fn gblur3(o: out, p: in) {
        o[0, 0, 0] = p[-1, 0, 0] + 2.0 * p[0, 0, 0] * p[0, 1, 0] - p[0, 0, -1];
    }
    /// 3D: reads `p` planes away.
    fn gside3(s: out, p: in) { s[0, 0, 0] = p[0, 0, 1] - p[-2, 0, 0]; }
    /// 3D: reads `s` along y and x only.
    fn gfix3(o: inout, s: in, q: in) {
        o[0, 0, 0] = o[0, 0, 0] + s[0, -1, 0] * q[0, 0, 0] + s[0, 0, 1];
    }
}

fn inside<const D: usize>(b: &[Range<usize>; D], idx: [usize; D]) -> bool {
    (0..D).all(|a| b[a].contains(&idx[a]))
}

/// What one kernel computes at a point, from reads of `p`, `s`, `q` (by letter) at offsets
/// and, for `fix`, the old `o`.
type Rule<'a, const D: usize> = &'a dyn Fn(&dyn Fn(char, [isize; D]) -> f64, f64) -> f64;

/// The kernels of one dimensionality and their hand-loop rules.
struct Kernels<'a, B, S, F, const D: usize> {
    blur: Rule<'a, D>,
    side: Rule<'a, D>,
    fix: Rule<'a, D>,
    _k: std::marker::PhantomData<(B, S, F)>,
}

/// Runs `blur` on `b`, `side` on `s` (its output a window over exactly `s`) and `fix` on `f`
/// as one group on a grid of `shape`, and checks `o` everywhere and `s` against the rules.
fn check<E: ExecutionSpace, B: Stencil, S: Stencil, F: Stencil, const D: usize>(
    space: &E,
    k: &Kernels<'_, B, S, F, D>,
    shape: [usize; D],
    [b, s, f]: [[Range<usize>; D]; 3],
) {
    let mut rng = Rng::new(17 + D as u64);
    let p = random(&mut rng, shape, None);
    let q = random(&mut rng, shape, None);
    let o0 = random(&mut rng, shape, None);
    let lo: [usize; D] = std::array::from_fn(|a| s[a].start);
    let len: [usize; D] = std::array::from_fn(|a| s[a].len());
    let s0 = random(&mut rng, len, Some(lo));
    let dev = |h: &HostField<f64, D>| ScalarField::<E::Memory, f64, D>::from_host(h).expect("copy");
    let (dp, dq) = (dev(&p), dev(&q));
    let members = [
        Member::<E, f64, D>::new::<B>(b.clone(), &[0], &[Arg::In(0)], &[]),
        Member::new::<S>(s.clone(), &[1], &[Arg::In(0)], &[]),
        Member::new::<F>(f.clone(), &[0], &[Arg::Out(1), Arg::In(1)], &[]),
    ];
    // Once with `launch_group`, then twice with one plan, each time on fresh fields.
    let fresh = || (dev(&o0), dev(&s0));
    let (mut o, mut sw) = fresh();
    launch_group(space, &mut [&mut o, &mut sw], &[&dp, &dq], &members).expect("group");
    let mut results = vec![(o, sw)];
    let plan =
        GroupPlan::new(&[&results[0].0, &results[0].1], &[&dp, &dq], &members).expect("plan");
    for _ in 0..2 {
        let (mut o, mut sw) = fresh();
        plan.launch(space, &mut [&mut o, &mut sw], &[&dp, &dq])
            .expect("planned group");
        results.push((o, sw));
    }
    for (run, (o, sw)) in results.iter().enumerate() {
        let (o, sw) = (o.to_host().expect("o"), sw.to_host().expect("s"));
        check_result::<E, B, S, F, D>(k, &o, &sw, [&p, &q, &o0], [&b, &s, &f], run);
    }
    // The plan on the planes from `split` on, then on those before it (the order a blocked
    // run does not use), on fresh fields: after the first launch only the boxes' parts in
    // its planes are computed, after both every point is what one whole launch computes
    // (the group's rule holds on any planes). In 1D the grid has one plane: the first
    // launch computes nothing, the second everything.
    let split = if D == 1 { 1 } else { shape[0] / 2 };
    let cut = |bx: &[Range<usize>; D], planes: Range<usize>| -> [Range<usize>; D] {
        let mut bx = bx.clone();
        let along = if D == 1 { 0..1 } else { bx[0].clone() };
        let (lo, hi) = (along.start.max(planes.start), along.end.min(planes.end));
        if lo >= hi {
            bx[0] = 0..0;
        } else if D > 1 {
            bx[0] = lo..hi;
        }
        bx
    };
    let (mut o, mut sw) = fresh();
    for (run, planes) in [(3, split..usize::MAX), (4, 0..split)] {
        plan.launch_planes(space, &mut [&mut o, &mut sw], &[&dp, &dq], planes)
            .expect("planned group on planes");
        let (oh, sh) = (o.to_host().expect("o"), sw.to_host().expect("s"));
        let upto = if run == 3 {
            split..usize::MAX
        } else {
            0..usize::MAX
        };
        let boxes = [&b, &s, &f].map(|bx| cut(bx, upto.clone()));
        check_result::<E, B, S, F, D>(k, &oh, &sh, [&p, &q, &o0], boxes.each_ref(), run);
        // `side`'s window outside the planes run so far keeps its old values.
        for idx in points(&s)
            .into_iter()
            .filter(|&idx| !inside(&boxes[1], idx))
        {
            let (got, old) = (at(&sh, idx, [0; D]), at(&s0, idx, [0; D]));
            assert_eq!(got, old, "run {run}: s at {idx:?} outside the planes");
        }
    }
}

/// Asserts what [`check`] computed (its run number `run`: 0 by `launch_group`, then by a
/// plan, then by a plan on some planes) against the hand loop.
fn check_result<E: ExecutionSpace, B, S, F, const D: usize>(
    k: &Kernels<'_, B, S, F, D>,
    o: &HostField<f64, D>,
    sw: &HostField<f64, D>,
    [p, q, o0]: [&HostField<f64, D>; 3],
    [b, s, f]: [&[Range<usize>; D]; 3],
    run: usize,
) {
    let shape = o.shape();
    let read = |idx: [usize; D]| {
        move |c: char, off: [isize; D]| match c {
            'p' => at(p, idx, off),
            'q' => at(q, idx, off),
            _ => {
                // `s` as `side` left it: its rule inside its box.
                let j: [usize; D] = std::array::from_fn(|a| (idx[a] as isize + off[a]) as usize);
                (k.side)(&|c, off| at(if c == 'p' { p } else { q }, j, off), 0.0)
            }
        }
    };
    let all: [Range<usize>; D] = std::array::from_fn(|a| 0..shape[a]);
    for idx in points(&all) {
        let mut want = at(o0, idx, [0; D]);
        if inside(b, idx) {
            want = (k.blur)(&read(idx), want);
        }
        if inside(f, idx) {
            want = (k.fix)(&read(idx), want);
        }
        let mut got = vec![("o", at(o, idx, [0; D]), want)];
        if inside(s, idx) {
            got.push(("s", at(sw, idx, [0; D]), (k.side)(&read(idx), 0.0)));
        }
        for (name, g, w) in got {
            assert_value::<E>(&format!("run {run}: {name} at {idx:?}"), g, w, 1e-12);
        }
    }
}

/// 1D, 2D and 3D groups compute what the kernels one after another compute, by hand.
fn groups_compute_the_kernels_in_turn<E: ExecutionSpace>(space: E) {
    let k1 = Kernels::<Gblur1, Gside1, Gfix1, 1> {
        blur: &|r, _| r('p', [-1]) + 2.0 * r('p', [0]) * r('p', [1]),
        side: &|r, _| r('p', [2]) - r('p', [-1]),
        fix: &|r, o| o + r('s', [-1]) * r('q', [0]) + r('s', [1]),
        _k: Default::default(),
    };
    for [b, s, f] in [[1..20, 4..12, 5..11], [3..9, 2..19, 3..18]] {
        check(&space, &k1, [21], [[b], [s], [f]]);
    }
    let k2 = Kernels::<Gblur2, Gside2, Gfix2, 2> {
        blur: &|r, _| r('p', [-1, 0]) + 2.0 * r('p', [0, 0]) * r('p', [1, 0]) - r('p', [0, -1]),
        side: &|r, _| r('p', [0, 1]) - r('p', [-2, 0]),
        fix: &|r, o| o + r('s', [0, -1]) * r('q', [0, 0]) + r('s', [0, 1]),
        _k: Default::default(),
    };
    let shape = [17, 40];
    for boxes in [
        // A strip along the right side (the PML's use), along the left, in the middle.
        [[1..16, 1..39], [2..15, 27..38], [2..15, 28..37]],
        [[1..16, 1..39], [2..15, 2..12], [2..15, 3..11]],
        [[1..16, 1..39], [6..9, 11..20], [6..9, 12..19]],
        // The blur over fewer rows than the strip, and over more columns only.
        [[5..12, 1..39], [2..15, 27..38], [2..15, 28..37]],
        [[2..3, 1..39], [2..15, 27..38], [3..14, 28..37]],
    ] {
        check(&space, &k2, shape, boxes);
    }
    let k3 = Kernels::<Gblur3, Gside3, Gfix3, 3> {
        blur: &|r, _| {
            r('p', [-1, 0, 0]) + 2.0 * r('p', [0, 0, 0]) * r('p', [0, 1, 0]) - r('p', [0, 0, -1])
        },
        side: &|r, _| r('p', [0, 0, 1]) - r('p', [-2, 0, 0]),
        fix: &|r, o| o + r('s', [0, -1, 0]) * r('q', [0, 0, 0]) + r('s', [0, 0, 1]),
        _k: Default::default(),
    };
    for boxes in [
        [
            [1..10, 1..9, 1..20],
            [2..9, 2..8, 14..19],
            [2..9, 3..7, 15..18],
        ],
        [
            [4..6, 1..9, 1..20],
            [2..9, 2..8, 2..19],
            [3..8, 3..7, 3..18],
        ],
    ] {
        check(&space, &k3, [11, 10, 21], boxes);
    }
}

/// Each class of bad group is an error naming the member (or the window, the region) and
/// how to fix it, and nothing is written.
fn bad_groups_are_errors_that_write_nothing<E: ExecutionSpace>(space: E) {
    let shape = [17, 40];
    let mut rng = Rng::new(3);
    let o0 = random(&mut rng, shape, None);
    let dev = |h: &HostField<f64, 2>| ScalarField::<E::Memory, f64, 2>::from_host(h).expect("copy");
    let p = dev(&random(&mut rng, shape, None));
    let s_win = [13, 11];
    let s0 = random(&mut rng, s_win, Some([2, 27]));
    let small = dev(&random(&mut rng, [17, 20], None));
    let small0 = random(&mut rng, [17, 20], None);
    for (what, members, needles) in bad_groups::<E>() {
        let (mut o, mut s, mut os) = (dev(&o0), dev(&s0), dev(&small0));
        let e = launch_group(
            &space,
            &mut [&mut o, &mut s, &mut os],
            &[&p, &small],
            &members,
        )
        .expect_err(what);
        assert!(
            matches!(e, Error::InvalidParameter { .. } | Error::Arity { .. }),
            "{what}: {e:?}"
        );
        let msg = e.to_string();
        for needle in needles {
            assert!(
                msg.contains(needle),
                "{what}: `{msg}` should contain `{needle}`"
            );
        }
        let (o, s, os) = (
            o.to_host().expect("o"),
            s.to_host().expect("s"),
            os.to_host().expect("os"),
        );
        assert_eq!(o.as_slice(), o0.as_slice(), "{what}: o was written");
        assert_eq!(s.as_slice(), s0.as_slice(), "{what}: s was written");
        assert_eq!(
            os.as_slice(),
            small0.as_slice(),
            "{what}: the small field was written"
        );
    }
}

/// A bad group: what is wrong, the group, what the error must say.
type BadGroup<E> = (
    &'static str,
    Vec<Member<E, f64, 2>>,
    &'static [&'static str],
);

/// One group of each class of mistake, for the fields of
/// [`bad_groups_are_errors_that_write_nothing`]: written `o`, `s` (a window over the strip)
/// and a 17 x 20 field; read `p` and another 17 x 20 field.
fn bad_groups<E: ExecutionSpace>() -> Vec<BadGroup<E>> {
    type M<E> = Member<E, f64, 2>;
    let strip = [2..15, 27..38];
    let side = || M::<E>::new::<Gside2>(strip.clone(), &[1], &[Arg::In(0)], &[]);
    vec![
        (
            "a field index out of range",
            vec![M::<E>::new::<Gblur2>(
                [1..16, 1..39],
                &[0],
                &[Arg::In(5)],
                &[],
            )],
            &[
                "group member `gblur2`",
                "In(5)",
                "3 written and 2 read-only fields",
            ],
        ),
        (
            "a field written twice by one member",
            vec![M::<E>::new::<Gfix2>(
                [2..15, 28..37],
                &[0],
                &[Arg::Out(0), Arg::In(0)],
                &[],
            )],
            &[
                "group member `gfix2`",
                "does not also read a field it writes",
            ],
        ),
        (
            "a field read rows away after a member wrote it",
            vec![
                side(),
                M::<E>::new::<Gbad2>([2..14, 28..37], &[0], &[Arg::Out(1)], &[]),
            ],
            &[
                "group member `gbad2`",
                "radius 1 along the outermost axis",
                "launch it on its own",
            ],
        ),
        (
            "a region outside the domain",
            vec![M::<E>::new::<Gblur2>(
                [0..16, 1..39],
                &[0],
                &[Arg::In(0)],
                &[],
            )],
            &["region of kernel `gblur2`", "rows 0..16", "rows 1..16"],
        ),
        (
            "a wrong number of fields",
            vec![M::<E>::new::<Gblur2>(
                [1..16, 1..39],
                &[0, 1],
                &[Arg::In(0)],
                &[],
            )],
            &["gblur2", "output fields"],
        ),
        (
            "a window too small",
            vec![M::<E>::new::<Gside2>(
                [2..15, 26..38],
                &[1],
                &[Arg::In(0)],
                &[],
            )],
            &["window `s` of kernel `gside2`", "columns 26..38"],
        ),
        (
            "members on different grids",
            vec![
                side(),
                M::<E>::new::<Gblur2>([1..16, 1..19], &[2], &[Arg::In(1)], &[]),
            ],
            &["group member `gblur2`", "same grid"],
        ),
    ]
}

/// A plan launched on fields other than those it was made for, in each way they can differ
/// (fewer or more fields, a field of another shape, a window elsewhere or of another size,
/// a window where the plan had a whole field), is an error that names the fix and writes
/// nothing; a field no member uses is not looked at.
fn plans_refuse_other_fields<E: ExecutionSpace>(space: E) {
    let shape = [17, 40];
    let mut rng = Rng::new(5);
    let dev = |h: &HostField<f64, 2>| ScalarField::<E::Memory, f64, 2>::from_host(h).expect("copy");
    let o0 = random(&mut rng, shape, None);
    let s0 = random(&mut rng, [13, 11], Some([2, 27]));
    let p = dev(&random(&mut rng, shape, None));
    let unused = dev(&random(&mut rng, [3, 3], None));
    let members = [
        Member::<E, f64, 2>::new::<Gblur2>([1..16, 1..39], &[0], &[Arg::In(0)], &[]),
        Member::new::<Gside2>([2..15, 27..38], &[1], &[Arg::In(0)], &[]),
    ];
    let (o, sw) = (dev(&o0), dev(&s0));
    let plan = GroupPlan::new(&[&o, &sw], &[&p, &unused], &members).expect("plan");
    // A field no member uses may change.
    let other_unused = dev(&random(&mut rng, [5, 2], None));
    let (mut o, mut sw) = (dev(&o0), dev(&s0));
    plan.launch(&space, &mut [&mut o, &mut sw], &[&p, &other_unused])
        .expect("an unused field is not checked");
    let big = dev(&random(&mut rng, [17, 41], None));
    // (what is wrong, the read fields, the host values of the written window `s`)
    let moved = random(&mut rng, [13, 11], Some([2, 26]));
    let wider = random(&mut rng, [13, 12], Some([2, 27]));
    let whole = random(&mut rng, shape, None);
    type Ins<'a, E> = Vec<&'a ScalarField<<E as ExecutionSpace>::Memory, f64, 2>>;
    let cases: Vec<(&str, Ins<'_, E>, &HostField<f64, 2>)> = vec![
        ("one read field fewer", vec![&p], &s0),
        ("one read field more", vec![&p, &unused, &p], &s0),
        ("a read field of another shape", vec![&big, &unused], &s0),
        ("the window moved", vec![&p, &unused], &moved),
        ("the window wider", vec![&p, &unused], &wider),
        ("a whole field for the window", vec![&p, &unused], &whole),
    ];
    for (what, ins, s_host) in cases {
        let (mut o, mut s) = (dev(&o0), dev(s_host));
        let e = plan
            .launch(&space, &mut [&mut o, &mut s], &ins)
            .expect_err(what);
        assert!(matches!(e, Error::InvalidParameter { .. }), "{what}: {e:?}");
        let msg = e.to_string();
        for needle in ["group launch", "other shapes or windows", "GroupPlan::new"] {
            assert!(
                msg.contains(needle),
                "{what}: `{msg}` should contain `{needle}`"
            );
        }
        let (o, s) = (o.to_host().expect("o"), s.to_host().expect("s"));
        assert_eq!(o.as_slice(), o0.as_slice(), "{what}: o was written");
        assert_eq!(s.as_slice(), s_host.as_slice(), "{what}: s was written");
    }
}

for_each_space!(
    groups_compute_the_kernels_in_turn,
    bad_groups_are_errors_that_write_nothing,
    plans_refuse_other_fields
);
