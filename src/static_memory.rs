//! Whether an address lies in static memory: a writable segment of the program or of a
//! library it loaded, where a `static` lives and is never moved or dropped.

/// Whether the `len` bytes at `address` lie in one writable loaded segment (`PT_LOAD` with
/// `PF_W`) of the program or a loaded library. Allocation-free.
#[cfg(target_os = "linux")]
pub(crate) fn holds(address: usize, len: usize) -> bool {
    struct Probe {
        start: usize,
        end: usize,
        found: bool,
    }

    unsafe extern "C" fn visit(
        info: *mut libc::dl_phdr_info,
        _size: libc::size_t,
        probe: *mut libc::c_void,
    ) -> libc::c_int {
        // SAFETY: `dl_iterate_phdr` passes a valid `info` for the duration of the call, and
        // the `Probe` that `holds` passed, which nothing else references meanwhile.
        let (info, probe) = unsafe { (&*info, &mut *probe.cast::<Probe>()) };
        let headers: &[_] = if info.dlpi_phdr.is_null() {
            &[]
        } else {
            // SAFETY: `dlpi_phdr` points at `dlpi_phnum` program headers of the object.
            unsafe { std::slice::from_raw_parts(info.dlpi_phdr, usize::from(info.dlpi_phnum)) }
        };
        let base = info.dlpi_addr as usize;
        probe.found = headers.iter().any(|header| {
            let start = base.wrapping_add(header.p_vaddr as usize);
            let end = start.saturating_add(header.p_memsz as usize);
            header.p_type == libc::PT_LOAD
                && header.p_flags & libc::PF_W != 0
                && start <= probe.start
                && probe.end <= end
        });
        // Non-zero stops the walk.
        libc::c_int::from(probe.found)
    }

    let mut probe = Probe {
        start: address,
        end: address.saturating_add(len),
        found: false,
    };
    // SAFETY: `visit` matches the callback's signature and reads `probe` as the `Probe` it
    // is; `probe` outlives the call.
    unsafe { libc::dl_iterate_phdr(Some(visit), std::ptr::from_mut(&mut probe).cast()) };
    probe.found
}

/// Elsewhere no static memory is recognised.
#[cfg(not(target_os = "linux"))]
pub(crate) fn holds(_address: usize, _len: usize) -> bool {
    false
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::holds;
    use std::sync::atomic::AtomicU64;

    static WRITABLE: AtomicU64 = AtomicU64::new(0);

    fn of<T>(value: &T) -> (usize, usize) {
        (std::ptr::from_ref(value) as usize, std::mem::size_of::<T>())
    }

    #[test]
    fn a_static_is_in_static_memory() {
        let (address, len) = of(&WRITABLE);
        assert!(holds(address, len));
    }

    #[test]
    fn the_stack_and_the_heap_are_not() {
        let local = AtomicU64::new(0);
        let boxed = Box::new(AtomicU64::new(0));
        let (stack, len) = of(&local);
        let (heap, _) = of(&*boxed);
        assert!(!holds(stack, len));
        assert!(!holds(heap, len));
        assert!(
            !holds(usize::MAX - 4, 8),
            "a range running off the address space"
        );
    }
}
