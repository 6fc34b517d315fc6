//! What the fork tests share: a forked child either finishes and exits 0, or aborts saying
//! why; its standard error comes back through a pipe, so that an abort is told apart from
//! a double free's (both end in SIGABRT). A child is waited for with a deadline: a hang is
//! a failure, not a stuck test.

use std::time::{Duration, Instant};

/// How long a child may take before it counts as hung.
const DEADLINE: Duration = Duration::from_secs(20);

/// In the parent: child `pid`'s wait status; a failure naming `what` if the fork failed or
/// the child is still running after [`DEADLINE`] (it is killed and reaped first).
pub fn status(pid: libc::pid_t, what: &str) -> i32 {
    assert!(pid > 0, "{what}: fork failed");
    let deadline = Instant::now() + DEADLINE;
    let mut status = 0;
    loop {
        // SAFETY: waiting for our own child, without blocking; `status` is valid for writes.
        if unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) } == pid {
            return status;
        }
        if Instant::now() > deadline {
            // SAFETY: killing and reaping our own child.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                libc::waitpid(pid, &mut status, 0);
            }
            panic!("{what}: the child hung");
        }
        std::thread::sleep(Duration::from_micros(200));
    }
}

/// Children's ends: how many aborted, and what they wrote to standard error.
pub struct ChildEnds {
    pipe: [libc::c_int; 2],
    aborted: usize,
}

impl ChildEnds {
    pub fn new() -> ChildEnds {
        let mut pipe = [0; 2];
        // SAFETY: `pipe` is an array of two descriptors, as pipe(2) writes.
        assert_eq!(unsafe { libc::pipe(pipe.as_mut_ptr()) }, 0);
        ChildEnds { pipe, aborted: 0 }
    }

    /// In a child: its standard error goes into the pipe.
    pub fn redirect_stderr(&self) {
        // SAFETY: dup2 on descriptors this (child) process owns.
        unsafe { libc::dup2(self.pipe[1], 2) };
    }

    /// Waits for child `pid`, which must have exited 0 or aborted, within the deadline.
    pub fn wait(&mut self, pid: libc::pid_t, what: &str) {
        let status = status(pid, what);
        let exited_ok = libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0;
        let aborted = libc::WIFSIGNALED(status) && libc::WTERMSIG(status) == libc::SIGABRT;
        assert!(exited_ok || aborted, "{what}: child status {status:#x}");
        self.aborted += usize::from(aborted);
    }

    /// Once every child was waited for: each that aborted said it was inside `name`.
    /// Returns how many aborted.
    pub fn assert_each_abort_said(self, name: &str) -> usize {
        // SAFETY: closing this process's write end, so the read below ends.
        unsafe { libc::close(self.pipe[1]) };
        // SAFETY: the read end is this process's, open, and owned by the `File` from here.
        let mut read_end =
            unsafe { <std::fs::File as std::os::fd::FromRawFd>::from_raw_fd(self.pipe[0]) };
        let mut said = String::new();
        std::io::Read::read_to_string(&mut read_end, &mut said).unwrap();
        let reasons = said.matches(&format!("forked inside `{name}`")).count();
        assert_eq!(reasons, self.aborted, "each abort said why: {said:?}");
        self.aborted
    }
}
