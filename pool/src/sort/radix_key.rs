//! The keys a radix sort orders by: integers, floats and `char`, each mapped to unsigned
//! bits whose order as integers is the key's order (`f32`/`f64` by `total_cmp`).

/// A key [`par_radix_sort`](crate::slice::ParallelSliceMut::par_radix_sort) orders by: the
/// integers (`u8` to `u128`, `i8` to `i128`, `usize`, `isize`), `f32` and `f64` (in
/// [`f64::total_cmp`]'s order: `-NaN < -inf < .. < -0.0 < 0.0 < .. < inf < NaN`) and `char`.
/// Sealed: the sort reads a key as the unsigned integer of the same width whose order is
/// the key's.
///
/// ```
/// use rayforce_pool::prelude::*;
/// let mut xs = vec![2.5f64, -0.0, f64::NAN, -1.0, 0.0, f64::NEG_INFINITY];
/// xs.par_radix_sort();
/// let mut expected = xs.clone();
/// expected.sort_by(f64::total_cmp);
/// assert_eq!(
///     xs.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
///     expected.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
/// );
/// ```
pub trait RadixKey: Copy + sealed::Sealed {}

pub(crate) mod sealed {
    /// The key's bits, ordered as the key.
    pub trait Sealed {
        /// The unsigned integer of the key's width.
        type Bits: Bits;
        /// The bits whose order as an unsigned integer is the key's order.
        fn order_bits(self) -> Self::Bits;
    }

    /// The unsigned integers a key maps to, read a digit (a few bits) at a time.
    pub trait Bits: Copy + Eq + Ord + Send + Sync {
        /// The width in bits.
        const BITS: u32;
        /// No bit set.
        const ZERO: Self;
        /// `self ^ other`.
        fn xor(self, other: Self) -> Self;
        /// `self | other`.
        fn or(self, other: Self) -> Self;
        /// The index of the highest bit set, if any.
        fn highest_bit(self) -> Option<u32>;
        /// The bits from bit `shift` up, as many as a `usize` holds.
        fn bits_from(self, shift: u32) -> usize;
    }
}

/// How many bits a digit of a split or an in-cache pass has: 256 buckets.
pub(crate) const DIGIT_BITS: u32 = 8;
/// How many buckets a digit has.
pub(crate) const BUCKETS: usize = 1 << DIGIT_BITS;

macro_rules! unsigned_bits {
    ($($t:ty),*) => {$(
        impl sealed::Bits for $t {
            const BITS: u32 = <$t>::BITS;
            const ZERO: Self = 0;
            #[inline(always)]
            fn xor(self, other: Self) -> Self {
                self ^ other
            }
            #[inline(always)]
            fn or(self, other: Self) -> Self {
                self | other
            }
            #[inline(always)]
            fn highest_bit(self) -> Option<u32> {
                self.checked_ilog2()
            }
            #[inline(always)]
            fn bits_from(self, shift: u32) -> usize {
                (self >> shift) as usize
            }
        }
    )*};
}

unsigned_bits!(u8, u16, u32, u64, u128);

/// Each key type: its bits' type, and the bits of key `x` in its order.
macro_rules! radix_keys {
    ($($t:ty => $bits:ty, |$x:ident| $order:expr;)*) => {$(
        impl RadixKey for $t {}
        impl sealed::Sealed for $t {
            type Bits = $bits;
            #[inline(always)]
            fn order_bits(self) -> $bits {
                let $x = self;
                $order
            }
        }
    )*};
}

// Unsigned integers are their bits; signed ones have the sign bit flipped (negatives
// first); floats, in `total_cmp`'s order, have every bit flipped if negative, else the
// sign bit set.
radix_keys! {
    u8 => u8, |x| x;
    u16 => u16, |x| x;
    u32 => u32, |x| x;
    u64 => u64, |x| x;
    u128 => u128, |x| x;
    usize => usize, |x| x;
    i8 => u8, |x| x as u8 ^ 1 << 7;
    i16 => u16, |x| x as u16 ^ 1 << 15;
    i32 => u32, |x| x as u32 ^ 1 << 31;
    i64 => u64, |x| x as u64 ^ 1 << 63;
    i128 => u128, |x| x as u128 ^ 1 << 127;
    isize => usize, |x| x as usize ^ 1 << (usize::BITS - 1);
    f32 => u32, |x| if x.is_sign_negative() { !x.to_bits() } else { x.to_bits() | 1 << 31 };
    f64 => u64, |x| if x.is_sign_negative() { !x.to_bits() } else { x.to_bits() | 1 << 63 };
    char => u32, |x| u32::from(x);
}

unsigned_bits!(usize);
