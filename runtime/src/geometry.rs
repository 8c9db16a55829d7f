//! The geometry every layer shares: the box a launch computes ([`Region`]) and its rows
//! ([`RowAt`]), where a field lies in the grid ([`Window`]), shapes in messages ([`Shape`])
//! and the axes of a stencil of one to three dimensions. A leaf: it imports nothing of
//! the crate, so the launch layer and the execution spaces both build on it.

use std::ops::Range;

/// The box of points a launch computes, on a field of shape `[nz, ny, nx]` (row-major, x
/// contiguous; absent axes have size 1: a 2D field is `[nz, 1, nx]`, a 1D field `[1, 1, n]`):
/// indices `lo[a]..hi[a]` along each axis `a` (0 = z, 1 = y, 2 = x).
///
/// Host kernels iterate over *rows*: a row is one `(z, y)` pair, numbered `z * ny + y`, and
/// holds `nx` contiguous points.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Region {
    /// The field shape, `[nz, ny, nx]`.
    pub shape: [usize; 3],
    /// First index computed along each axis.
    pub lo: [usize; 3],
    /// One past the last index computed along each axis.
    pub hi: [usize; 3],
}

impl Region {
    /// Number of points computed.
    pub fn points(&self) -> usize {
        (0..3).map(|a| self.hi[a] - self.lo[a]).product()
    }

    /// Points per row of the field, `nx`.
    pub fn nx(&self) -> usize {
        self.shape[2]
    }

    /// Points per z-plane of the field, `ny * nx` (`nx` in 2D).
    pub fn plane(&self) -> usize {
        self.shape[1] * self.shape[2]
    }

    /// Row number `row` (`z * ny + y`) as its plane and row indices.
    #[inline(always)]
    pub fn row_at(&self, row: usize) -> RowAt {
        let ny = self.shape[1];
        RowAt {
            z: row / ny,
            y: row % ny,
        }
    }

    /// The columns (x indices) computed in every row.
    pub fn cols(&self) -> std::ops::Range<usize> {
        self.lo[2]..self.hi[2]
    }

    /// Number of rows (`(z, y)` pairs) computed.
    pub fn rows(&self) -> usize {
        (self.hi[0] - self.lo[0]) * (self.hi[1] - self.lo[1])
    }
}

/// One row of a grid, `(z, y)`: what a generated row kernel computes (rows are numbered
/// `z * ny + y`; [`Region::row_at`] converts, [`RowAt::next`] steps to the following row
/// without a division).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RowAt {
    /// The row's plane (z index; the row index of a 2D grid).
    pub z: usize,
    /// The row's index along y (0 in 1D and 2D).
    pub y: usize,
}

impl RowAt {
    /// The next row of `grid` in numbering order.
    #[inline(always)]
    pub fn next(self, grid: &Region) -> RowAt {
        if self.y + 1 >= grid.shape[1] {
            RowAt {
                z: self.z + 1,
                y: 0,
            }
        } else {
            RowAt {
                z: self.z,
                y: self.y + 1,
            }
        }
    }
}

/// Where one field's storage lies in the grid of a launch, in the runtime's `[z, y, x]` form:
/// the box `origin[a]..origin[a] + shape[a]` along each axis, stored row-major (x
/// contiguous). A field covering the whole grid is [`Window::full`]; a window
/// ([`ScalarField::with_origin`](crate::ScalarField::with_origin)) covers a part. Generated
/// kernels index every field through its window, so the fields of one launch may have
/// different shapes.
///
/// ```
/// use ppstencil::launch::{Region, Window};
/// let grid = Region { shape: [8, 1, 100], lo: [2, 0, 90], hi: [6, 1, 98] };
/// let right = Window { origin: [0, 0, 88], shape: [8, 1, 12] };
/// assert_eq!(right.index(3, 0, 90), 3 * 12 + 2);
/// // Row 3's first computed point, and its neighbour two columns left.
/// assert_eq!(right.tap(&grid, grid.row_at(3), [0, 0, -2]), 3 * 12);
/// assert_eq!(right.rows(&grid, 2..6), 2 * 12..6 * 12);
/// assert_eq!(right.cols(&grid), 2..10);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    /// The grid point of the field's element 0.
    pub origin: [usize; 3],
    /// The field's shape, `[nz, ny, nx]` (absent axes 1).
    pub shape: [usize; 3],
}

impl Window {
    /// A field covering the whole grid of `shape`.
    pub fn full(shape: [usize; 3]) -> Window {
        Window {
            origin: [0; 3],
            shape,
        }
    }

    /// Points per row of the field.
    #[inline(always)]
    pub fn nx(&self) -> usize {
        self.shape[2]
    }

    /// Points per z-plane of the field.
    #[inline(always)]
    pub fn plane(&self) -> usize {
        self.shape[1] * self.shape[2]
    }

    /// Number of points of the field.
    pub fn len(&self) -> usize {
        self.shape.iter().product()
    }

    /// Whether the field has no points (never for a field; for completeness).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The position in the field's storage of grid point `(z, y, x)`, which must lie in the
    /// window.
    #[inline(always)]
    pub fn index(&self, z: usize, y: usize, x: usize) -> usize {
        let [oz, oy, ox] = self.origin;
        ((z - oz) * self.shape[1] + (y - oy)) * self.shape[2] + (x - ox)
    }

    /// The position in the field's storage of the point at offset `off` (`[dz, dy, dx]`)
    /// from the first point `grid` computes in row `row`: where a generated row kernel
    /// slices the tap `off` of this field. The launch checked that the point lies in the
    /// window; were it not, the result is out of the field's range and the kernel's slicing
    /// panics rather than reading another point.
    #[inline(always)]
    pub fn tap(&self, grid: &Region, row: RowAt, off: [isize; 3]) -> usize {
        let at = |i: usize, d: isize, o: usize| i.wrapping_add_signed(d).wrapping_sub(o);
        let z = at(row.z, off[0], self.origin[0]);
        let y = at(row.y, off[1], self.origin[1]);
        let x = at(grid.lo[2], off[2], self.origin[2]);
        z.wrapping_mul(self.shape[1])
            .wrapping_add(y)
            .wrapping_mul(self.shape[2])
            .wrapping_add(x)
    }

    /// The position in a profile's storage (a field of shape 1 along every axis but `axis`,
    /// `0 = z, 1 = y, 2 = x`) of its element at offset `off` along `axis` from the first
    /// point `grid` computes in row `row`: where a generated row kernel slices (along x) or
    /// reads (along z or y) the tap of a profile (`a: in(x)`). As with [`tap`](Self::tap),
    /// a point outside the window gives an index out of the field's range.
    #[inline(always)]
    pub fn profile(&self, grid: &Region, row: RowAt, axis: usize, off: isize) -> usize {
        let at = [row.z, row.y, grid.lo[2]][axis];
        at.wrapping_add_signed(off).wrapping_sub(self.origin[axis])
    }

    /// The storage of the consecutive grid rows `rows` (numbered `z * ny + y`, all inside
    /// `grid`'s box and the window): whole rows of the field, contiguous, since a run of
    /// rows either stays in one plane or covers whole planes of the grid (then the window
    /// spans them whole too).
    #[inline(always)]
    pub fn rows(&self, grid: &Region, rows: Range<usize>) -> Range<usize> {
        let ny = grid.shape[1];
        let first = self.index(rows.start / ny, rows.start % ny, self.origin[2]);
        first..first + rows.len() * self.nx()
    }

    /// [`rows`](Self::rows), counted from the start of the grid's z-plane `z_first` (the
    /// part of the field a rayon task was handed: [`planes`](Self::planes) from `z_first`).
    #[inline(always)]
    pub fn rows_from(&self, grid: &Region, rows: Range<usize>, z_first: usize) -> Range<usize> {
        let r = self.rows(grid, rows);
        let skip = (z_first - self.origin[0]) * self.plane();
        r.start - skip..r.end - skip
    }

    /// The storage of the grid's z-planes `zs` (inside the window).
    #[inline(always)]
    pub fn planes(&self, zs: Range<usize>) -> Range<usize> {
        (zs.start - self.origin[0]) * self.plane()..(zs.end - self.origin[0]) * self.plane()
    }

    /// The columns `grid` computes, as positions in one row of the field.
    #[inline(always)]
    pub fn cols(&self, grid: &Region) -> Range<usize> {
        grid.lo[2] - self.origin[2]..grid.hi[2] - self.origin[2]
    }

    /// Whether the window holds every point of the box `lo..hi` (per axis, `[z, y, x]`).
    pub fn holds(&self, lo: [usize; 3], hi: [usize; 3]) -> bool {
        (0..3).any(|a| lo[a] >= hi[a])
            || (0..3).all(|a| self.origin[a] <= lo[a] && hi[a] <= self.origin[a] + self.shape[a])
    }
}

/// The names of the axes 0, 1, 2 in messages (kernels-gen's `ir::AXIS_NAMES`).
pub(crate) const AXIS_NAMES: [&str; 3] = ["z", "y", "x"];

/// The axes (0 = z, 1 = y, 2 = x) of a `dims`-dimensional stencil, outermost first: 1D `[x]`,
/// 2D `[z, x]`, 3D `[z, y, x]` (kernels-gen's `ir::axes`).
pub fn axes(dims: usize) -> &'static [usize] {
    match dims {
        1 => &[2],
        2 => &[0, 2],
        _ => &[0, 1, 2],
    }
}

/// A field or grid shape of one to three axes, outermost first, shown as `400 x 600`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shape(pub Vec<usize>);

impl Shape {
    /// The axes of a `dims`-dimensional stencil taken from an `[nz, ny, nx]` triple.
    pub fn of(dims: usize, zyx: [usize; 3]) -> Shape {
        Shape(axes(dims).iter().map(|&a| zyx[a]).collect())
    }
}

impl Shape {
    /// A point or shape as a tuple: `(3, 4)`.
    pub fn tuple(v: &[usize]) -> String {
        let parts: Vec<String> = v.iter().map(|n| n.to_string()).collect();
        format!("({})", parts.join(", "))
    }

    /// The valid index ranges at distance `radius` from every border, named by axis:
    /// `rows 2..8, columns 2..10` in 2D, `planes .., rows .., columns ..` in 3D, `points ..`
    /// in 1D.
    pub fn ranges(&self, radius: usize) -> String {
        axis_words(self.0.len())
            .iter()
            .zip(&self.0)
            .map(|(name, &n)| format!("{name} {radius}..{}", n.saturating_sub(radius)))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

impl std::fmt::Display for Shape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let parts: Vec<String> = self.0.iter().map(|n| n.to_string()).collect();
        f.write_str(&parts.join(" x "))
    }
}

/// What the axes of a `dims`-dimensional field are called in messages, outermost first.
pub fn axis_words(dims: usize) -> &'static [&'static str] {
    match dims {
        1 => &["points"],
        2 => &["rows", "columns"],
        _ => &["planes", "rows", "columns"],
    }
}
