// A new execution space whose `type Memory` is not a memory space.
use ppstencil::launch::{Region, Stencil, Window};
use ppstencil::{ExecutionSpace, MemorySpace, Real, Result};

struct Fpga;

impl ExecutionSpace for Fpga {
    type Memory = Vec<f32>;
    const NAME: &'static str = "fpga";

    fn launch<S: Stencil, T: Real>(
        &self,
        _grid: &Region,
        _wins: &[Window],
        _outs: &mut [&mut <Self::Memory as MemorySpace>::Buffer<T>],
        _ins: &[&<Self::Memory as MemorySpace>::Buffer<T>],
        _reals: &[T],
    ) -> Result<()> {
        Ok(())
    }
}

fn main() {}
