//! Chunk sizing (README "Claiming"): a participant's next chunk is what runs in a target
//! time at its rate so far, bounded so that one cheap or expensive chunk cannot swing the
//! size far, and never finer than a floor near the end.

/// A chunk should run about this long: a claim (one `fetch_add` on a line other
/// participants write too, about 0.1 us across cores) and the clock read that times it
/// then cost under 1% of the work.
const CHUNK_TARGET_NS: u64 = 20_000;

/// Toward the end chunks shrink, but never below about this much work (a tenth of the
/// target, at the last chunk's rate): finer pieces would cost more in claims than they
/// save in balance, and the participant that ends last waits for at most about this long.
const CHUNK_FLOOR_NS: u64 = CHUNK_TARGET_NS / 10;

/// A chunk grows at most this many times over the last one: a cheap first task (whose
/// time is mostly the clock read) reaches the target in two claims, not ten, while a run
/// of cheap tasks before expensive ones cannot hand out an unbounded chunk.
const CHUNK_MAX_GROWTH: usize = 64;

/// The next chunk size for a participant whose last chunk of `len` tasks took `took_ns`:
/// what runs in the target time at that rate, but at most `CHUNK_MAX_GROWTH` times `len`
/// and at least half of it (one chunk that met an expensive task does not collapse the
/// size), and at least one task.
pub(crate) fn next_chunk(len: usize, took_ns: u64) -> usize {
    let at_rate = (len as u128 * u128::from(CHUNK_TARGET_NS)) / u128::from(took_ns.max(1));
    let at_rate = usize::try_from(at_rate).unwrap_or(usize::MAX);
    at_rate
        .min(len.saturating_mul(CHUNK_MAX_GROWTH))
        .max(len / 2)
        .max(1)
}

/// The smallest chunk worth claiming near the end, for a participant whose chunks are
/// `chunk` tasks: about `CHUNK_FLOOR_NS` of work at its rate.
pub(crate) fn floor(chunk: usize) -> usize {
    chunk / (CHUNK_TARGET_NS / CHUNK_FLOOR_NS) as usize
}

#[cfg(all(test, not(rayforce_loom)))]
mod tests {
    use super::*;

    #[test]
    fn chunks_grow_while_cheap_and_shrink_after_an_expensive_one() {
        // A cheap first task: 64 times, not the 200 its rate asks for.
        assert_eq!(next_chunk(1, 100), CHUNK_MAX_GROWTH);
        assert_eq!(next_chunk(4096, CHUNK_TARGET_NS / 4), 4 * 4096);
        assert_eq!(next_chunk(4096, CHUNK_TARGET_NS), 4096);
        assert_eq!(next_chunk(4096, CHUNK_TARGET_NS * 3 / 2), 2730);
        // One expensive chunk halves the size, no more.
        assert_eq!(next_chunk(4096, CHUNK_TARGET_NS * 3), 2048);
        assert_eq!(next_chunk(1, CHUNK_TARGET_NS * 100), 1);
        assert_eq!(next_chunk(usize::MAX, 1), usize::MAX);
        assert_eq!(next_chunk(7, 0), 7 * CHUNK_MAX_GROWTH);
    }
}
