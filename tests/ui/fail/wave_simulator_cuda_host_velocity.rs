// A CUDA simulator given a velocity model that lives in host memory.
use ppstencil::{Cuda, HostField, WaveSimulator};

fn main() -> ppstencil::Result<()> {
    let mut sim = WaveSimulator::<Cuda>::new(Cuda::new()?);
    let v = HostField::<f32>::from_fn(1751, 5001, |_, _| 1500.0)?;
    sim.set_velocity(v)?;
    sim.run()?;
    Ok(())
}
