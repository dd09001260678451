package io.betree.internal.txn;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class RecentKeyFilterTest {

    /**
     * Random commits of random sizes, through many generations: for every snapshot, a key that a
     * commit after it wrote is never answered "no", and most keys nobody wrote are.
     */
    @Test
    void neverDeniesAWriteAfterTheSnapshot() {
        for (long seed = 1; seed <= 10; seed++) {
            Random rnd = new Random(seed);
            RecentKeyFilter filter = new RecentKeyFilter();
            Map<Long, Long> newest = new HashMap<>();
            List<Long> written = new ArrayList<>();
            int falseMaybes = 0;
            int unwrittenAsked = 0;
            for (long ts = 1; ts <= 400; ts++) {
                long[] hashes = new long[rnd.nextInt(3_000)];
                for (int i = 0; i < hashes.length; i++) {
                    // Some keys are written again, by a later commit.
                    hashes[i] = !written.isEmpty() && rnd.nextInt(8) == 0
                            ? written.get(rnd.nextInt(written.size())) : rnd.nextLong();
                    newest.put(hashes[i], ts);
                    written.add(hashes[i]);
                }
                filter.record(ts, hashes);
                for (int probe = 0; probe < 200; probe++) {
                    long snapshot = Math.max(0, ts - 1 - rnd.nextInt(30));
                    long hash = written.get(rnd.nextInt(written.size()));
                    if (newest.get(hash) > snapshot) {
                        assertTrue(filter.mayHaveWritten(hash, snapshot),
                                "seed " + seed + ": a key written at " + newest.get(hash) + " after snapshot " + snapshot);
                    }
                    long unwritten = rnd.nextLong();
                    if (!newest.containsKey(unwritten)) {
                        unwrittenAsked++;
                        falseMaybes += filter.mayHaveWritten(unwritten, snapshot) ? 1 : 0;
                    }
                }
            }
            // Two bits in a word, a generation at most an eighth full: a few percent per generation
            // read, and a snapshot 30 commits back reads two or three.
            assertTrue(falseMaybes < unwrittenAsked / 5, "seed " + seed + ": " + falseMaybes + " of " + unwrittenAsked);
        }
    }

    @Test
    void answersNoForASnapshotThatIncludesEveryCommit() {
        RecentKeyFilter filter = new RecentKeyFilter();
        long a = key(42);
        long b = key(43);
        long c = key(44);
        filter.record(1, new long[] {a, b});
        filter.record(2, new long[] {c});
        assertTrue(filter.mayHaveWritten(a, 0));
        assertTrue(filter.mayHaveWritten(c, 1));
        // One generation holds both commits: for snapshot 1 it may answer "maybe" for a too.
        assertFalse(filter.mayHaveWritten(a, 2), "both commits are in snapshot 2");
        assertFalse(filter.mayHaveWritten(c, 2));
        assertFalse(filter.mayHaveWritten(key(45), 0), "nobody wrote key 45");
    }

    private static long key(int k) {
        return ConflictTable.hash(1, new byte[] {(byte) k});
    }

    /** A snapshot older than the generations reach back to is answered "maybe" for every key. */
    @Test
    void aSnapshotOlderThanTheGenerationsGetsMaybe() {
        RecentKeyFilter filter = new RecentKeyFilter();
        Random rnd = new Random(7);
        long ts = 0;
        int perCommit = RecentKeyFilter.KEYS_PER_GENERATION / 4;
        for (int i = 0; i < (RecentKeyFilter.GENERATIONS + 2) * 4; i++) {
            long[] hashes = new long[perCommit];
            for (int k = 0; k < hashes.length; k++) {
                hashes[k] = rnd.nextLong();
            }
            filter.record(++ts, hashes);
        }
        for (int probe = 0; probe < 1_000; probe++) {
            assertTrue(filter.mayHaveWritten(rnd.nextLong(), 1), "commit 2 has left the generations");
        }
        int maybes = 0;
        for (int probe = 0; probe < 1_000; probe++) {
            maybes += filter.mayHaveWritten(rnd.nextLong(), ts - 1) ? 1 : 0;
        }
        assertTrue(maybes < 100, maybes + " of 1,000 unwritten keys answered maybe for a recent snapshot");
    }

    /**
     * While the writer records commits through many generations, a lookup never denies a key that
     * a commit finished before the lookup began wrote after the lookup's snapshot, even as that
     * commit's generation is cleared for reuse or has left the ring: each probed key was written by
     * one commit only, so no newer generation can answer for it.
     */
    @Test
    void lookupsDuringClearsDenyNoFinishedCommit() throws Exception {
        RecentKeyFilter filter = new RecentKeyFilter();
        AtomicLong completed = new AtomicLong();
        String wrong = RecentWritesTest.raceReadersWithWriter(rnd -> {
            long before = completed.get();
            if (before < 2) {
                return null;
            }
            // Commits some 76 apart fill a generation: 300 back reaches past the ring.
            long commit = Math.max(1, before - rnd.nextInt(300));
            return filter.mayHaveWritten(onlyKeyOf(commit), commit - 1) ? null
                    : "commit " + commit + " (of " + before + " finished) denied its own key";
        }, () -> {
            Random rnd = new Random(3);
            for (long ts = 1; ts <= 30_000; ts++) {
                long[] hashes = new long[216];
                hashes[0] = onlyKeyOf(ts);
                for (int w = 1; w < hashes.length; w++) {
                    hashes[w] = rnd.nextLong();
                }
                filter.record(ts, hashes);
                completed.set(ts);
            }
        });
        assertEquals(null, wrong);
    }

    /** The key only commit {@code ts} writes. */
    private static long onlyKeyOf(long ts) {
        return ConflictTable.hash(2, ByteBuffer.allocate(8).putLong(ts).array());
    }
}
