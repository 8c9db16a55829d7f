// The simulator on both host execution spaces, with the paper's setters.
use ppstencil::{ExecutionSpace, HostField, StepKernels, Rayon, Serial, WaveSimulator};

fn simulate<E: ExecutionSpace>(space: E, kernels: StepKernels) -> ppstencil::Result<HostField> {
    let mut sim = WaveSimulator::<E>::new(space);
    sim.set_dimensions(30, 40)
        .set_time_steps(20)
        .set_time_step(0.001)
        .set_space_step(10.0)
        .set_source_position(15, 20)
        .set_vmin(2000.0)
        .set_kernels(kernels)
        .clear_velocity_layers()
        .add_velocity_layer(20, 30, 3000.0);
    sim.run()?;
    sim.wavefield_host()
}

fn main() -> ppstencil::Result<()> {
    let a = simulate(Serial, StepKernels::Split)?;
    let b = simulate(Rayon::new(), StepKernels::Fused)?;
    assert_eq!(a.as_slice(), b.as_slice());
    Ok(())
}
