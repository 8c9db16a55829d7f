//! The absorbing layers (sponge and PML), measured: energy reflected back into the interior, against the rigid
//! border, with a reference run on a grid large enough that no reflection arrives in time.

use ppstencil::solver::{Boundary, Layer, SourceMode};
use ppstencil::{
    ExecutionSpace, HostField, Rayon, Real, Serial, StepKernels, WaveConfig, WaveSimulator,
};
use ppstencil_tests::{for_each_space, is_host};

const C: f64 = 2000.0;
const DH: f64 = 10.0;
const INTERIOR: usize = 60; // cells, square, source at its centre
/// Peak wavelength `C / FPEAK` = 100 m = 10 cells.
const FPEAK: f64 = 20.0;
/// Steps of `dt = 0.5 dh / C`: the wave travels 150 cells, enough for the rigid border's
/// reflections (walls 60 cells from the source with a 30-cell pad) to enter and cross the
/// interior.
const NT: usize = 300;

/// Runs a homogeneous model of `INTERIOR + 2 * pad` cells a side with the source at the
/// centre, and returns the snapshots of the interior square (row-major) every `every` steps.
fn interior_frames(
    pad: usize,
    absorb: usize,
    order: usize,
    nt: usize,
    every: usize,
) -> Vec<Vec<f64>> {
    let n = INTERIOR + 2 * pad;
    let centre = n / 2;
    let config = WaveConfig {
        nz: n,
        nx: n,
        nt,
        dt: 0.5 * DH / C,
        dh: DH,
        src_z: centre,
        src_x: centre,
        fpeak: FPEAK,
        vmin: C,
        layers: vec![],
        space_order: order,
        absorb,
        boundary: Boundary::Sponge,
        source_mode: SourceMode::Add,
        snapshot_every: Some(every),
        ..WaveConfig::paper()
    };
    let mut sim = WaveSimulator::<Rayon, f64>::with_config(Rayon::new(), config);
    let mut frames = Vec::new();
    sim.run_with(
        |_, _| {},
        |_, p: &HostField<f64>| {
            let mut f = Vec::with_capacity(INTERIOR * INTERIOR);
            for iz in pad..pad + INTERIOR {
                f.extend_from_slice(&p.as_slice()[iz * n + pad..iz * n + pad + INTERIOR]);
            }
            frames.push(f);
            Ok(())
        },
    )
    .expect("runs");
    frames
}

fn energy(a: &[Vec<f64>], b: &[Vec<f64>], from: usize) -> f64 {
    a.iter()
        .zip(b)
        .skip(from)
        .map(|(x, y)| x.iter().zip(y).map(|(u, v)| (u - v).powi(2)).sum::<f64>())
        .sum()
}

/// Energy reflected into the interior, in dB relative to the rigid border, for a layer of
/// `absorb` cells at space order `order`.
fn reflection_db(absorb: usize, order: usize) -> f64 {
    let every = 10;
    // The reference's walls are 130 cells from the source: their reflections need 230 cells
    // of travel to enter the interior, more than the 150 (+ the wavelet's 30) of the window.
    let reference = interior_frames(100, 0, order, NT, every);
    let rigid = interior_frames(absorb, 0, order, NT, every);
    let damped = interior_frames(absorb, absorb, order, NT, every);
    let e_rigid = energy(&rigid, &reference, 0);
    let e_damped = energy(&damped, &reference, 0);
    let direct: f64 = reference
        .iter()
        .map(|f| f.iter().map(|v| v * v).sum::<f64>())
        .sum();
    // The rigid border reflects a sizeable part of the direct wave's energy.
    assert!(
        e_rigid > 0.05 * direct,
        "rigid {e_rigid:.3e} direct {direct:.3e}"
    );
    let db = 10.0 * (e_damped / e_rigid).log10();
    eprintln!(
        "absorb {absorb} cells (order {order}): reflected energy {e_damped:.3e} vs rigid {e_rigid:.3e}: {db:.1} dB"
    );
    db
}

#[test]
fn absorbing_layer_reflects_at_least_25_db_less_than_the_rigid_border() {
    // A layer of 3 peak wavelengths: measured -30.6 dB at order 4.
    let db = reflection_db(30, 4);
    assert!(db <= -25.0, "{db:.1} dB");
}

#[test]
fn absorbing_layer_works_at_high_order_too() {
    // The same layer with the order-8 stencil (radius 4 of the layer is the zero border).
    let db = reflection_db(30, 8);
    assert!(db <= -25.0, "{db:.1} dB");
}

// ---------------------------------------------------------------------------------------
// The PML against the sponge, measured at receivers: v = 2000 m/s, dh = 5 m,
// fpeak = 15 Hz (peak wavelength 133 m = 26.7 cells), additive source, receivers 50 cells
// from it, at normal and at grazing incidence.

/// Side of the square interior (cells); the layer (or the reference's pad) lies around it.
const PML_INTERIOR: usize = 120;
/// Steps of `dt = 0.5 dh / v` = 1.25 ms: the reflection from a 40-cell layer's outer wall
/// (path 2 · 40 + 70 cells = 300 steps, plus the wavelet's 160) arrives inside the window.
const PML_NT: usize = 500;
/// The reference's pad: its walls are far enough (path > 2 · 130 cells = 520 steps) that no
/// reflection reaches a receiver in the window.
const REFERENCE_PAD: usize = 130;

/// Source and receivers, in interior coordinates: normal incidence (the receiver between the
/// source and the left layer, 10 cells from it) or grazing (source and receivers 5 cells from
/// the left layer, the receivers 50 cells from the source along it).
fn geometry(grazing: bool) -> ((usize, usize), Vec<(usize, usize)>) {
    if grazing {
        ((60, 5), vec![(10, 5), (110, 5)])
    } else {
        ((60, 60), vec![(60, 10)])
    }
}

/// The receivers' traces (concatenated) of a homogeneous run with `pad` cells around the
/// interior, `absorb` of them a layer of kind `boundary`.
fn traces(pad: usize, absorb: usize, boundary: Boundary, grazing: bool, nt: usize) -> Vec<f64> {
    let n = PML_INTERIOR + 2 * pad;
    let ((sz, sx), recs) = geometry(grazing);
    let config = WaveConfig {
        nz: n,
        nx: n,
        nt,
        dt: 0.5 * 5.0 / 2000.0,
        dh: 5.0,
        src_z: pad + sz,
        src_x: pad + sx,
        fpeak: 15.0,
        vmin: 2000.0,
        layers: vec![],
        absorb,
        boundary,
        source_mode: SourceMode::Add,
        receivers: recs.iter().map(|&(z, x)| (pad + z, pad + x)).collect(),
        ..WaveConfig::paper()
    };
    let mut sim = WaveSimulator::<Rayon, f64>::with_config(Rayon::new(), config);
    sim.run().expect("runs");
    sim.seismogram().expect("traces").data.clone()
}

/// Reflected energy at the receivers for a layer of `width` cells of kind `boundary`, in dB
/// relative to the rigid border at the same place (the layer's outer edge), with `reference`
/// the traces of the far-walled run.
fn receiver_db(width: usize, boundary: Boundary, grazing: bool, reference: &[f64]) -> f64 {
    let diff = |a: &[f64]| -> f64 { a.iter().zip(reference).map(|(x, y)| (x - y).powi(2)).sum() };
    let rigid = traces(width, 0, Boundary::Rigid, grazing, PML_NT);
    let layer = traces(width, width, boundary, grazing, PML_NT);
    let (e_rigid, e_layer) = (diff(&rigid), diff(&layer));
    let direct: f64 = reference.iter().map(|v| v * v).sum();
    assert!(
        e_rigid > 0.05 * direct,
        "the rigid border must reflect: {e_rigid:.3e} vs direct {direct:.3e}"
    );
    10.0 * (e_layer / e_rigid).log10()
}

fn reference(grazing: bool) -> Vec<f64> {
    traces(REFERENCE_PAD, 0, Boundary::Rigid, grazing, PML_NT)
}

#[test]
fn pml_of_20_cells_reflects_40_db_less_than_the_rigid_border_at_normal_incidence() {
    let db = receiver_db(20, Boundary::Pml, false, &reference(false));
    eprintln!("pml 20 cells, normal incidence: {db:.1} dB");
    assert!(db <= -40.0, "{db:.1} dB");
}

#[test]
fn pml_of_20_cells_reflects_40_db_less_than_the_rigid_border_at_grazing_incidence() {
    let db = receiver_db(20, Boundary::Pml, true, &reference(true));
    eprintln!("pml 20 cells, grazing incidence: {db:.1} dB");
    assert!(db <= -40.0, "{db:.1} dB");
}

/// The table in `docs/guide/solver.md` (Verification): dB against width for the PML and the
/// sponge, at both incidences
/// (`cargo test -p ppstencil-tests --release --test solver_absorb -- --ignored --nocapture`).
#[test]
#[ignore = "the table for docs/guide/solver.md: 14 runs, a few seconds in release"]
fn table_of_reflection_against_width() {
    let refs = [reference(false), reference(true)];
    println!("| width (cells) | pml normal | pml grazing | sponge normal | sponge grazing |");
    println!("|---|---|---|---|---|");
    for width in [10, 20, 40] {
        let mut row = format!(
            "| {width} ({:.2} λ) |",
            width as f64 * 5.0 / (2000.0 / 15.0)
        );
        for boundary in [Boundary::Pml, Boundary::Sponge] {
            for grazing in [false, true] {
                let db = receiver_db(width, boundary, grazing, &refs[usize::from(grazing)]);
                row.push_str(&format!(" {db:.1} dB |"));
            }
        }
        println!("{row}");
    }
}

// ---------------------------------------------------------------------------------------
// The same in 3D (same medium, wavelet and time step), on a smaller cube: a source 5 cells
// from the x = 0 face of the interior, a receiver 20 cells behind it on the face's normal
// (normal incidence: direct wave, then the face's reflection, path 30 cells + 2 · width)
// and two 20 cells from it along the face (grazing incidence), 10 cells from the y faces.
// One reference run (pad `REFERENCE_PAD_3D`) serves both incidences. f32 (the reflections
// measured are far above its rounding).

/// Side of the cubic interior (cells).
const INTERIOR_3D: usize = 60;
/// Steps: the rigid reflection of a 20-cell layer at the normal receiver (path 70 cells =
/// 140 steps, plus the wavelet's 160) ends inside the window.
const NT_3D: usize = 300;
/// The reference's pad: its nearest wall, 69 cells from the source, sends its reflection
/// along paths of 140 cells or more (280 steps, plus the wavelet's onset of ~30 steps), so
/// nothing reaches a receiver in the window.
const REFERENCE_PAD_3D: usize = 64;

/// The 3D receivers' traces of a homogeneous run with `pad` cells around the interior,
/// `absorb` of them a layer of kind `boundary`: per receiver (normal, then the two grazing
/// ones), its `nt` samples.
fn traces_3d(pad: usize, absorb: usize, boundary: Boundary, nt: usize) -> Vec<Vec<f64>> {
    let n = INTERIOR_3D + 2 * pad;
    let c = INTERIOR_3D / 2;
    let recs = [(c, c, 25), (c, 10, 5), (c, INTERIOR_3D - 10, 5)];
    let config = WaveConfig {
        nz: n,
        ny: n,
        nx: n,
        nt,
        dt: 0.5 * 5.0 / 2000.0,
        dh: 5.0,
        src_z: pad + c,
        src_y: pad + c,
        src_x: pad + 5,
        fpeak: 15.0,
        vmin: 2000.0,
        layers: vec![],
        absorb,
        boundary,
        source_mode: SourceMode::Add,
        receivers_3d: recs
            .iter()
            .map(|&(z, y, x)| (pad + z, pad + y, pad + x))
            .collect(),
        ..WaveConfig::paper()
    };
    let mut sim = WaveSimulator::<Rayon, f32, 3>::with_config(Rayon::new(), config);
    sim.run().expect("runs");
    let data = &sim.seismogram().expect("traces").data;
    (0..recs.len())
        .map(|r| {
            (0..nt)
                .map(|it| f64::from(data[it * recs.len() + r]))
                .collect()
        })
        .collect()
}

/// Reflected energy at the normal and at the grazing receivers for a 3D layer of `width`
/// cells of kind `boundary`, in dB relative to the rigid border at the layer's outer edge,
/// against the traces `reference` of the far-walled run (all `nt` long).
fn receiver_db_3d(
    width: usize,
    boundary: Boundary,
    reference: &[Vec<f64>],
    nt: usize,
) -> (f64, f64) {
    let rigid = traces_3d(width, 0, Boundary::Rigid, nt);
    let layer = traces_3d(width, width, boundary, nt);
    let energy = |t: &[Vec<f64>], recs: &[usize]| -> f64 {
        recs.iter()
            .map(|&r| {
                t[r].iter()
                    .zip(&reference[r])
                    .map(|(x, y)| (x - y).powi(2))
                    .sum::<f64>()
            })
            .sum()
    };
    let db = |recs: &[usize]| {
        let (e_rigid, e_layer) = (energy(&rigid, recs), energy(&layer, recs));
        let direct: f64 = recs
            .iter()
            .map(|&r| reference[r].iter().map(|v| v * v).sum::<f64>())
            .sum();
        assert!(
            e_rigid > 0.05 * direct,
            "the rigid border must reflect: {e_rigid:.3e} vs direct {direct:.3e}"
        );
        10.0 * (e_layer / e_rigid).log10()
    };
    (db(&[0]), db(&[1, 2]))
}

/// A 20-cell PML in 3D reflects at least 40 dB less than the rigid border, at normal and at
/// grazing incidence (about 10 s in release; `.ci/run` runs it).
#[test]
#[ignore = "3D runs of 1-7 M points: about 10 s in release; .ci/run runs it"]
fn pml_of_20_cells_reflects_40_db_less_than_the_rigid_border_in_3d() {
    let reference = traces_3d(REFERENCE_PAD_3D, 0, Boundary::Rigid, NT_3D);
    let (normal, grazing) = receiver_db_3d(20, Boundary::Pml, &reference, NT_3D);
    eprintln!("3D pml 20 cells: normal {normal:.1} dB, grazing {grazing:.1} dB");
    assert!(normal <= -40.0, "normal: {normal:.1} dB");
    assert!(grazing <= -40.0, "grazing: {grazing:.1} dB");
}

/// The 3D table in `docs/guide/solver.md` (Verification): dB against width for the PML and
/// the sponge, at both incidences,
/// in a window long enough for a 40-cell layer's rigid reflection (path 110 cells + the
/// wavelet: 400 steps) with a reference pad to match (its nearest wall's reflection needs
/// paths of 190 cells or more)
/// (`cargo test -p ppstencil-tests --release --test solver_absorb table_3d -- --ignored --nocapture`).
#[test]
#[ignore = "the 3D table for docs/guide/solver.md: 13 runs of up to 14 M points, minutes"]
fn table_3d_of_reflection_against_width() {
    let nt = 400;
    let reference = traces_3d(90, 0, Boundary::Rigid, nt);
    println!("| width (cells) | pml normal | pml grazing | sponge normal | sponge grazing |");
    println!("|---|---|---|---|---|");
    for width in [10, 20, 40] {
        let mut row = format!(
            "| {width} ({:.2} λ) |",
            width as f64 * 5.0 / (2000.0 / 15.0)
        );
        for boundary in [Boundary::Pml, Boundary::Sponge] {
            let (normal, grazing) = receiver_db_3d(width, boundary, &reference, nt);
            row.push_str(&format!(" {normal:.1} dB | {grazing:.1} dB |"));
        }
        println!("{row}");
    }
}

/// A small model with a strong contrast (1500 / 4500 m/s) crossing the PML on both sides,
/// source near the contrast, receivers in the layer's corner region too.
fn contrast_config(nt: usize, width: usize, kernels: StepKernels, order: usize) -> WaveConfig {
    let n = 64;
    WaveConfig {
        nz: n,
        nx: n + 6,
        nt,
        dt: 0.5 * 5.0 / 4500.0,
        dh: 5.0,
        src_z: n / 2 - 3,
        src_x: n / 2,
        fpeak: 15.0,
        vmin: 1500.0,
        layers: vec![Layer {
            z0: n / 2,
            z1: n,
            velocity: 4500.0,
        }],
        kernels,
        space_order: order,
        absorb: width,
        boundary: Boundary::Pml,
        source_mode: SourceMode::Add,
        receivers: vec![(n / 2, n / 2 + 10), (3, 3), (n / 2, width / 2)],
        ..WaveConfig::paper()
    }
}

/// PMLs can go unstable late: 20,000 steps (25 s of waves, the layer crossed ~ 1000 times)
/// in a model with a 3:1 velocity contrast through the layer stay bounded, and the energy
/// leaves: after the wave has gone, the field is a tiny fraction of its peak and does not
/// grow again.
fn stays_bounded<T: Real>() {
    let config = contrast_config(20_000, 12, StepKernels::Fused, 4);
    let every = 500;
    let mut sim = WaveSimulator::<Serial, T>::with_config(
        Serial,
        WaveConfig {
            snapshot_every: Some(every),
            ..config
        },
    );
    let mut peaks = Vec::new();
    sim.run_with(
        |_, _| {},
        |_, p| {
            peaks.push(p.max_abs().to_f64());
            Ok(())
        },
    )
    .expect("runs (a blow-up would stop the run with a non-finite error)");
    decays(&peaks, T::NAME);
}

/// The field's maxima `peaks` of a long run (snapshots at equal intervals) show the energy
/// gone: after the first quarter at most 1e-3 of the peak, at the end at most 1e-4.
fn decays(peaks: &[f64], what: &str) {
    let peak = peaks.iter().cloned().fold(0.0, f64::max);
    let late = peaks[peaks.len() / 4..].iter().cloned().fold(0.0, f64::max);
    let last = *peaks.last().expect("frames");
    eprintln!(
        "{what}: peak {peak:.3e}, max after the first quarter {late:.3e}, at the end {last:.3e}"
    );
    assert!(peak > 0.0);
    assert!(late <= 1e-3 * peak, "late {late:e} vs peak {peak:e}");
    assert!(last <= 1e-4 * peak, "final {last:e} vs peak {peak:e}");
}

/// The 3D PML stays bounded too: 10,000 steps of a 40³ model whose lower half (4500 m/s
/// under 1500 m/s) crosses a 10-cell PML on four sides, source just above the contrast.
#[test]
#[ignore = "10,000 3D steps: about 20 s in release; .ci/run runs it"]
fn pml_is_stable_for_10000_steps_with_a_strong_contrast_in_3d() {
    let n = 40;
    let config = WaveConfig {
        nz: n,
        ny: n,
        nx: n + 4,
        nt: 10_000,
        dt: 0.5 * 5.0 / 4500.0,
        dh: 5.0,
        src_z: n / 2 - 3,
        src_y: n / 2,
        src_x: n / 2,
        fpeak: 15.0,
        vmin: 1500.0,
        layers: vec![Layer {
            z0: n / 2,
            z1: n,
            velocity: 4500.0,
        }],
        absorb: 10,
        boundary: Boundary::Pml,
        source_mode: SourceMode::Add,
        receivers_3d: vec![(3, 3, 3), (n / 2, n / 2, 5)],
        snapshot_every: Some(500),
        ..WaveConfig::paper()
    };
    let mut sim = WaveSimulator::<Rayon, f32, 3>::with_config(Rayon::new(), config);
    let mut peaks = Vec::new();
    sim.run_with(
        |_, _| {},
        |_, p| {
            peaks.push(p.max_abs().to_f64());
            Ok(())
        },
    )
    .expect("runs (a blow-up would stop the run with a non-finite error)");
    decays(&peaks, "3D f32");
}

#[test]
fn pml_is_stable_for_20000_steps_with_a_strong_contrast_f32() {
    stays_bounded::<f32>();
}

/// The f64 variant: run in release by `.ci/run`.
#[test]
#[ignore = "about 20 s in a debug build; .ci/run runs it in release"]
fn pml_is_stable_for_20000_steps_with_a_strong_contrast_f64() {
    stays_bounded::<f64>();
}

/// The wavefield and the traces of `sim`'s run, as f64.
fn run_of<E: ExecutionSpace, T: Real>(sim: &mut WaveSimulator<E, T>) -> (Vec<f64>, Vec<f64>) {
    sim.run().expect("runs");
    let p = sim.wavefield_host().expect("copy");
    let traces = &sim.seismogram().expect("traces").data;
    (
        p.as_slice().iter().map(|v| v.to_f64()).collect(),
        traces.iter().map(|v| v.to_f64()).collect(),
    )
}

/// With a PML, every space gives Serial's wavefield and traces: host spaces bit for bit,
/// devices within rounding (FMA contraction; the software GPU is bit for bit too, checked
/// by `.ci/soft-gpu-tests` through `ppwave run`); fused (orders 4 and 8) and split kernels.
/// The PML must have done something: it differs from the rigid run.
fn pml_runs_alike_on_every_space<E: ExecutionSpace>(space: E) {
    let base = contrast_config(150, 10, StepKernels::Fused, 4);
    let mut sim = WaveSimulator::<E, f32>::with_config(space, base.clone());
    for (kernels, order) in [
        (StepKernels::Fused, 4),
        (StepKernels::Split, 4),
        (StepKernels::Fused, 8),
    ] {
        sim.set_kernels(kernels).set_space_order(order);
        let c = sim.config().clone();
        let (p, tr) = run_of(&mut sim);
        let (want_p, want_tr) = run_of(&mut WaveSimulator::<Serial, f32>::with_config(
            Serial,
            c.clone(),
        ));
        let rigid = run_of(&mut WaveSimulator::<Serial, f32>::with_config(
            Serial,
            WaveConfig {
                boundary: Boundary::Rigid,
                ..c
            },
        ));
        let scale = want_p.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        assert!(scale > 0.0);
        assert!(
            want_p.iter().zip(&rigid.0).any(|(a, b)| a != b),
            "the PML changes the field"
        );
        let tol = if is_host::<E>() { 0.0 } else { 1e-5 * scale };
        for (got, want) in [(&p, &want_p), (&tr, &want_tr)] {
            let diff = got
                .iter()
                .zip(want)
                .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
            assert!(
                diff <= tol,
                "{} {kernels:?} order {order}: max|diff| {diff:e} (max|p| {scale:e})",
                E::NAME
            );
        }
    }
}

/// The same in f64, Rayon against Serial, bit for bit.
#[test]
fn pml_runs_alike_in_f64() {
    let c = contrast_config(150, 10, StepKernels::Fused, 4);
    let a = run_of(&mut WaveSimulator::<Serial, f64>::with_config(
        Serial,
        c.clone(),
    ));
    let b = run_of(&mut WaveSimulator::<Rayon, f64>::with_config(
        Rayon::with_threads(3).expect("pool"),
        c,
    ));
    assert_eq!(a, b);
}

for_each_space!(pml_runs_alike_on_every_space);

/// `rigid` with a width is no layer at all (`absorb = 0`), bit for bit; the PML is the
/// default kind and differs from both the rigid border and the sponge (whose reflection
/// the tests above measure).
#[test]
fn rigid_is_no_layer_and_pml_is_the_default() {
    let c = contrast_config(100, 10, StepKernels::Fused, 4);
    let field = |c: WaveConfig| {
        let mut sim = WaveSimulator::<Serial, f32>::with_config(Serial, c);
        sim.run().expect("runs");
        sim.wavefield_host().expect("copy").as_slice().to_vec()
    };
    let rigid = field(WaveConfig {
        boundary: Boundary::Rigid,
        ..c.clone()
    });
    let none = field(WaveConfig {
        absorb: 0,
        ..c.clone()
    });
    assert_eq!(rigid, none);
    assert_eq!(WaveConfig::paper().boundary, Boundary::Pml);
    assert_eq!(
        WaveConfig::paper().layer(),
        None,
        "the paper's run has no layer"
    );
    let pml = field(c.clone());
    let sponge = field(WaveConfig {
        boundary: Boundary::Sponge,
        ..c
    });
    assert_ne!(pml, rigid);
    assert_ne!(pml, sponge);
}
