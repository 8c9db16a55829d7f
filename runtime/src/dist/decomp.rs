//! [`Decomposition`]: a Cartesian split of a global grid over MPI ranks, over any number of
//! axes. Pure index arithmetic (no MPI here): which rank owns which box, its neighbours, the
//! box it stores with its halo, and the mapping between global and local indices.

use crate::{Error, Result};
use std::fmt;
use std::ops::Range;

/// A Cartesian decomposition of a grid of `shape` points into `parts[a]` pieces along each
/// axis `a` (outermost first, like the field's shape). Ranks are numbered row-major over the
/// parts (the last axis fastest). Along an axis of `n` points in `p` parts, the first
/// `n % p` parts get one point more than the others, so no two parts differ by more than one.
///
/// ```
/// use ppstencil::dist::Decomposition;
/// let d = Decomposition::new([10, 7], [2, 2], 2)?;
/// assert_eq!(d.owned(3), [5..10, 4..7]);
/// assert_eq!(d.local(0, 2), [0..7, 0..6]); // the halo stops at the grid's edge
/// assert!(Decomposition::new([10, 7], [1, 4], 2).is_err()); // parts of 1 point < radius 2
/// # Ok::<(), ppstencil::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decomposition<const D: usize> {
    shape: [usize; D],
    parts: [usize; D],
}

/// The axis names of a `D`-dimensional grid, outermost first (for messages).
fn axis_name(dims: usize, a: usize) -> &'static str {
    crate::launch::axis_words(dims)[a]
}

impl<const D: usize> Decomposition<D> {
    /// The decomposition of `shape` into `parts`, checked: every axis has at least one part,
    /// and every part is at least `radius` points thick along every split axis (the halo a
    /// neighbour needs must come from one rank): `radius` is the halo's width.
    pub fn new(shape: [usize; D], parts: [usize; D], radius: usize) -> Result<Self> {
        let d = Decomposition { shape, parts };
        for a in 0..D {
            let (n, p) = (shape[a], parts[a]);
            if p == 0 {
                return Err(Error::invalid(
                    "decomposition",
                    d.to_string(),
                    "every axis needs at least 1 part",
                ));
            }
            let thinnest = n / p;
            if p > 1 && thinnest < radius.max(1) {
                return Err(Error::invalid(
                    "decomposition",
                    d.to_string(),
                    format!(
                        "splits the {} axis ({n} points) into {p} parts, the thinnest {thinnest} \
                         points thick, thinner than the halo width {radius} (the stencil \
                         radius, at least 4 with a PML: the cells a neighbour needs); use at most {} parts along {}, or a larger grid",
                        axis_name(D, a),
                        (n / radius.max(1)).max(1),
                        axis_name(D, a)
                    ),
                ));
            }
        }
        Ok(d)
    }

    /// [`new`](Self::new) checked against the number of ranks: the parts multiply to `ranks`.
    pub fn for_ranks(
        shape: [usize; D],
        parts: [usize; D],
        ranks: usize,
        radius: usize,
    ) -> Result<Self> {
        let total: usize = parts.iter().product();
        if total != ranks {
            return Err(Error::invalid(
                "decomposition",
                Decomposition { shape, parts }.to_string(),
                format!(
                    "has {total} parts but the run has {ranks} MPI ranks; give a \
                     decomposition whose parts multiply to the number of ranks (mpiexec -n), \
                     or none for an automatic one"
                ),
            ));
        }
        Self::new(shape, parts, radius)
    }

    /// The automatic decomposition of `shape` over `ranks`: of every way to write `ranks` as
    /// a product of `D` parts that leaves no part thinner than `radius`, the one with the
    /// fewest halo points exchanged per step (the sum over cut planes of their size); ties go
    /// to more parts along outer axes (whole rows stay contiguous).
    pub fn balanced(shape: [usize; D], ranks: usize, radius: usize) -> Result<Self> {
        let mut best: Option<(usize, [usize; D])> = None;
        let mut parts = [1usize; D];
        fn visit<const D: usize>(
            a: usize,
            left: usize,
            parts: &mut [usize; D],
            f: &mut impl FnMut(&[usize; D]),
        ) {
            if a + 1 == D {
                parts[a] = left;
                f(parts);
                return;
            }
            for p in (1..=left).filter(|p| left.is_multiple_of(*p)) {
                parts[a] = p;
                visit(a + 1, left / p, parts, f);
            }
        }
        if D == 0 || ranks == 0 {
            return Err(Error::invalid("ranks", ranks, "at least 1 rank and 1 axis"));
        }
        visit(0, ranks, &mut parts, &mut |p| {
            if Decomposition::new(shape, *p, radius).is_err() {
                return;
            }
            let cut: usize = (0..D)
                .map(|a| {
                    (p[a] - 1)
                        * (0..D)
                            .filter(|&b| b != a)
                            .map(|b| shape[b])
                            .product::<usize>()
                })
                .sum();
            // Candidates come in increasing order of the outer parts: on a tie the later
            // one, with more parts along outer axes, wins.
            if best.as_ref().is_none_or(|(c, _)| cut <= *c) {
                best = Some((cut, *p));
            }
        });
        match best {
            Some((_, p)) => Ok(Decomposition { shape, parts: p }),
            None => Err(Error::invalid(
                "ranks",
                ranks,
                format!(
                    "cannot split the grid {} into {ranks} parts none thinner than the halo \
                     width {radius} (the stencil radius, at least 4 with a PML); use fewer MPI ranks or a larger grid",
                    crate::launch::Shape(shape.to_vec())
                ),
            )),
        }
    }

    /// Parses `AxB` (2D) or `AxBxC` (3D): the parts per axis, outermost first.
    pub fn parse_parts(text: &str) -> std::result::Result<[usize; D], String> {
        let fields: Vec<&str> = text.split('x').collect();
        let bad = || {
            let example = ["2", "2x2", "2x1x2"][D.clamp(1, 3) - 1];
            format!("`{text}` is not a decomposition of {D} axes: write the parts per axis joined by x, e.g. {example}")
        };
        if fields.len() != D {
            return Err(bad());
        }
        let mut parts = [0; D];
        for (p, f) in parts.iter_mut().zip(fields) {
            *p = f.trim().parse().map_err(|_| bad())?;
            if *p == 0 {
                return Err(bad());
            }
        }
        Ok(parts)
    }

    /// The global grid's shape.
    pub fn shape(&self) -> [usize; D] {
        self.shape
    }

    /// The parts per axis.
    pub fn parts(&self) -> [usize; D] {
        self.parts
    }

    /// Number of ranks (the product of the parts).
    pub fn ranks(&self) -> usize {
        self.parts.iter().product()
    }

    /// The indices along axis `a` of its part `i`.
    pub fn split(&self, a: usize, i: usize) -> Range<usize> {
        let (n, p) = (self.shape[a], self.parts[a]);
        let (base, extra) = (n / p, n % p);
        let start = i * base + i.min(extra);
        start..start + base + usize::from(i < extra)
    }

    /// The position of `rank` in the grid of parts.
    pub fn coords(&self, rank: usize) -> [usize; D] {
        let mut c = [0; D];
        let mut r = rank;
        for a in (0..D).rev() {
            c[a] = r % self.parts[a];
            r /= self.parts[a];
        }
        c
    }

    /// The rank at `coords` in the grid of parts.
    pub fn rank_at(&self, coords: [usize; D]) -> usize {
        (0..D).fold(0, |r, a| r * self.parts[a] + coords[a])
    }

    /// The box of global indices `rank` owns (computes and reports).
    pub fn owned(&self, rank: usize) -> [Range<usize>; D] {
        let c = self.coords(rank);
        std::array::from_fn(|a| self.split(a, c[a]))
    }

    /// The box `rank` stores: what it owns widened by `halo` on every side, clipped to the grid.
    pub fn local(&self, rank: usize, halo: usize) -> [Range<usize>; D] {
        let own = self.owned(rank);
        std::array::from_fn(|a| {
            own[a].start.saturating_sub(halo)..(own[a].end + halo).min(self.shape[a])
        })
    }

    /// The neighbour of `rank` along axis `a`, below (`up = false`) or above, if any.
    pub fn neighbour(&self, rank: usize, a: usize, up: bool) -> Option<usize> {
        let mut c = self.coords(rank);
        if up {
            (c[a] + 1 < self.parts[a]).then(|| {
                c[a] += 1;
                self.rank_at(c)
            })
        } else {
            (c[a] > 0).then(|| {
                c[a] -= 1;
                self.rank_at(c)
            })
        }
    }

    /// The rank owning global point `p`.
    pub fn owner(&self, p: [usize; D]) -> usize {
        let c = std::array::from_fn(|a| {
            (0..self.parts[a])
                .find(|&i| self.split(a, i).contains(&p[a]))
                .unwrap_or(self.parts[a] - 1)
        });
        self.rank_at(c)
    }
}

/// `AxB…`, the parts per axis.
impl<const D: usize> fmt::Display for Decomposition<D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self.parts.iter().map(|p| p.to_string()).collect();
        write!(f, "{}", parts.join("x"))
    }
}

/// The box `b` intersected with `c` (empty ranges stay empty).
pub fn intersect<const D: usize>(
    b: &[Range<usize>; D],
    c: &[Range<usize>; D],
) -> [Range<usize>; D] {
    std::array::from_fn(|a| {
        let lo = b[a].start.max(c[a].start);
        lo..b[a].end.min(c[a].end).max(lo)
    })
}

/// Global box `b` in the local indices of a rank storing the box starting at `origin`.
pub fn to_local<const D: usize>(b: &[Range<usize>; D], origin: [usize; D]) -> [Range<usize>; D] {
    std::array::from_fn(|a| b[a].start - origin[a]..b[a].end - origin[a])
}

/// Whether box `b` holds no point.
pub fn is_empty<const D: usize>(b: &[Range<usize>; D]) -> bool {
    b.iter().any(|r| r.is_empty())
}

/// `outer` less `inner` (a box inside it) as disjoint boxes ("onion peeling"): for each axis
/// in turn, the slab below and above `inner` with the earlier axes already narrowed to
/// `inner`. At most `2 D` boxes, some possibly empty (dropped).
pub fn peel<const D: usize>(
    outer: &[Range<usize>; D],
    inner: &[Range<usize>; D],
) -> Vec<[Range<usize>; D]> {
    let mut out = Vec::new();
    let mut rest = outer.clone();
    for a in 0..D {
        let mut low = rest.clone();
        low[a] = rest[a].start..inner[a].start;
        let mut high = rest.clone();
        high[a] = inner[a].end..rest[a].end;
        rest[a] = inner[a].clone();
        out.extend([low, high].into_iter().filter(|b| !is_empty(b)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uneven_splits_cover_the_axis_once_and_differ_by_at_most_one() {
        let d = Decomposition::new([10, 7], [3, 2], 1).unwrap();
        // 10 = 4 + 3 + 3, 7 = 4 + 3: by hand.
        assert_eq!(
            (0..3).map(|i| d.split(0, i)).collect::<Vec<_>>(),
            [0..4, 4..7, 7..10]
        );
        assert_eq!(
            (0..2).map(|i| d.split(1, i)).collect::<Vec<_>>(),
            [0..4, 4..7]
        );
        assert_eq!(d.coords(3), [1, 1]);
        assert_eq!(d.rank_at([2, 0]), 4);
        assert_eq!(d.owner([6, 3]), 2);
        assert_eq!(d.neighbour(2, 0, true), Some(4));
        assert_eq!(d.neighbour(2, 1, true), Some(3));
        assert_eq!(d.neighbour(2, 1, false), None);
    }

    #[test]
    fn wrong_count_and_thin_parts_are_errors_naming_the_fix() {
        let e = Decomposition::for_ranks([100, 100], [2, 2], 3, 2)
            .unwrap_err()
            .to_string();
        assert!(e.contains("4 parts") && e.contains("3 MPI ranks"), "{e}");
        let e = Decomposition::new([100, 9], [1, 5], 2)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("thinner than the halo width 2") && e.contains("at most 4 parts"),
            "{e}"
        );
        assert!(Decomposition::<2>::parse_parts("2x").is_err());
        assert_eq!(Decomposition::<3>::parse_parts("2x1x2"), Ok([2, 1, 2]));
    }

    #[test]
    fn balanced_cuts_the_fewest_points() {
        // 4 ranks on 100 x 400: cutting x four times costs 3 * 100 = 300 halo points per
        // side, 2x2 costs 400 + 100 = 500, cutting z four times 3 * 400 = 1200.
        assert_eq!(
            Decomposition::balanced([100, 400], 4, 2).unwrap().parts(),
            [1, 4]
        );
        assert_eq!(
            Decomposition::balanced([400, 400], 4, 2).unwrap().parts(),
            [2, 2]
        );
        assert_eq!(
            Decomposition::balanced([64, 64, 64], 8, 2).unwrap().parts(),
            [2, 2, 2]
        );
        // Ties go to the outer axes: whole planes or rows, contiguous faces.
        assert_eq!(
            Decomposition::balanced([300, 300, 300], 2, 4)
                .unwrap()
                .parts(),
            [2, 1, 1]
        );
        assert_eq!(
            Decomposition::balanced([40, 40, 40], 4, 2).unwrap().parts(),
            [2, 2, 1]
        );
        assert_eq!(
            Decomposition::balanced([400, 400], 2, 2).unwrap().parts(),
            [2, 1]
        );
        // 3 ranks on a grid only 5 wide in x: x parts of 1 point are refused.
        assert_eq!(
            Decomposition::balanced([300, 5], 3, 2).unwrap().parts(),
            [3, 1]
        );
        // 9 ranks on 5 x 5 with radius 2: 3x3 leaves parts of 1 point, 9x1 and 1x9 of 0.
        assert!(Decomposition::balanced([5, 5], 9, 2).is_err());
    }

    #[test]
    fn peeling_leaves_disjoint_boxes_covering_the_difference() {
        let outer = [0..6, 0..5];
        let inner = [2..4, 1..5];
        let boxes = peel(&outer, &inner);
        let mut hits = vec![0; 30];
        for b in boxes.iter().chain([&inner]) {
            for z in b[0].clone() {
                for x in b[1].clone() {
                    hits[z * 5 + x] += 1;
                }
            }
        }
        assert!(hits.iter().all(|&h| h == 1), "{hits:?}");
    }
}
