//! [`HaloExchange`]: the halo of a rank's local field filled from its neighbours with
//! non-blocking point-to-point messages of packed faces, overlapped with work the caller
//! does meanwhile. Faces only: a point's neighbours along one axis at a time, which is all an
//! axis-aligned (star) stencil such as the Laplacian reads; corner blocks are not sent.

use super::decomp::{to_local, Decomposition};
use crate::launch::axes;
use crate::{MemSpaceHost, Real, ScalarField};
use mpi::datatype::Equivalence;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use std::ops::Range;
use std::time::{Duration, Instant};

/// One face exchanged with one neighbour: the owned strip sent, the halo strip received.
struct Face<T> {
    rank: i32,
    send: [Range<usize>; 3],
    recv: [Range<usize>; 3],
    send_tag: i32,
    recv_tag: i32,
    send_buf: Vec<T>,
    recv_buf: Vec<T>,
}

/// The faces of one rank's local field and their buffers, allocated once.
pub struct HaloExchange<T> {
    shape: [usize; 3],
    faces: Vec<Face<T>>,
    time: Duration,
    bytes: usize,
}

/// A `D`-dimensional box as the `[z, y, x]` box of the field's 3D layout.
pub(super) fn zyx<const D: usize>(b: &[Range<usize>; D]) -> [Range<usize>; 3] {
    let mut out = [0..1, 0..1, 0..1];
    for (&a, r) in axes(D).iter().zip(b) {
        out[a] = r.clone();
    }
    out
}

pub(super) fn points(b: &[Range<usize>; 3]) -> usize {
    b.iter().map(|r| r.len()).product()
}

/// Calls `f(flat_start, len)` for every contiguous x-run of box `b` in a field of `shape`.
pub(super) fn runs(shape: [usize; 3], b: &[Range<usize>; 3], mut f: impl FnMut(usize, usize)) {
    for z in b[0].clone() {
        for y in b[1].clone() {
            f((z * shape[1] + y) * shape[2] + b[2].start, b[2].len());
        }
    }
}

impl<T: Real + Equivalence> HaloExchange<T> {
    /// The faces `rank` of `decomp` exchanges, for halos `halo` points wide.
    pub fn new<const D: usize>(decomp: &Decomposition<D>, rank: usize, halo: usize) -> Self {
        let own = decomp.owned(rank);
        let local = decomp.local(rank, halo);
        let origin = local.clone().map(|r| r.start);
        let shape = zyx(&local.clone().map(|r| 0..r.len())).map(|r| r.end);
        let mut faces = Vec::new();
        for a in 0..D {
            for up in [false, true] {
                let Some(n) = decomp.neighbour(rank, a, up) else {
                    continue;
                };
                let (mut send, mut recv) = (own.clone(), own.clone());
                if up {
                    send[a] = own[a].end - halo..own[a].end;
                    recv[a] = own[a].end..own[a].end + halo;
                } else {
                    send[a] = own[a].start..own[a].start + halo;
                    recv[a] = own[a].start - halo..own[a].start;
                }
                let (send, recv) = (zyx(&to_local(&send, origin)), zyx(&to_local(&recv, origin)));
                faces.push(Face {
                    rank: n as i32,
                    send_buf: vec![T::ZERO; points(&send)],
                    recv_buf: vec![T::ZERO; points(&recv)],
                    send,
                    recv,
                    send_tag: (2 * a + usize::from(up)) as i32,
                    recv_tag: (2 * a + usize::from(!up)) as i32,
                });
            }
        }
        HaloExchange {
            shape,
            faces,
            time: Duration::ZERO,
            bytes: 0,
        }
    }

    /// Fills the halo of `field` from the neighbours: packs the faces, posts the receives and
    /// sends, runs `during` (work that reads no halo) while the messages fly, waits, and
    /// unpacks. Every rank of the decomposition must call it the same number of times.
    pub fn exchange<const D: usize, R>(
        &mut self,
        comm: &SimpleCommunicator,
        field: &mut ScalarField<MemSpaceHost, T, D>,
        during: impl FnOnce(&ScalarField<MemSpaceHost, T, D>) -> R,
    ) -> R {
        let start = Instant::now();
        let shape = self.shape;
        let values = field.as_slice();
        for f in &mut self.faces {
            let mut k = 0;
            runs(shape, &f.send, |at, n| {
                f.send_buf[k..k + n].copy_from_slice(&values[at..at + n]);
                k += n;
            });
            self.bytes += f.send_buf.len() * std::mem::size_of::<T>();
        }
        let mut busy = Duration::ZERO;
        let result = mpi::request::scope(|scope| {
            let mut requests = Vec::with_capacity(2 * self.faces.len());
            for f in &mut self.faces {
                let p = comm.process_at_rank(f.rank);
                requests.push(p.immediate_receive_into_with_tag(
                    scope,
                    &mut f.recv_buf[..],
                    f.recv_tag,
                ));
                requests.push(p.immediate_send_with_tag(scope, &f.send_buf[..], f.send_tag));
            }
            let t = Instant::now();
            let r = during(field);
            busy = t.elapsed();
            for q in requests {
                q.wait();
            }
            r
        });
        let values = field.as_mut_slice();
        for f in &self.faces {
            let mut k = 0;
            runs(shape, &f.recv, |at, n| {
                values[at..at + n].copy_from_slice(&f.recv_buf[k..k + n]);
                k += n;
            });
        }
        self.time += start.elapsed().saturating_sub(busy);
        result
    }

    /// Time spent exchanging (packing, waiting, unpacking; not the overlapped work).
    pub fn time(&self) -> Duration {
        self.time
    }

    /// Bytes sent so far.
    pub fn bytes_sent(&self) -> usize {
        self.bytes
    }
}
