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
pub trait RadixKey: Copy + Send + Sync + sealed::Sealed {}

pub(crate) mod sealed {
    /// The key's bits, ordered as the key.
    pub trait Sealed {
        /// The unsigned integer of the key's width.
        type Bits: Bits;
        /// The bits whose order as an unsigned integer is the key's order.
        fn order_bits(self) -> Self::Bits;
        /// The key whose [`order_bits`](Self::order_bits) are `bits`. Every key maps to
        /// bits one to one, so two keys with equal bits are the same key.
        fn from_order_bits(bits: Self::Bits) -> Self;
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
        /// `self - other`, wrapping around.
        fn wrapping_sub(self, other: Self) -> Self;
        /// `self - other`, or zero.
        fn saturating_sub(self, other: Self) -> Self;
        /// `self + other`, or the highest value.
        fn saturating_add(self, other: Self) -> Self;
        /// `self` as a `usize`, if it fits.
        fn to_usize(self) -> Option<usize>;
        /// `low` as these bits (`low` fits in them).
        fn from_low(low: usize) -> Self;
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
            #[inline(always)]
            fn wrapping_sub(self, other: Self) -> Self {
                self.wrapping_sub(other)
            }
            #[inline(always)]
            fn saturating_sub(self, other: Self) -> Self {
                self.saturating_sub(other)
            }
            #[inline(always)]
            fn saturating_add(self, other: Self) -> Self {
                self.saturating_add(other)
            }
            #[inline(always)]
            fn to_usize(self) -> Option<usize> {
                usize::try_from(self).ok()
            }
            #[inline(always)]
            fn from_low(low: usize) -> Self {
                low as Self
            }
        }
    )*};
}

unsigned_bits!(u8, u16, u32, u64, u128);

/// Each key type: its bits' type, and the bits of key `x` in its order.
macro_rules! radix_keys {
    ($($t:ty => $bits:ty, |$x:ident| $order:expr, |$b:ident| $key:expr;)*) => {$(
        impl RadixKey for $t {}
        impl sealed::Sealed for $t {
            type Bits = $bits;
            #[inline(always)]
            fn order_bits(self) -> $bits {
                let $x = self;
                $order
            }
            #[inline(always)]
            fn from_order_bits($b: $bits) -> $t {
                $key
            }
        }
    )*};
}

// Unsigned integers are their bits; signed ones have the sign bit flipped (negatives
// first); floats, in `total_cmp`'s order, have every bit flipped if negative, else the
// sign bit set. Each second closure undoes its first.
radix_keys! {
    u8 => u8, |x| x, |b| b;
    u16 => u16, |x| x, |b| b;
    u32 => u32, |x| x, |b| b;
    u64 => u64, |x| x, |b| b;
    u128 => u128, |x| x, |b| b;
    usize => usize, |x| x, |b| b;
    i8 => u8, |x| x as u8 ^ 1 << 7, |b| (b ^ 1 << 7) as i8;
    i16 => u16, |x| x as u16 ^ 1 << 15, |b| (b ^ 1 << 15) as i16;
    i32 => u32, |x| x as u32 ^ 1 << 31, |b| (b ^ 1 << 31) as i32;
    i64 => u64, |x| x as u64 ^ 1 << 63, |b| (b ^ 1 << 63) as i64;
    i128 => u128, |x| x as u128 ^ 1 << 127, |b| (b ^ 1 << 127) as i128;
    isize => usize, |x| x as usize ^ 1 << (usize::BITS - 1), |b| (b ^ 1 << (usize::BITS - 1)) as isize;
    f32 => u32,
        |x| if x.is_sign_negative() { !x.to_bits() } else { x.to_bits() | 1 << 31 },
        |b| f32::from_bits(if b >> 31 == 1 { b ^ 1 << 31 } else { !b });
    f64 => u64,
        |x| if x.is_sign_negative() { !x.to_bits() } else { x.to_bits() | 1 << 63 },
        |b| f64::from_bits(if b >> 63 == 1 { b ^ 1 << 63 } else { !b });
    char => u32, |x| u32::from(x),
        |b| char::from_u32(b).expect("par_radix_sort: a char's bits are a char");
}

unsigned_bits!(usize);
