//! Allocation-free file access for the CPU reading: paths built in stack buffers, files read
//! with libc `open`/`read`, directories listed with `getdents64`.
//!
//! The reading runs inside the global allocator's first call, so nothing here may allocate:
//! no `std::fs`, no `PathBuf`, no `opendir` (glibc's `opendir` calls `malloc`).

use core::ffi::CStr;

/// Longest path we build, terminating NUL included (Linux `PATH_MAX`).
const PATH_CAPACITY: usize = 4096;

/// A NUL-terminated path in a stack buffer. A path that would not fit is remembered as
/// overflowed and then behaves like a file that does not exist.
pub(crate) struct StackPath {
    bytes: [u8; PATH_CAPACITY],
    len: usize,
    overflowed: bool,
}

impl StackPath {
    /// A path starting with `root` (no trailing slash needed; `b""` means `/`).
    pub(crate) fn new(root: &[u8]) -> Self {
        let mut path = Self {
            bytes: [0; PATH_CAPACITY],
            len: 0,
            overflowed: false,
        };
        path.push(root.strip_suffix(b"/").unwrap_or(root));
        path
    }

    /// Appends raw bytes (callers add their own `/`). A NUL byte makes the path invalid.
    pub(crate) fn push(&mut self, part: &[u8]) -> &mut Self {
        if self.len + part.len() >= PATH_CAPACITY || part.contains(&0) {
            self.overflowed = true;
        } else {
            self.bytes[self.len..self.len + part.len()].copy_from_slice(part);
            self.len += part.len();
        }
        self
    }

    /// Appends a decimal number.
    pub(crate) fn push_number(&mut self, mut n: usize) -> &mut Self {
        let mut digits = [0u8; 20];
        let mut start = digits.len();
        loop {
            start -= 1;
            digits[start] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        self.push(&digits[start..])
    }

    /// Current length, to [`truncate`](Self::truncate) back to.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Cuts the path back to `len` bytes (a length from [`len`](Self::len)).
    pub(crate) fn truncate(&mut self, len: usize) {
        if len <= self.len {
            self.len = len;
            self.overflowed = false;
        }
    }

    /// The path without its NUL, for messages and prefix checks.
    pub(crate) fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len]
    }

    fn as_c_str(&mut self) -> Option<&CStr> {
        if self.overflowed {
            return None;
        }
        self.bytes[self.len] = 0;
        CStr::from_bytes_with_nul(&self.bytes[..=self.len]).ok()
    }
}

/// An open file descriptor, closed on drop.
struct Fd(libc::c_int);

impl Fd {
    /// Opens a regular file, or a directory with `O_DIRECTORY`. Anything else counts as
    /// missing: `O_NONBLOCK` keeps a named pipe from blocking the open, and the type check
    /// keeps a pipe or a device (which may never reach end of file) from being read.
    fn open(path: &mut StackPath, flags: libc::c_int) -> Option<Fd> {
        let c_path = path.as_c_str()?;
        // SAFETY: `c_path` is a valid NUL-terminated string that outlives the call.
        let fd = unsafe {
            libc::open(
                c_path.as_ptr(),
                flags | libc::O_CLOEXEC | libc::O_NONBLOCK | libc::O_NOCTTY,
            )
        };
        if fd < 0 {
            return None;
        }
        let fd = Fd(fd);
        let wanted = if flags & libc::O_DIRECTORY != 0 {
            libc::S_IFDIR
        } else {
            libc::S_IFREG
        };
        (fd.file_type()? == wanted).then_some(fd)
    }

    /// The `S_IFMT` bits of the open file's mode.
    fn file_type(&self) -> Option<libc::mode_t> {
        // SAFETY: `stat` is plain data; fstat fills it for our open descriptor.
        let mut stat: libc::stat = unsafe { core::mem::zeroed() };
        // SAFETY: `stat` is valid for writes; `self.0` is open.
        let ok = unsafe { libc::fstat(self.0, &mut stat) } == 0;
        ok.then_some(stat.st_mode & libc::S_IFMT)
    }

    /// Reads into `buf`, retrying on EINTR; `None` on error, `Some(0)` at end of file.
    fn read(&self, buf: &mut [u8]) -> Option<usize> {
        loop {
            // SAFETY: `buf` is valid for writes of `buf.len()` bytes for the whole call.
            let n = unsafe { libc::read(self.0, buf.as_mut_ptr().cast(), buf.len()) };
            if n >= 0 {
                return Some(n as usize);
            }
            if std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
                return None;
            }
        }
    }
}

impl Drop for Fd {
    fn drop(&mut self) {
        // SAFETY: we own this descriptor and close it exactly once.
        unsafe { libc::close(self.0) };
    }
}

/// Reads a whole small file into `buf` and returns its contents.
///
/// `None` when the file is missing, unreadable, or larger than `buf` (a truncated CPU
/// list would be silently wrong, so it counts as unreadable and the caller falls back).
pub(crate) fn read_file<'b>(path: &mut StackPath, buf: &'b mut [u8]) -> Option<&'b [u8]> {
    let fd = Fd::open(path, libc::O_RDONLY)?;
    let mut filled = 0;
    loop {
        if filled == buf.len() {
            let mut probe = [0u8; 1];
            return match fd.read(&mut probe)? {
                0 => Some(&buf[..filled]),
                _ => None,
            };
        }
        match fd.read(&mut buf[filled..])? {
            0 => return Some(&buf[..filled]),
            n => filled += n,
        }
    }
}

/// Calls `visit` with each line of the file at `path`, read through `buf` in chunks.
/// Lines longer than `buf` are skipped. Returns `false` when the file cannot be opened.
pub(crate) fn for_each_line(
    path: &mut StackPath,
    buf: &mut [u8],
    mut visit: impl FnMut(&[u8]),
) -> bool {
    let Some(fd) = Fd::open(path, libc::O_RDONLY) else {
        return false;
    };
    let mut kept = 0; // bytes of an unfinished line at the start of `buf`
    let mut skipping = false; // inside a line too long for `buf`
    loop {
        let Some(n) = fd.read(&mut buf[kept..]) else {
            return true;
        };
        let end = kept + n;
        if n == 0 {
            if kept > 0 && !skipping {
                visit(&buf[..kept]);
            }
            return true;
        }
        let mut line_start = 0;
        while let Some(nl) = buf[line_start..end].iter().position(|&b| b == b'\n') {
            if !skipping {
                visit(&buf[line_start..line_start + nl]);
            }
            skipping = false;
            line_start += nl + 1;
        }
        if line_start == 0 && end == buf.len() {
            skipping = true;
            kept = 0;
        } else {
            buf.copy_within(line_start..end, 0);
            kept = end - line_start;
        }
    }
}

/// Calls `visit` with the name of each entry of the directory at `path`.
/// Returns `false` when the directory cannot be opened.
#[cfg(target_os = "linux")]
pub(crate) fn for_each_dir_entry(path: &mut StackPath, mut visit: impl FnMut(&[u8])) -> bool {
    let Some(fd) = Fd::open(path, libc::O_RDONLY | libc::O_DIRECTORY) else {
        return false;
    };
    // `linux_dirent64` records need 8-byte alignment.
    #[repr(C, align(8))]
    struct Buf([u8; 4096]);
    let mut buf = Buf([0; 4096]);
    loop {
        // SAFETY: getdents64 writes at most `buf.0.len()` bytes into the buffer we own.
        let n =
            unsafe { libc::syscall(libc::SYS_getdents64, fd.0, buf.0.as_mut_ptr(), buf.0.len()) };
        if n <= 0 {
            return true;
        }
        let mut at = 0;
        while at < n as usize {
            // Record layout: d_ino u64, d_off i64, d_reclen u16, d_type u8, d_name[].
            let reclen = usize::from(u16::from_ne_bytes([buf.0[at + 16], buf.0[at + 17]]));
            if reclen == 0 || at + reclen > n as usize {
                return true;
            }
            let name = &buf.0[at + 19..at + reclen];
            let name_len = name.iter().position(|&b| b == 0).unwrap_or(name.len());
            visit(&name[..name_len]);
            at += reclen;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::ffi::OsStrExt;

    #[test]
    fn reads_files_lines_and_directories() {
        let dir = tempfile::tempdir().unwrap();
        let long_line = "x".repeat(100);
        let contents = format!("a\n{long_line}\nb\nlast");
        std::fs::write(dir.path().join("f"), &contents).unwrap();
        let root = dir.path().as_os_str().as_bytes();

        let mut path = StackPath::new(root);
        path.push(b"/f");
        let mut buf = [0u8; 256];
        assert_eq!(
            read_file(&mut path, &mut buf).map(|b| b.len()),
            Some(contents.len())
        );
        let mut small = [0u8; 16];
        assert_eq!(
            read_file(&mut path, &mut small),
            None,
            "too large counts as unreadable"
        );

        let mut lines = Vec::new();
        assert!(for_each_line(&mut path, &mut small, |l| lines.push(l.to_vec())));
        assert_eq!(lines, [b"a".to_vec(), b"b".to_vec(), b"last".to_vec()]);

        let mut names = Vec::new();
        let mut dir_path = StackPath::new(root);
        assert!(for_each_dir_entry(&mut dir_path, |n| names.push(n.to_vec())));
        assert!(names.contains(&b"f".to_vec()));

        let mut missing = StackPath::new(root);
        missing.push(b"/nope");
        assert_eq!(read_file(&mut missing, &mut buf), None);
        let fifo = dir.path().join("fifo");
        let c_fifo = std::ffi::CString::new(fifo.as_os_str().as_bytes()).unwrap();
        // SAFETY: a valid path string; creates a named pipe in our temporary directory.
        assert_eq!(unsafe { libc::mkfifo(c_fifo.as_ptr(), 0o600) }, 0);
        let mut pipe = StackPath::new(root);
        pipe.push(b"/fifo");
        assert_eq!(
            read_file(&mut pipe, &mut buf),
            None,
            "a named pipe is not read (nor waited on)"
        );
        assert!(!for_each_line(&mut pipe, &mut buf, |_| ()));
        let mut device = StackPath::new(b"/dev/zero");
        assert_eq!(read_file(&mut device, &mut buf), None, "nor a device");
        let mut file_as_dir = StackPath::new(root);
        file_as_dir.push(b"/f");
        assert!(!for_each_dir_entry(&mut file_as_dir, |_| ()));

        let mut nul = StackPath::new(root);
        nul.push(b"/f\0");
        assert_eq!(
            read_file(&mut nul, &mut buf),
            None,
            "an embedded NUL is never opened"
        );
    }

    #[test]
    fn paths_build_and_truncate() {
        let mut path = StackPath::new(b"/root/");
        path.push(b"/cpu").push_number(8442);
        assert_eq!(path.as_bytes(), b"/root/cpu8442");
        let len = path.len();
        path.push(&[b'a'; PATH_CAPACITY]);
        assert!(path.as_c_str().is_none());
        path.truncate(len);
        assert_eq!(path.as_c_str().unwrap().to_bytes(), b"/root/cpu8442");
    }
}
