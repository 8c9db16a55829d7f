//! `ppwave invert`: full-waveform inversion on the velocity by L-BFGS (default) or steepest
//! descent, with a backtracking line search and box bounds. Each iteration computes the
//! misfit's gradient over the shots (adjoint-state, `ppwave migrate`'s survey) with respect
//! to velocity (`∂J/∂v = −2 ∂J/∂s / v³`, zero in the absorbing layer), turns it into a
//! direction ([`Method`]), tries a step along it, halving it until the misfit falls (at most
//! [`HALVINGS`] times), and keeps every velocity within `--bounds`. Writes `misfit.json`
//! (the misfit before the first and after each iteration), `model-NNNN.npy` (the model
//! after iteration NNNN; `model-0000.npy` the start), `model.png` (the last model) and
//! `run.json` into --out (default `ppwave-invert`), all at once at the end.

use crate::crew::Crew;
use crate::figures::{self, field};
use crate::output::OutputDir;
use crate::survey::{self, Job, Survey, SurveyArgs};
use crate::BadInput;
use clap::Args;
use ppstencil::solver::{Shot, WaveOperator};
use ppstencil::{ExecutionSpace, HostField, Real};
use std::path::PathBuf;

/// The most times a trial step is halved before the line search gives up.
pub const HALVINGS: usize = 6;

/// The pairs of model and gradient changes L-BFGS keeps.
pub const LBFGS_PAIRS: usize = 5;

/// How `ppwave invert` turns gradients into directions.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// Limited-memory BFGS: the gradient through the inverse Hessian estimated from the
    /// last [`LBFGS_PAIRS`] steps, tried first at its own length (the first iteration, or
    /// one whose estimate does not point downhill, takes a steepest-descent step instead).
    Lbfgs,
    /// Steepest descent: a first trial step of `--step` m/s, then twice the last accepted.
    Descent,
}

/// The flags of `ppwave invert`.
#[derive(Args, Debug, Clone)]
pub struct InvertArgs {
    /// Iterations of the optimiser.
    #[arg(long, default_value_t = 5)]
    pub iterations: usize,
    /// The optimiser.
    #[arg(long, value_enum, default_value_t = Method::Lbfgs)]
    pub method: Method,
    /// The largest velocity change of the first trial step (m/s); later steepest-descent
    /// steps start from twice the last accepted one.
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
struct Fwi<'a> {
    args: &'a InvertArgs,
    survey: &'a Survey,
    bounds: (f64, f64),
    crew: &'a Crew,
}

impl Fwi<'_> {
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
        Ok(self.crew.misfit(&op, shots)?)
    }

    /// `∂J/∂v` at `v`, zero in the absorbing layer, and the misfit at `v`.
    fn gradient<E: ExecutionSpace + Clone, T: Real>(
        &self,
        space: &E,
        v: &[f64],
        shots: &[Shot<'_, T>],
    ) -> anyhow::Result<(Vec<f64>, f64)> {
        let c = &self.survey.plan.config;
        let op = self.operator::<E, T>(space, v)?;
        let g = self.crew.gradient(&op, shots, self.survey.storage)?;
        let mut d: Vec<f64> = g
            .gradient
            .as_slice()
            .iter()
            .zip(v)
            .map(|(gs, &v)| -2.0 * gs.to_f64() / (v * v * v))
            .collect();
        // No model update inside the absorbing layer (points within `absorb` of a side).
        let inner = |i: usize, n: usize| i >= c.absorb && i + c.absorb < n;
        for (flat, g) in d.iter_mut().enumerate() {
            if !(inner(flat / c.nx, c.nz) && inner(flat % c.nx, c.nx)) {
                *g = 0.0;
            }
        }
        Ok((d, g.misfit))
    }
}

/// `a · b`.
fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// The largest magnitude of `a`.
fn top(a: &[f64]) -> f64 {
    a.iter().fold(0.0f64, |m, x| m.max(x.abs()))
}

/// The L-BFGS memory: the last steps `s = v' − v` and gradient changes `y = g' − g` whose
/// curvature `s · y` is positive, oldest first.
#[derive(Default)]
struct Lbfgs {
    pairs: Vec<(Vec<f64>, Vec<f64>)>,
}

impl Lbfgs {
    /// Keeps the pair `(s, y)` where its curvature is positive (else the estimate would not
    /// stay positive definite), dropping the oldest beyond [`LBFGS_PAIRS`].
    fn remember(&mut self, s: Vec<f64>, y: Vec<f64>) {
        let sy = dot(&s, &y);
        if sy > 1e-12 * (dot(&s, &s) * dot(&y, &y)).sqrt() {
            self.pairs.push((s, y));
            if self.pairs.len() > LBFGS_PAIRS {
                self.pairs.remove(0);
            }
        }
    }

    /// `−H g` by the two-loop recursion, with `H0 = (s·y / y·y) I` from the newest pair;
    /// `None` without pairs.
    fn direction(&self, g: &[f64]) -> Option<Vec<f64>> {
        let (s_new, y_new) = self.pairs.last()?;
        let mut q = g.to_vec();
        let mut alphas = Vec::with_capacity(self.pairs.len());
        for (s, y) in self.pairs.iter().rev() {
            let a = dot(s, &q) / dot(s, y);
            q.iter_mut().zip(y).for_each(|(q, y)| *q -= a * y);
            alphas.push(a);
        }
        let gamma = dot(s_new, y_new) / dot(y_new, y_new);
        q.iter_mut().for_each(|q| *q *= gamma);
        for ((s, y), a) in self.pairs.iter().zip(alphas.into_iter().rev()) {
            let b = dot(y, &q) / dot(s, y);
            q.iter_mut().zip(s).for_each(|(q, s)| *q += (a - b) * s);
        }
        q.iter_mut().for_each(|q| *q = -*q);
        Some(q)
    }
}

impl Job for Fwi<'_> {
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
        let mut v = start.clone();
        let mut out = Inversion {
            start_misfit: 0.0,
            start,
            iterations: Vec::new(),
            stopped: None,
        };
        let mut memory = Lbfgs::default();
        let mut last: Option<(Vec<f64>, Vec<f64>)> = None; // the previous model and gradient
        let mut alpha = self.args.step;
        for it in 0..self.args.iterations {
            let (g, j) = self.gradient::<E, T>(&space, &v, &shots)?;
            if it == 0 {
                out.start_misfit = j;
            }
            if let Some((v0, g0)) = last.take() {
                let s = v.iter().zip(&v0).map(|(a, b)| a - b).collect();
                let y = g.iter().zip(&g0).map(|(a, b)| a - b).collect();
                memory.remember(s, y);
            }
            // A unit direction (largest component 1) and the first trial's length in m/s.
            let quasi_newton = match self.args.method {
                Method::Lbfgs => memory.direction(&g).filter(|d| dot(d, &g) < 0.0),
                Method::Descent => None,
            };
            let (mut d, first) = match quasi_newton {
                Some(d) => {
                    let len = top(&d);
                    (d, len)
                }
                None => (g.iter().map(|x| -x).collect(), alpha),
            };
            let len = top(&d);
            if len == 0.0 {
                out.stopped = Some(format!("iteration {}: the gradient is zero", it + 1));
                break;
            }
            d.iter_mut().for_each(|x| *x /= len);
            let Some((trial, jt, step)) = self.line_search(&space, &shots, &v, &d, first, j)?
            else {
                out.stopped = Some(format!(
                    "iteration {}: no step down to {:.3e} m/s lowered the misfit",
                    it + 1,
                    first / f64::powi(2.0, HALVINGS as i32)
                ));
                break;
            };
            last = Some((std::mem::replace(&mut v, trial), g));
            out.iterations.push(Iteration {
                misfit: jt,
                step,
                model: v.clone(),
            });
            alpha = 2.0 * step;
        }
        Ok(out)
    }
}

impl Fwi<'_> {
    /// Backtracking along the unit direction `d` from `v` (misfit `j`): steps of `first`,
    /// `first / 2`, … m/s (at most [`HALVINGS`] halvings), each velocity clamped to the
    /// bounds; the first trial model that lowers the misfit, its misfit and its step.
    fn line_search<E: ExecutionSpace + Clone, T: Real>(
        &self,
        space: &E,
        shots: &[Shot<'_, T>],
        v: &[f64],
        d: &[f64],
        first: f64,
        j: f64,
    ) -> anyhow::Result<Option<(Vec<f64>, f64, f64)>> {
        let (lo, hi) = self.bounds;
        let mut step = first;
        for _ in 0..=HALVINGS {
            let trial: Vec<f64> = v
                .iter()
                .zip(d)
                .map(|(&v, &d)| (v + step * d).clamp(lo, hi))
                .collect();
            let jt = self.misfit::<E, T>(space, &trial, shots)?;
            if jt < j {
                return Ok(Some((trial, jt, step)));
            }
            step /= 2.0;
        }
        Ok(None)
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

/// Writes `model.png`: the last model of `r` (the start when no iteration was kept) with its
/// own colour bar, the first shot's source marked, and the misfit against the start's in the
/// title.
fn write_model_picture(dir: &mut OutputDir, survey: &Survey, r: &Inversion) -> anyhow::Result<()> {
    let first = survey.shots[0];
    let shown = ppstencil::WaveConfig {
        src_z: first.0,
        src_x: first.1,
        ..survey.plan.config.clone()
    };
    let backdrop = field::Backdrop::new(&shown)?;
    let (model, misfit) = r
        .iterations
        .last()
        .map_or((&r.start, r.start_misfit), |it| (&it.model, it.misfit));
    let title = format!(
        "Velocity after {} iteration(s): misfit {:.3e} (start {:.3e})",
        r.iterations.len(),
        misfit,
        r.start_misfit
    );
    let fig = field::model_figure(&backdrop, model.iter().map(|&v| v as f32).collect(), title);
    dir.write("model.png", |f| figures::write(f, &fig))?;
    Ok(())
}

/// Runs `ppwave invert`: reads and checks everything, inverts (the shots over the ranks of
/// `mpiexec`, see [`Crew`]: every rank takes the same steps), then writes misfit.json, the
/// models, their picture and run.json into --out at once (nothing on any error; rank 0
/// writes).
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
    let crew = Crew::start()?;
    let job = Fwi {
        args: &args,
        survey: &survey,
        bounds,
        crew: &crew,
    };
    let r = survey::dispatch(&survey.plan, job)?;
    if !crew.writes() {
        return Ok(());
    }
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
    write_model_picture(&mut dir, &survey, &r)?;
    let misfit = serde_json::json!({"iterations": rows, "stopped": r.stopped, "bounds": [bounds.0, bounds.1]});
    dir.write("misfit.json", |f| {
        Ok(std::fs::write(
            f,
            serde_json::to_string_pretty(&misfit)? + "\n",
        )?)
    })?;
    let record = serde_json::json!({"command": "invert", "ranks": crew.rank_and_size().1, "config": survey.plan.options});
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
