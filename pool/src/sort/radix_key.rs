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

#[cfg(test)]
mod tests {
    use super::sealed::Sealed;

    /// Whether `from_order_bits` gives back each of `keys`, bit for bit (`same`).
    fn round_trips<K: Sealed + std::fmt::Debug + Copy>(
        keys: impl IntoIterator<Item = K>,
        same: impl Fn(&K, &K) -> bool,
    ) {
        for key in keys {
            let back = K::from_order_bits(key.order_bits());
            assert!(same(&back, &key), "{key:?} came back as {back:?}");
        }
    }

    #[test]
    fn every_key_is_remade_from_its_order_bits() {
        round_trips(0..=u8::MAX, u8::eq);
        round_trips(i8::MIN..=i8::MAX, i8::eq);
        round_trips(0..=u16::MAX, u16::eq);
        round_trips(i16::MIN..=i16::MAX, i16::eq);
        macro_rules! ends {
            ($($t:ty),*) => {$(
                round_trips(
                    [<$t>::MIN, <$t>::MIN + 1, <$t>::MAX / 3, <$t>::MAX - 1, <$t>::MAX],
                    <$t>::eq,
                );
            )*};
        }
        ends!(u32, u64, u128, usize);
        ends!(i32, i64, i128, isize);
        round_trips([-1i32, 0, 1], i32::eq);
        round_trips([-1i64, 0, 1], i64::eq);
        let f32s = [
            0.0f32,
            -0.0,
            1.5,
            -1.5,
            f32::MIN_POSITIVE,
            f32::INFINITY,
            f32::NEG_INFINITY,
        ];
        let f32_nans = [
            0x7FC0_0000u32,
            0xFFC0_0000,
            0x7F80_0001,
            0xFFFF_FFFF,
            0x7FFF_FFFF,
        ];
        let f32_bits = f32s.map(f32::to_bits).into_iter().chain(f32_nans);
        round_trips(f32_bits.map(f32::from_bits), |a, b| {
            a.to_bits() == b.to_bits()
        });
        let f64s = [
            0.0f64,
            -0.0,
            2.5,
            -2.5,
            f64::MIN_POSITIVE,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ];
        let f64_nans = [
            0x7FF8_0000_0000_0000u64,
            0xFFF8_0000_0000_0000,
            0x7FF0_0000_0000_0001,
        ];
        let f64_bits = f64s
            .map(f64::to_bits)
            .into_iter()
            .chain(f64_nans)
            .chain([u64::MAX]);
        round_trips(f64_bits.map(f64::from_bits), |a, b| {
            a.to_bits() == b.to_bits()
        });
        round_trips(['\0', 'a', '\u{D7FF}', '\u{E000}', char::MAX], char::eq);
    }
}
