//! The N-body shape of fork_union's benchmark (`scripts/nbody.rs` there: gravity with a
//! fast reciprocal square root, then the integration): each step is two parallel regions,
//! the forces on every body (O(N^2)) and then the integration (O(N)), each participant
//! taking one contiguous block of bodies. The bodies are stored one array per coordinate
//! and the force loop keeps one sum per vector lane, so it runs on vector instructions.
//! Serial code, the pool and rayon run the same kernels on the same state, so their
//! results are equal bit for bit.

use std::cell::UnsafeCell;
use std::ops::Range;

const G: f32 = 6.674e-11;
const DT: f32 = 0.01;
/// Bodies per vector of the force loop; body counts are multiples of it.
const LANES: usize = 8;
const SOFTENING: f32 = 1.0e-9;

/// One Newton step of the classic fast inverse square root, as the original.
#[inline]
fn fast_rsqrt(x: f32) -> f32 {
    let y = f32::from_bits(0x5f37_59dfu32.wrapping_sub(x.to_bits() >> 1));
    y * (1.5 - 0.5 * x * y * y)
}

/// One coordinate (or the mass) of every body: plain `f32`s, which the compiler vectorises.
struct Column(Vec<UnsafeCell<f32>>);

impl Column {
    fn new(values: impl Iterator<Item = f32>) -> Column {
        Column(values.map(UnsafeCell::new).collect())
    }

    /// # Safety
    /// Nobody writes body `i` in this region.
    unsafe fn get(&self, i: usize) -> f32 {
        // SAFETY: the caller's promise.
        unsafe { *self.0[i].get() }
    }

    /// Every body's value, as a slice (the inner loop reads it whole).
    ///
    /// # Safety
    /// Nobody writes this column in this region.
    unsafe fn all(&self) -> &[f32] {
        // SAFETY: `UnsafeCell<f32>` has `f32`'s layout, and nothing writes the column while
        // the slice lives (the caller's promise).
        unsafe { std::slice::from_raw_parts(self.0.as_ptr().cast::<f32>(), self.0.len()) }
    }

    /// # Safety
    /// Only the owner of body `i`'s block writes it, and nobody reads it, in this region.
    unsafe fn set(&self, i: usize, value: f32) {
        // SAFETY: the caller's promise.
        unsafe { *self.0[i].get() = value }
    }
}

/// The bodies of one simulation, shared by the participants of a region.
///
/// # Safety
/// Within a region each participant writes only the bodies of its own block; the force
/// region writes forces and reads positions and masses, the integration region reads forces
/// and masses and writes positions and velocities; the dispatch between regions orders
/// every write before the next region's reads.
pub struct Bodies {
    position: [Column; 3],
    velocity: [Column; 3],
    force: [Column; 3],
    mass: Column,
}

// SAFETY: see the struct's `# Safety`.
unsafe impl Sync for Bodies {}

impl Bodies {
    /// `n` bodies at seeded pseudo-random places in the unit cube, at rest, with masses in
    /// [1e20, 1e25).
    pub fn new(n: usize) -> Bodies {
        assert_eq!(n % LANES, 0, "a multiple of {LANES} bodies");
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 40) as f32 / (1u64 << 24) as f32
        };
        let values: Vec<[f32; 4]> = (0..n)
            .map(|_| {
                [
                    next() * 2.0 - 1.0,
                    next() * 2.0 - 1.0,
                    next() * 2.0 - 1.0,
                    0.5 + next(),
                ]
            })
            .collect();
        let column = |k: usize| Column::new(values.iter().map(|v| v[k]));
        let zeros = || Column::new(std::iter::repeat_n(0.0, n));
        Bodies {
            position: [column(0), column(1), column(2)],
            velocity: [zeros(), zeros(), zeros()],
            force: [zeros(), zeros(), zeros()],
            mass: column(3),
        }
    }

    pub fn len(&self) -> usize {
        self.mass.0.len()
    }

    /// The bodies of block `block` of `blocks` (contiguous, sizes differing by at most one).
    pub fn block(&self, block: usize, blocks: usize) -> Range<usize> {
        let n = self.len();
        n * block / blocks..n * (block + 1) / blocks
    }

    /// Region one: the force on each body of `range`, from every other body.
    pub fn forces(&self, range: Range<usize>) {
        // SAFETY: positions and masses are not written in this region (struct `# Safety`).
        let (px, py, pz, m) = unsafe {
            let [x, y, z] = &self.position;
            (x.all(), y.all(), z.all(), self.mass.all())
        };
        for i in range {
            let me = [px[i], py[i], pz[i]];
            // One sum per lane, added up at the end: lane-wise arithmetic the compiler
            // turns into vector instructions, in the same order on every run.
            let mut f = [[0.0f32; LANES]; 3];
            let chunks = (px.chunks_exact(LANES).zip(py.chunks_exact(LANES)))
                .zip(pz.chunks_exact(LANES).zip(m.chunks_exact(LANES)));
            for ((x, y), (z, mass)) in chunks {
                for k in 0..LANES {
                    let d = [x[k] - me[0], y[k] - me[1], z[k] - me[2]];
                    let inv = fast_rsqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + SOFTENING);
                    let s = G * mass[k] * inv * inv * inv;
                    for a in 0..3 {
                        f[a][k] += d[a] * s;
                    }
                }
            }
            let f = f.map(|lanes| lanes.iter().sum::<f32>());
            for (a, value) in f.into_iter().enumerate() {
                // SAFETY: body i's force is written only by the owner of i's block, and
                // nobody reads forces in this region (struct `# Safety`).
                unsafe { self.force[a].set(i, value * m[i]) };
            }
        }
    }

    /// Region two: velocity and position of each body of `range`, from its force.
    pub fn integrate(&self, range: Range<usize>) {
        for i in range {
            for a in 0..3 {
                // SAFETY: body i is written only by the owner of its block, and nothing else
                // reads it in this region (struct `# Safety`).
                unsafe {
                    let v = self.velocity[a].get(i) + self.force[a].get(i) / self.mass.get(i) * DT;
                    self.velocity[a].set(i, v);
                    self.position[a].set(i, self.position[a].get(i) + v * DT);
                }
            }
        }
    }

    /// Every position and velocity, as bits: equal states compare equal.
    pub fn snapshot(&self) -> Vec<u32> {
        (0..self.len())
            .flat_map(|i| {
                // SAFETY: called between regions: nobody writes.
                [&self.position, &self.velocity]
                    .into_iter()
                    .flatten()
                    .map(move |c| unsafe { c.get(i) }.to_bits())
            })
            .collect()
    }
}
