//! `ppwave bench` (placeholder: the benchmark driver lands separately).

/// Arguments of `ppwave bench`.
#[derive(clap::Args, Debug)]
pub struct BenchArgs {}

/// Runs the benchmarks.
pub fn run(_args: &BenchArgs) -> anyhow::Result<()> {
    anyhow::bail!("ppwave bench is not available in this build")
}
