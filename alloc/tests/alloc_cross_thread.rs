//! Cross-thread free at volume: blocks allocated on one thread, freed on another.

use rayforce_alloc::RayAlloc;
use std::sync::mpsc;

#[global_allocator]
static ALLOC: RayAlloc = RayAlloc::new();

#[test]
fn allocate_on_a_free_on_b() {
    const BATCHES: usize = 200;
    const PER_BATCH: usize = 5_000;
    let (send, recv) = mpsc::sync_channel::<Vec<Box<[u64]>>>(4);
    let producer = std::thread::spawn(move || {
        for batch in 0..BATCHES {
            let blocks = (0..PER_BATCH)
                .map(|i| vec![(batch * PER_BATCH + i) as u64; 1 + i % 64].into_boxed_slice())
                .collect();
            send.send(blocks).unwrap();
        }
    });
    let consumer = std::thread::spawn(move || {
        let mut seen = 0usize;
        for (batch, blocks) in recv.iter().enumerate() {
            for (i, block) in blocks.into_iter().enumerate() {
                let expected = (batch * PER_BATCH + i) as u64;
                assert!(block.len() == 1 + i % 64 && block.iter().all(|&v| v == expected));
                seen += 1;
            }
        }
        seen
    });
    producer.join().unwrap();
    assert_eq!(consumer.join().unwrap(), BATCHES * PER_BATCH);
    let stats = ALLOC.stats();
    assert!(stats.arenas_created <= stats.limit, "{stats:?}");
}
