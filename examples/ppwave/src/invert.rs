//! `ppwave invert`: full-waveform inversion by steepest descent on the velocity with a
//! backtracking line search and box bounds. Each iteration computes the misfit's gradient
//! over the shots (adjoint-state, `ppwave migrate`'s survey), turns it into a velocity
//! direction (`∂J/∂v = −2 ∂J/∂s / v³`, zero in the absorbing layer), tries a step whose
//! largest change is `--step` m/s, halving it until the misfit falls (at most
//! [`HALVINGS`] times), and keeps every velocity within `--bounds`. Writes `misfit.json`
//! (the misfit before the first and after each iteration), `model-NNNN.npy` (the model
//! after iteration NNNN; `model-0000.npy` the start) and `run.json` into --out (default
//! `ppwave-invert`), all at once at the end.

use crate::output::OutputDir;
use crate::survey::{self, Job, Survey, SurveyArgs};
use crate::BadInput;
use clap::Args;
use ppstencil::solver::{Shot, WaveOperator};
use ppstencil::{ExecutionSpace, HostField, Real};
use std::path::PathBuf;

/// The most times a trial step is halved before the line search gives up.
pub const HALVINGS: usize = 6;

/// The flags of `ppwave invert`.
#[derive(Args, Debug, Clone)]
pub struct InvertArgs {
    /// Iterations of steepest descent.
    #[arg(long, default_value_t = 5)]
    pub iterations: usize,
    /// The largest velocity change of an iteration's first trial step (m/s).
    #[arg(long, default_value_t = 50.0)]
    pub step: f64,
    /// The box bounds on velocity, `VMIN:VMAX` (m/s) [default: the starting model's
    /// range widened by half].
    #[arg(long, value_name = "VMIN:VMAX")]
    pub bounds: Option<String>,
    /// The survey: data, memory, starting model and geometry.
    #[command(flatten)]
    pub survey: SurveyArgs,
}

/// One accepted iteration.
pub struct Iteration {
    /// The misfit after it.
    pub misfit: f64,
    /// The largest velocity change of its step (m/s).
    pub step: f64,
    /// The model after it, `nz × nx`.
    pub model: Vec<f64>,
}

/// The inversion's record: the starting misfit and model, the accepted iterations, and
/// why it stopped early (if it did).
pub struct Inversion {
    /// The misfit of the starting model.
    pub start_misfit: f64,
    /// The starting model.
    pub start: Vec<f64>,
    /// The iterations done.
    pub iterations: Vec<Iteration>,
    /// Why it stopped before `--iterations` (the line search found no decrease).
    pub stopped: Option<String>,
}

/// The inversion of a survey as a [`Job`].
struct Descent<'a> {
    args: &'a InvertArgs,
    survey: &'a Survey,
    bounds: (f64, f64),
}

impl Descent<'_> {
    /// The operator of the model `v` on `space` in `T`.
    fn operator<E: ExecutionSpace + Clone, T: Real>(
        &self,
        space: &E,
        v: &[f64],
    ) -> anyhow::Result<WaveOperator<E, T>> {
        let c = &self.survey.plan.config;
        let field = HostField::from_vec(c.nz, c.nx, v.iter().map(|&x| T::lit(x)).collect())?;
        Ok(WaveOperator::with_velocity(
            space.clone(),
            c.clone(),
            &field,
        )?)
    }

    /// The misfit of the model `v` (forward runs only), summed over the shots in order.
    fn misfit<E: ExecutionSpace + Clone, T: Real>(
        &self,
        space: &E,
        v: &[f64],
        shots: &[Shot<'_, T>],
    ) -> anyhow::Result<f64> {
        let op = self.operator::<E, T>(space, v)?;
        let mut j = 0.0;
        for s in shots {
            let pred = op.forward_from(s.source, s.wavelet)?;
            j += pred
                .iter()
                .zip(s.observed)
                .map(|(a, b)| 0.5 * (a.to_f64() - b.to_f64()).powi(2))
                .sum::<f64>();
        }
        Ok(j)
    }

    /// The descent direction at `v`: `−∂J/∂v` scaled to a largest magnitude of 1, zero in
    /// the absorbing layer; and the misfit at `v`.
    fn direction<E: ExecutionSpace + Clone, T: Real>(
        &self,
        space: &E,
        v: &[f64],
        shots: &[Shot<'_, T>],
    ) -> anyhow::Result<(Vec<f64>, f64)> {
        let c = &self.survey.plan.config;
        let op = self.operator::<E, T>(space, v)?;
        let g = op.misfit_gradient_shots(shots, self.survey.storage)?;
        let mut d: Vec<f64> = g
            .gradient
            .as_slice()
            .iter()
            .zip(v)
            .map(|(gs, &v)| 2.0 * gs.to_f64() / (v * v * v))
            .collect();
        // No model update inside the absorbing layer (points within `absorb` of a side).
        let inner = |i: usize, n: usize| i >= c.absorb && i + c.absorb < n;
        for (flat, g) in d.iter_mut().enumerate() {
            if !(inner(flat / c.nx, c.nz) && inner(flat % c.nx, c.nx)) {
                *g = 0.0;
            }
        }
        let top = d.iter().fold(0.0f64, |a, x| a.max(x.abs()));
        if top > 0.0 {
            d.iter_mut().for_each(|x| *x /= top);
        }
        Ok((d, g.misfit))
    }
}

impl Job for Descent<'_> {
    type Out = Inversion;

    fn run<E: ExecutionSpace + Clone, T: Real>(self, space: E) -> anyhow::Result<Inversion> {
        let s = self.survey;
        let start: Vec<f64> = s.plan.config.velocity_model::<f64>()?.into_vec();
        let op = self.operator::<E, T>(&space, &start)?;
        survey::check_memory(&op, s.storage, self.args.survey.memory.as_deref())?;
        // The wavelets stay those of the starting model (the source term is held fixed).
        let (wavelets, observed) = survey::shots_in(&op, s)?;
        drop(op);
        let shots: Vec<Shot<'_, T>> = s
            .shots
            .iter()
            .zip(wavelets.iter().zip(&observed))
            .map(|(&(z, x), (w, o))| Shot {
                source: [z, x],
                wavelet: w,
                observed: o,
            })
            .collect();
        let (lo, hi) = self.bounds;
        let mut v = start.clone();
        let mut out = Inversion {
            start_misfit: 0.0,
            start,
            iterations: Vec::new(),
            stopped: None,
        };
        let mut alpha = self.args.step;
        for it in 0..self.args.iterations {
            let (d, j) = self.direction::<E, T>(&space, &v, &shots)?;
            if it == 0 {
                out.start_misfit = j;
            }
            let mut accepted = None;
            for _ in 0..=HALVINGS {
                let trial: Vec<f64> = v
                    .iter()
                    .zip(&d)
                    .map(|(&v, &d)| (v + alpha * d).clamp(lo, hi))
                    .collect();
                let jt = self.misfit::<E, T>(&space, &trial, &shots)?;
                if jt < j {
                    accepted = Some((trial, jt));
                    break;
                }
                alpha /= 2.0;
            }
            let Some((trial, jt)) = accepted else {
                out.stopped = Some(format!(
                    "iteration {}: no step down to {alpha:.3e} m/s lowered the misfit",
                    it + 1
                ));
                break;
            };
            v = trial;
            out.iterations.push(Iteration {
                misfit: jt,
                step: alpha,
                model: v.clone(),
            });
            alpha *= 2.0;
        }
        Ok(out)
    }
}

/// `--bounds VMIN:VMAX` (default: the starting model's range widened by half), checked:
/// `0 < VMIN < VMAX` and VMAX within the CFL limit.
fn bounds(args: &InvertArgs, survey: &Survey) -> anyhow::Result<(f64, f64)> {
    let c = &survey.plan.config;
    let v = c.velocity_model::<f64>()?;
    let (vlo, vhi) = v
        .as_slice()
        .iter()
        .fold((f64::INFINITY, 0.0f64), |(a, b), &x| (a.min(x), b.max(x)));
    let (lo, hi) = match &args.bounds {
        None => (vlo * 0.5, vhi * 1.5),
        Some(text) => {
            let parts: Vec<Option<f64>> = text.split(':').map(|p| p.trim().parse().ok()).collect();
            match parts.as_slice() {
                [Some(a), Some(b)] if *a > 0.0 && a < b => (*a, *b),
                _ => {
                    return Err(BadInput(format!(
                        "invalid --bounds = {text}: give VMIN:VMAX in m/s with 0 < VMIN < VMAX \
                         (e.g. 1500:4500)"
                    ))
                    .into())
                }
            }
        }
    };
    if let Err(e) = c.check_cfl(hi) {
        return Err(BadInput(format!(
            "invalid --bounds = {lo}:{hi}: a velocity of VMAX = {hi} m/s breaks the scheme's \
             stability with --dt {} and --dh {} ({e}); lower VMAX, or lower --dt",
            c.dt, c.dh
        ))
        .into());
    }
    Ok((lo, hi))
}

/// Runs `ppwave invert`: reads and checks everything, inverts, then writes misfit.json,
/// the models and run.json into --out at once (nothing on any error).
pub fn invert(args: &InvertArgs) -> anyhow::Result<()> {
    let mut args = args.clone();
    if !(args.step.is_finite() && args.step > 0.0) {
        return Err(BadInput(format!(
            "invalid --step = {}: give the largest change of a trial step in m/s, > 0",
            args.step
        ))
        .into());
    }
    let replace = args.survey.run.overwrite || args.survey.run.out.is_none();
    let out = args
        .survey
        .run
        .out
        .get_or_insert_with(|| PathBuf::from("ppwave-invert"))
        .clone();
    let survey = survey::load("invert", &args.survey)?;
    let bounds = bounds(&args, &survey)?;
    let job = Descent {
        args: &args,
        survey: &survey,
        bounds,
    };
    let r = survey::dispatch(&survey.plan, job)?;
    let inputs: Vec<(&str, &std::path::Path)> = survey
        .inputs
        .iter()
        .map(|(f, p)| (*f, p.as_path()))
        .collect();
    let mut dir = OutputDir::prepare(&out, replace, &inputs)?;
    survey::write_field(&mut dir, &survey.plan, "model-0000.npy", &r.start)?;
    let mut rows = vec![serde_json::json!({"iteration": 0, "misfit": r.start_misfit})];
    for (k, it) in r.iterations.iter().enumerate() {
        survey::write_field(
            &mut dir,
            &survey.plan,
            &format!("model-{:04}.npy", k + 1),
            &it.model,
        )?;
        rows.push(
            serde_json::json!({"iteration": k + 1, "misfit": it.misfit, "step_m_s": it.step}),
        );
    }
    let misfit = serde_json::json!({"iterations": rows, "stopped": r.stopped, "bounds": [bounds.0, bounds.1]});
    dir.write("misfit.json", |f| {
        Ok(std::fs::write(
            f,
            serde_json::to_string_pretty(&misfit)? + "\n",
        )?)
    })?;
    let record = serde_json::json!({"command": "invert", "config": survey.plan.options});
    dir.write("run.json", |f| {
        Ok(std::fs::write(
            f,
            serde_json::to_string_pretty(&record)? + "\n",
        )?)
    })?;
    if let Some(why) = &r.stopped {
        eprintln!("warning: stopped early: {why}");
    }
    for path in dir.commit()? {
        println!("wrote {}", path.display());
    }
    Ok(())
}
