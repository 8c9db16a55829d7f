//! The gradient with the forward wavefield replayed from binomial checkpoints equals the
//! full-storage gradient bit for bit (2D and 3D, f32 and f64, several budgets, every
//! execution space); the forward steps run again match Griewank's binomial formula worked
//! by hand and the plain recursion over every split; a budget below one checkpoint is
//! refused naming the bytes one needs; the gradient of many shots is the sum of the shots'
//! gradients in shot order, the same on one thread and on three.

use ppstencil::solver::{Boundary, Shot, SourceMode, Storage, WaveOperator};
use ppstencil::{ExecutionSpace, MemSpaceHost, Rayon, Real, ScalarField, WaveConfig};
use ppstencil_tests::{for_each_space, Rng};
use std::collections::HashMap;

/// A host field of `D` dimensions.
type HostN<T, const D: usize> = ScalarField<MemSpaceHost, T, D>;

/// A 2D problem of `nt` steps: 20 x 24 cells, order 4, a 4-cell sponge, three receivers.
fn config_2d(nt: usize) -> WaveConfig {
    WaveConfig {
        nz: 20,
        nx: 24,
        nt,
        dt: 0.001,
        dh: 10.0,
        src_z: 8,
        src_x: 10,
        fpeak: 25.0,
        vmin: 2000.0,
        layers: vec![],
        space_order: 4,
        absorb: 4,
        boundary: Boundary::Sponge,
        source_mode: SourceMode::Add,
        receivers: vec![(6, 16), (12, 6), (14, 18)],
        ..WaveConfig::paper()
    }
}

/// A 3D problem of `nt` steps: 10 x 11 x 12 cells, order 2, rigid border, two receivers.
fn config_3d(nt: usize) -> WaveConfig {
    WaveConfig {
        nz: 10,
        ny: 11,
        nx: 12,
        nt,
        dt: 0.0008,
        dh: 10.0,
        src_z: 5,
        src_y: 5,
        src_x: 6,
        fpeak: 25.0,
        vmin: 2000.0,
        layers: vec![],
        space_order: 2,
        absorb: 0,
        boundary: Boundary::Rigid,
        source_mode: SourceMode::Add,
        receivers_3d: vec![(3, 4, 8), (7, 6, 3)],
        ..WaveConfig::paper()
    }
}

/// The grid shape of `c` in `D` dimensions.
fn shape<const D: usize>(c: &WaveConfig) -> [usize; D] {
    let zyx = [c.nz, c.ny, c.nx];
    std::array::from_fn(|a| if D == 2 { [zyx[0], zyx[2]][a] } else { zyx[a] })
}

/// An operator of `config` on a random model (1800..2600 m/s), a random wavelet and
/// random observed traces.
fn problem<E: ExecutionSpace + Clone, T: Real, const D: usize>(
    space: &E,
    config: WaveConfig,
    seed: u64,
) -> (WaveOperator<E, T, D>, Vec<T>, Vec<T>)
where
    ppstencil::solver::Dims<D>: ppstencil::solver::WaveKernels<D>,
{
    let mut rng = Rng::new(seed);
    let s = shape::<D>(&config);
    let n: usize = s.iter().product();
    let v = HostN::<T, D>::from_vec_shape(s, rng.vec(n, 1800.0, 2600.0, T::lit)).expect("model");
    let op = WaveOperator::<E, T, D>::with_velocity(space.clone(), config, &v).expect("op");
    let wavelet = rng.vec(op.steps(), -1.0, 1.0, T::lit);
    let observed = rng.vec(op.steps() * op.receivers(), -1e-3, 1e-3, T::lit);
    (op, wavelet, observed)
}

/// The plain recursion over every split point: the least forward steps that hand out the
/// states `l - 1, ..., 0` with `s` checkpoints besides the zero state.
fn least_steps(l: usize, s: usize, memo: &mut HashMap<(usize, usize), usize>) -> usize {
    if l <= 1 {
        return 0;
    }
    if s == 0 {
        return l * (l - 1) / 2;
    }
    if let Some(&c) = memo.get(&(l, s)) {
        return c;
    }
    let c = (1..l)
        .map(|j| j + least_steps(l - j, s - 1, memo) + least_steps(j, s, memo))
        .min()
        .unwrap_or(0);
    memo.insert((l, s), c);
    c
}

/// The gradient with each checkpoint budget equals the full-storage one bit for bit, and
/// the recomputed steps are the least the recursion allows (beyond the first run's
/// `nt - 1` steps to the last state).
fn same_bits<E: ExecutionSpace + Clone, T: Real, const D: usize>(space: &E, config: WaveConfig)
where
    ppstencil::solver::Dims<D>: ppstencil::solver::WaveKernels<D>,
{
    let nt = config.nt;
    let (op, wavelet, observed) = problem::<E, T, D>(space, config, 11 + D as u64);
    let full = op.misfit_gradient(&wavelet, &observed).expect("full");
    assert!(full.gradient.as_slice().iter().any(|g| g.to_f64() != 0.0));
    assert_eq!((full.recomputed_steps, full.checkpoints), (0, None));
    let pair = 2 * op.field_bytes();
    let mut memo = HashMap::new();
    for slots in [1usize, 2, 3, 5, nt] {
        let storage = Storage::Checkpoints {
            bytes: slots as u64 * pair + pair / 2,
        };
        let g = op
            .misfit_gradient_with(&wavelet, &observed, storage)
            .expect("checkpointed");
        let what = format!("{}D {} with {slots} checkpoints", D, T::NAME);
        let used = slots.min(nt - 1);
        assert_eq!(g.checkpoints, Some(used), "{what}");
        assert_eq!(g.misfit.to_bits(), full.misfit.to_bits(), "{what}");
        assert!(g.traces == full.traces, "{what}: traces");
        for (k, (a, b)) in g
            .gradient
            .as_slice()
            .iter()
            .zip(full.gradient.as_slice())
            .enumerate()
        {
            assert_eq!(
                a.to_f64().to_bits(),
                b.to_f64().to_bits(),
                "{what}: point {k}"
            );
        }
        let want = least_steps(nt, used, &mut memo) - (nt - 1);
        assert_eq!(g.recomputed_steps, want, "{what}");
    }
    // A budget that holds every level takes the full-storage path.
    let all = Storage::Budget {
        bytes: (nt as u64 - 1) * op.field_bytes(),
    };
    let g = op
        .misfit_gradient_with(&wavelet, &observed, all)
        .expect("budget");
    assert_eq!(g.checkpoints, None);
}

/// Bit-identical gradients whatever the storage, 2D and 3D, f64 and f32.
fn checkpointed_gradient_is_bit_identical<E: ExecutionSpace + Clone>(space: E) {
    same_bits::<E, f64, 2>(&space, config_2d(24));
    same_bits::<E, f32, 2>(&space, config_2d(24));
    same_bits::<E, f64, 3>(&space, config_3d(16));
    same_bits::<E, f32, 3>(&space, config_3d(16));
}

/// Many shots: the sum in shot order of the single-shot gradients, bit for bit.
fn shots_sum_in_order<E: ExecutionSpace + Clone>(space: E) {
    let (op, wavelet, observed) = problem::<E, f64, 2>(&space, config_2d(20), 5);
    let mut rng = Rng::new(9);
    let sources = [[8usize, 10usize], [5, 17], [13, 7]];
    let obs: Vec<Vec<f64>> = (0..3)
        .map(|_| rng.vec(observed.len(), -1e-3, 1e-3, |x| x))
        .collect();
    let shots: Vec<Shot<'_, f64, 2>> = sources
        .iter()
        .zip(&obs)
        .map(|(&source, o)| Shot {
            source,
            wavelet: &wavelet,
            observed: o,
        })
        .collect();
    let budget = Storage::Checkpoints {
        bytes: 3 * 2 * op.field_bytes(),
    };
    let all = op.misfit_gradient_shots(&shots, budget).expect("shots");
    let mut sum = vec![0.0f64; all.gradient.len()];
    let mut misfit = 0.0;
    for s in &shots {
        let one = op
            .misfit_gradient_shots(std::slice::from_ref(s), Storage::Full)
            .expect("one shot");
        misfit += one.misfit;
        for (a, b) in sum.iter_mut().zip(one.gradient.as_slice()) {
            *a += b;
        }
    }
    assert_eq!(all.misfit.to_bits(), misfit.to_bits());
    assert!(all.gradient.as_slice() == sum.as_slice());
    assert_eq!(all.traces.len(), 3 * observed.len());
    // The forward runs alone give the same misfit as the gradient's first runs.
    let alone = op.misfit_shots(&shots).expect("misfit");
    assert!(alone > 0.0);
    assert_eq!(alone.to_bits(), all.misfit.to_bits());
}

for_each_space!(checkpointed_gradient_is_bit_identical, shots_sum_in_order);

#[test]
fn recomputed_steps_follow_the_binomial_formula() {
    // nt = 10: with S = s + 1 snapshots (the zero state counts), t(10, S) = r 10 - β(S+1, r-1),
    // r the least with β(S, r) = C(S + r, S) >= 10. s = 1: r = 3, t = 30 - C(5, 3) = 20;
    // s = 2: r = 2, t = 20 - C(5, 4) = 15; s = 4: r = 1 (C(6, 5) = 6 < 10, so r = 2:
    // C(7, 5) = 21), t = 20 - C(7, 6) = 13. The first run reaches state 9 by itself.
    let (op, wavelet, observed) =
        problem::<ppstencil::Serial, f64, 2>(&ppstencil::Serial, config_2d(10), 3);
    let pair = 2 * op.field_bytes();
    for (slots, t) in [(1u64, 20usize), (2, 15), (4, 13)] {
        let g = op
            .misfit_gradient_with(
                &wavelet,
                &observed,
                Storage::Checkpoints {
                    bytes: slots * pair,
                },
            )
            .expect("gradient");
        assert_eq!(g.recomputed_steps, t - 9, "{slots} checkpoints");
    }
}

#[test]
fn a_budget_below_one_checkpoint_is_refused() {
    let (op, wavelet, observed) =
        problem::<ppstencil::Serial, f32, 2>(&ppstencil::Serial, config_2d(10), 4);
    let need = 2 * 20 * 24 * 4;
    assert_eq!(op.field_bytes() * 2, need);
    for storage in [
        Storage::Checkpoints { bytes: need - 1 },
        Storage::Budget { bytes: need - 1 },
    ] {
        let e = op
            .misfit_gradient_with(&wavelet, &observed, storage)
            .expect_err("too small")
            .to_string();
        assert!(
            e.contains("memory budget") && e.contains(&format!("needs {need} bytes")),
            "{e}"
        );
    }
}

#[test]
fn many_shots_are_independent_of_threads() {
    let run = |threads: usize| {
        let space = Rayon::with_threads(threads).expect("pool");
        let (op, wavelet, observed) = problem::<Rayon, f32, 2>(&space, config_2d(20), 8);
        let shots: Vec<Shot<'_, f32, 2>> = [[8usize, 10usize], [12, 15]]
            .iter()
            .map(|&source| Shot {
                source,
                wavelet: &wavelet,
                observed: &observed,
            })
            .collect();
        let g = op
            .misfit_gradient_shots(&shots, Storage::Full)
            .expect("shots");
        (g.misfit, g.gradient.into_vec())
    };
    let (one, three) = (run(1), run(3));
    assert_eq!(one.0.to_bits(), three.0.to_bits());
    assert!(one
        .1
        .iter()
        .zip(&three.1)
        .all(|(a, b)| a.to_bits() == b.to_bits()));
}

#[test]
fn shots_off_the_grid_and_short_data_are_refused() {
    let (op, wavelet, observed) =
        problem::<ppstencil::Serial, f64, 2>(&ppstencil::Serial, config_2d(10), 6);
    let off = Shot {
        source: [3, 24],
        wavelet: &wavelet,
        observed: &observed,
    };
    let e = op
        .misfit_gradient_shots(&[off], Storage::Full)
        .expect_err("off grid")
        .to_string();
    assert!(
        e.contains("shot 0's source") && e.contains("[3, 24]"),
        "{e}"
    );
    let short = Shot {
        source: [3, 4],
        wavelet: &wavelet,
        observed: &observed[1..],
    };
    let e = op
        .misfit_gradient_shots(&[short], Storage::Full)
        .expect_err("short")
        .to_string();
    assert!(
        e.contains("observed traces") && e.contains("29 values"),
        "{e}"
    );
}
