//! Allocation-free unsigned integers: decimal or `0x` hex, the whole input consumed, no
//! sign, no octal, no wrap-around. Shared by the sysfs reader and the tunables parser.

/// Why bytes are not an unsigned integer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NumberError {
    /// Nothing to parse (or only `0x`).
    Empty,
    /// A byte that is not a digit of the base, at this offset.
    InvalidDigit(usize),
    /// The value does not fit in `u64`.
    Overflow,
}

/// Parses `bytes` as decimal, or hex after `0x`/`0X`. Leading zeros are decimal, not octal.
pub(crate) fn parse_u64(bytes: &[u8]) -> Result<u64, NumberError> {
    let (digits, radix, skipped) = match bytes {
        [b'0', b'x' | b'X', rest @ ..] => (rest, 16, 2),
        _ => (bytes, 10, 0),
    };
    if digits.is_empty() {
        return Err(NumberError::Empty);
    }
    let mut value: u64 = 0;
    for (i, &byte) in digits.iter().enumerate() {
        let digit = (byte as char)
            .to_digit(radix)
            .ok_or(NumberError::InvalidDigit(skipped + i))?;
        value = value
            .checked_mul(u64::from(radix))
            .and_then(|v| v.checked_add(u64::from(digit)))
            .ok_or(NumberError::Overflow)?;
    }
    Ok(value)
}

/// Strips spaces, tabs, newlines and NUL bytes from both ends (sysfs lists may end in NUL).
pub(crate) fn trim(bytes: &[u8]) -> &[u8] {
    &bytes[trimmed_range(bytes)]
}

/// The range of `bytes` that [`trim`] keeps, for callers that report offsets.
pub(crate) fn trimmed_range(bytes: &[u8]) -> core::ops::Range<usize> {
    let is_pad = |b: &u8| matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0);
    let start = bytes.iter().position(|b| !is_pad(b)).unwrap_or(bytes.len());
    let end = bytes
        .iter()
        .rposition(|b| !is_pad(b))
        .map_or(start, |i| i + 1);
    start..end
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_and_hex() {
        assert_eq!(parse_u64(b"0"), Ok(0));
        assert_eq!(parse_u64(b"010"), Ok(10), "leading zero is not octal");
        assert_eq!(parse_u64(b"0x10"), Ok(16));
        assert_eq!(parse_u64(b"0XfF"), Ok(255));
        assert_eq!(parse_u64(b"18446744073709551615"), Ok(u64::MAX));
    }

    #[test]
    fn rejects_sign_garbage_and_overflow() {
        assert_eq!(parse_u64(b""), Err(NumberError::Empty));
        assert_eq!(parse_u64(b"0x"), Err(NumberError::Empty));
        assert_eq!(parse_u64(b"-1"), Err(NumberError::InvalidDigit(0)));
        assert_eq!(parse_u64(b"+1"), Err(NumberError::InvalidDigit(0)));
        assert_eq!(parse_u64(b"4abc"), Err(NumberError::InvalidDigit(1)));
        assert_eq!(parse_u64(b"0x1g"), Err(NumberError::InvalidDigit(3)));
        assert_eq!(
            parse_u64(b"18446744073709551616"),
            Err(NumberError::Overflow)
        );
        assert_eq!(parse_u64(&[b'9'; 10_000]), Err(NumberError::Overflow));
    }

    #[test]
    fn trims_padding_and_nul() {
        assert_eq!(trim(b" 7 \n\0"), b"7");
        assert_eq!(trim(b"\0\0"), b"");
        assert_eq!(trim(b"a b"), b"a b");
    }
}
