//! Strict mode (`rayforce.tunables.strict=1`) in a running program: any diagnostic stops it,
//! after every diagnostic is written to standard error. This runs inside the global
//! allocator's first call, so it never allocates: each line is formatted into a fixed stack
//! buffer and written with `libc::write`, then the process aborts.

use crate::Tunables;
use core::fmt::{self, Write};

/// Longest line written; a longer one is cut and ends in `...`.
const LINE_BYTES: usize = 512;

/// A line being formatted in a stack buffer; what does not fit is dropped and marked.
struct Line {
    bytes: [u8; LINE_BYTES],
    len: usize,
    cut: bool,
}

impl Line {
    fn new() -> Line {
        Line {
            bytes: [0; LINE_BYTES],
            len: 0,
            cut: false,
        }
    }

    /// The line with its newline (and `...` if it was cut).
    fn finish(&mut self) -> &[u8] {
        let tail: &[u8] = if self.cut { b"...\n" } else { b"\n" };
        let end = self.len.min(LINE_BYTES - tail.len());
        self.bytes[end..end + tail.len()].copy_from_slice(tail);
        &self.bytes[..end + tail.len()]
    }
}

impl Write for Line {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let room = LINE_BYTES - self.len;
        let take = s.len().min(room);
        self.bytes[self.len..self.len + take].copy_from_slice(&s.as_bytes()[..take]);
        self.len += take;
        self.cut |= take < s.len();
        Ok(())
    }
}

/// Writes all of `bytes` to file descriptor `fd`, retrying short writes and EINTR.
fn write_all(fd: libc::c_int, mut bytes: &[u8]) {
    while !bytes.is_empty() {
        // SAFETY: `bytes` is valid for reads of its length for the whole call.
        let n = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
        if n > 0 {
            bytes = &bytes[n as usize..];
        } else if n < 0 && std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted
        {
            return; // nowhere to report to: the abort still follows
        }
    }
}

/// Writes one line per diagnostic, then the strict-mode line, to `fd`, without allocating.
pub fn write_report(tunables: &Tunables, fd: libc::c_int) {
    let diagnostics = tunables.diagnostics();
    for diagnostic in diagnostics.iter() {
        let mut line = Line::new();
        let _ = write!(line, "rayforce: {diagnostic}");
        write_all(fd, line.finish());
    }
    let mut line = Line::new();
    let _ = write!(
        line,
        "rayforce: {}; aborting",
        crate::StrictError {
            diagnostics: diagnostics.len() + diagnostics.dropped(),
        }
    );
    write_all(fd, line.finish());
}

impl Tunables {
    /// In strict mode with any diagnostic, writes every diagnostic and the strict-mode line
    /// to standard error and aborts the process; otherwise, or when the program chose
    /// [`Choices::strict_aborts(false)`](crate::Choices::strict_aborts), does nothing. Never
    /// allocates: the allocator calls it on its first allocation.
    pub fn abort_if_strict(&self) {
        if self.strict_aborts() && self.check_strict().is_err() {
            write_report(self, 2);
            std::process::abort();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_lines_are_cut_and_marked() {
        let mut line = Line::new();
        let _ = line.write_str(&"x".repeat(2 * LINE_BYTES));
        let out = line.finish();
        assert_eq!(out.len(), LINE_BYTES);
        assert!(out.ends_with(b"...\n"));
        let mut short = Line::new();
        let _ = short.write_str("entry");
        assert_eq!(short.finish(), b"entry\n");
    }
}
