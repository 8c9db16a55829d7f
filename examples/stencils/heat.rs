// A user's stencils in a file of their own: `stencil!` generates the CPU backends where this
// file is included, and `build.rs` compiles the same definitions to CUDA PTX / HIP code objects
// (`kernels_gen::build::compile_file`) when the `cuda` / `hip` feature is on.
ppstencil::stencil! {
    /// One explicit step of the heat equation: `unew = u + alpha * laplacian(u)`.
    pub fn heat_step(unew: out, u: in, alpha: real) {
        unew[0, 0] = u[0, 0] + alpha * (u[-1, 0] + u[1, 0] + u[0, -1] + u[0, 1] - 4.0 * u[0, 0]);
    }
}
