//! `ppwave migrate`: reverse-time migration. Each shot's data that the migration model
//! does not explain (`d_obs − F m`: the reflections, when the model is smooth) is propagated
//! back in time by the exact adjoint and cross-correlated at zero lag with the source
//! wavefield; the shots' images are summed in file order. Writes `image.npy` (nz × nx, the
//! run's precision), `image.png` (axes in metres, colour bar) and `run.json` into --out
//! (default `ppwave-migrate`); with `--laplacian` the image is filtered by `−∇²` (which
//! removes the low-wavenumber backscatter of the cross-correlation).

use crate::crew::Crew;
use crate::figures::{self, field};
use crate::output::OutputDir;
use crate::survey::{self, Job, Survey, SurveyArgs};
use clap::Args;
use ppstencil::solver::{Shot, WaveOperator};
use ppstencil::{ExecutionSpace, Real};
use std::path::PathBuf;

/// The flags of `ppwave migrate`.
#[derive(Args, Debug, Clone)]
pub struct MigrateArgs {
    /// Filter the image with the negative Laplacian `−∇²` (five points, 1/dh²).
    #[arg(long)]
    pub laplacian: bool,
    /// The survey: data, memory, model and geometry.
    #[command(flatten)]
    pub survey: SurveyArgs,
}

/// The image of a survey and what its computation reports.
pub struct Migrated {
    /// The image, `nz × nx`.
    pub image: Vec<f64>,
    /// `½ ‖d_obs − F m‖²` summed over the shots.
    pub misfit: f64,
    /// Forward steps run again from checkpoints.
    pub recomputed_steps: usize,
    /// Checkpoints kept (`None`: every step kept).
    pub checkpoints: Option<usize>,
}

/// The migration of a survey as a [`Job`].
struct Migration<'a> {
    survey: &'a Survey,
    memory: Option<&'a str>,
    crew: &'a Crew,
}

impl Job for Migration<'_> {
    type Out = Migrated;

    fn run<E: ExecutionSpace + Clone, T: Real>(self, space: E) -> anyhow::Result<Migrated> {
        let s = self.survey;
        let op = WaveOperator::<E, T>::new(space, s.plan.config.clone())
            .map_err(crate::run::flag_error)?;
        survey::check_memory(&op, s.storage, self.memory)?;
        let (wavelets, observed) = survey::shots_in(&op, s)?;
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
        let r = self.crew.image(&op, &shots, s.storage)?;
        Ok(Migrated {
            image: r.gradient.as_slice().iter().map(|v| v.to_f64()).collect(),
            misfit: r.misfit,
            recomputed_steps: r.recomputed_steps,
            checkpoints: r.checkpoints,
        })
    }
}

/// `−∇² a` on the interior of an `nz × nx` grid of spacing `dh` (the border rows and
/// columns 0).
pub fn negative_laplacian(a: &[f64], nz: usize, nx: usize, dh: f64) -> Vec<f64> {
    let mut out = vec![0.0; a.len()];
    for z in 1..nz.saturating_sub(1) {
        for x in 1..nx.saturating_sub(1) {
            let k = z * nx + x;
            let sum = a[k - nx] + a[k + nx] + a[k - 1] + a[k + 1] - 4.0 * a[k];
            out[k] = -sum / (dh * dh);
        }
    }
    out
}

/// The image of the survey of `args` (filtered when asked) over `crew`, computed without
/// writing.
pub fn image(args: &MigrateArgs, survey: &Survey, crew: &Crew) -> anyhow::Result<Migrated> {
    let job = Migration {
        survey,
        memory: args.survey.memory.as_deref(),
        crew,
    };
    let mut m = survey::dispatch(&survey.plan, job)?;
    if args.laplacian {
        let c = &survey.plan.config;
        m.image = negative_laplacian(&m.image, c.nz, c.nx, c.dh);
    }
    Ok(m)
}

/// Runs `ppwave migrate`: reads and checks everything, migrates (over the ranks of
/// `mpiexec`, see [`Crew`]), then writes the image, its picture and run.json into --out at
/// once (nothing on any error; rank 0 writes).
pub fn migrate(args: &MigrateArgs) -> anyhow::Result<()> {
    let mut args = args.clone();
    let replace = args.survey.run.overwrite || args.survey.run.out.is_none();
    let out = args
        .survey
        .run
        .out
        .get_or_insert_with(|| PathBuf::from("ppwave-migrate"))
        .clone();
    let survey = survey::load("migrate", &args.survey)?;
    let crew = Crew::start()?;
    let m = image(&args, &survey, &crew)?;
    if !crew.writes() {
        return Ok(());
    }
    let inputs: Vec<(&str, &std::path::Path)> = survey
        .inputs
        .iter()
        .map(|(f, p)| (*f, p.as_path()))
        .collect();
    let mut dir = OutputDir::prepare(&out, replace, &inputs)?;
    let c = &survey.plan.config;
    survey::write_field(&mut dir, &survey.plan, "image.npy", &m.image)?;
    // The picture marks the first shot's source (the title counts the shots).
    let first = survey.shots[0];
    let shown = ppstencil::WaveConfig {
        src_z: first.0,
        src_x: first.1,
        ..c.clone()
    };
    let backdrop = field::Backdrop::new(&shown)?;
    let title = format!(
        "RTM image, {} shot(s) (first source marked){}",
        survey.shots.len(),
        if args.laplacian {
            ", -Laplacian filtered"
        } else {
            ""
        }
    );
    let fig = field::image_figure(&backdrop, &m.image, title);
    dir.write("image.png", |f| figures::write(f, &fig))?;
    let record = serde_json::json!({
        "command": "migrate",
        "ranks": crew.rank_and_size().1,
        "shots": survey.shots.iter().map(|s| [s.0, s.1]).collect::<Vec<_>>(),
        "laplacian": args.laplacian,
        "residual_misfit": m.misfit,
        "checkpoints": m.checkpoints,
        "recomputed_steps": m.recomputed_steps,
        "config": survey.plan.options,
    });
    dir.write("run.json", |f| {
        Ok(std::fs::write(
            f,
            serde_json::to_string_pretty(&record)? + "\n",
        )?)
    })?;
    for path in dir.commit()? {
        println!("wrote {}", path.display());
    }
    Ok(())
}
