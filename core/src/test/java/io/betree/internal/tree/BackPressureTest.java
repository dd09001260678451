package io.betree.internal.tree;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.betree.compression.Compressors;
import io.betree.internal.cache.NodeCache;
import io.betree.internal.fault.FailureListener;
import io.betree.internal.memory.NodeMemory;
import io.betree.internal.storage.BlockFile;
import io.betree.internal.storage.StorageEnv;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Back-pressure over a real tree whose flushes are paused ({@link BeTree#withFlushesPaused}), so
 * that its root grows as far as the test wants: writes go on appending to the root meanwhile; a
 * writer is not held back while the root is small, is delayed briefly while it is between twice and
 * four times its size, and past that waits until flushing resumes and brings the root back, never
 * flushing on its own thread. A root that stays past its set point makes the tree's pace grow, and
 * its delays with it, until the root is back below. A commit that already took longer than usual is
 * delayed that much less, and a cache that has gone into its headroom above the budget slows
 * writers too.
 */
class BackPressureTest {
    @TempDir
    Path dir;

    private BlockFile file;
    private NodeMemory memory;
    private NodeCache cache;
    private BeTree tree;
    private long msn;
    private final Random rnd = new Random(20261123);

    @BeforeEach
    void open() throws IOException {
        file = BlockFile.open(StorageEnv.defaultEnv(), dir.resolve("tree.data"));
        memory = new NodeMemory();
        // Room above the chunks the process-wide pool may keep from earlier tests, which count
        // against this cache: over its budget from the start, it would evict its leaf and
        // basement at once and have nothing evictable left, which no slowed writer can help.
        cache = new NodeCache(new BlockFileBacking(file, memory), memory, 64L << 20);
        TreeConfig config = new TreeConfig(64 << 10, 4 << 10, 4, Compressors.create("lz4"));
        tree = BeTree.create(cache, file, config, () -> 0, FailureListener.IGNORE);
    }

    @AfterEach
    void close() throws IOException {
        tree.close();
        cache.releaseAll();
        file.close();
        assertEquals(0, memory.used(), "off-heap bytes left after the cache released everything");
    }

    @Test
    void aSmallRootHoldsNobodyBack() {
        writeUntilFullness(0.5);
        assertEquals(0, BeTree.holdWritersBack(List.of(tree), 0));
    }

    @Test
    void writersAppendWhileFlushesArePausedAndAreDelayedBrieflyPastTwiceTheRootSize() {
        BeTree.withFlushesPaused(List.of(tree), () -> {
            writeUntilFullness(2.5);
            long waited = BeTree.holdWritersBack(List.of(tree), 0);
            assertTrue(waited > 0, "a root at 2.5 times its size should delay the writer");
            assertTrue(waited < TimeUnit.SECONDS.toNanos(5), "a delay, not a stop: waited " + waited + " ns");
            return null;
        });
    }

    @Test
    void writersHeldBackTogetherEachWaitTheirOwnDelayNotTheirTurnInAQueue() {
        BeTree.withFlushesPaused(List.of(tree), () -> {
            writeUntilFullness(3.5);
            int writers = 16;
            List<CompletableFuture<Long>> waits = new java.util.ArrayList<>();
            for (int i = 0; i < writers; i++) {
                waits.add(CompletableFuture.supplyAsync(() -> BeTree.holdWritersBack(List.of(tree), 0),
                        r -> new Thread(r).start()));
            }
            // Each delay is 7.5 ms at 3.5 node sizes (no pace learned: no commit time given) times
            // the writers held at once, 40 ms at most; in a queue the last of 16 writers would wait
            // 16 of them, 120 ms. The limit lies halfway between.
            long limit = (BackPressure.MAX_DELAY_NANOS + 16 * BackPressure.MAX_ROOT_DELAY_NANOS * 3 / 4) / 2;
            for (CompletableFuture<Long> w : waits) {
                long waited = w.join();
                assertTrue(waited < limit, "a writer waited " + waited / 1_000_000 + " ms");
            }
            return null;
        });
    }

    @Test
    void theDelayForTheRootsFullnessGrowsWithTheWritersHeldOnTheTreeUpToTheLongest() {
        BeTree.withFlushesPaused(List.of(tree), () -> {
            writeUntilFullness(2.5); // a quarter into the band: 2.5 ms for one writer
            long alone = BeTree.holdWritersBack(List.of(tree), 0);
            long quarter = BackPressure.MAX_ROOT_DELAY_NANOS / 4;
            assertTrue(alone >= quarter * 9 / 10 && alone < 8 * quarter * 9 / 10,
                    "a lone writer waits its own delay: " + alone / 1_000 + " us");
            // Seven writers held already: eight times the delay, 20 ms.
            long withSeven = holdBackWithOthersHeld(7);
            assertTrue(withSeven >= 8 * quarter * 9 / 10,
                    "with seven held, a writer waits eight times as long: " + withSeven / 1_000 + " us");
            long withMany = holdBackWithOthersHeld(99);
            assertTrue(withMany >= BackPressure.MAX_DELAY_NANOS * 9 / 10
                    && withMany < BackPressure.MAX_DELAY_NANOS + TimeUnit.MILLISECONDS.toNanos(200),
                    "with a hundred held, the longest delay and no more: " + withMany / 1_000 + " us");
            assertEquals(0, tree.heldWriters.get(), "a writer that was held no longer counts");
            return null;
        });
    }

    @Test
    void aCommitThatTookLongerThanUsualIsDelayedThatMuchLess() {
        BeTree.withFlushesPaused(List.of(tree), () -> {
            writeUntilFullness(3.0); // a delay of about half the longest
            long usual = TimeUnit.MILLISECONDS.toNanos(2);
            for (int i = 0; i < 20; i++) {
                tree.usualCommitTime.overrun(usual);
            }
            long overran = usual + BackPressure.MAX_DELAY_NANOS;
            assertEquals(0, BeTree.holdWritersBack(List.of(tree), overran),
                    "a commit that overran by more than its delay is not delayed");
            assertTrue(BeTree.holdWritersBack(List.of(tree), usual) > 0, "a usual commit still is");
            return null;
        });
    }

    @Test
    void aCacheIntoItsHeadroomSlowsWritersBeforeTheyMustWaitAtTheHardLimit() {
        writeUntilFullness(0.5);
        assertEquals(0, BeTree.holdWritersBack(List.of(tree), 0));
        // Buffers of the cache's memory that are not cache entries, which no eviction frees:
        // the budget counts them (checkpoint images, merges in progress), taking the cache 80% of
        // the way from its budget (64 MiB) to its hard limit (80 MiB).
        List<io.netty.buffer.ByteBuf> held = new java.util.ArrayList<>();
        try {
            while (tree.cacheHeadroomUsed() < 0.8) {
                // Twice the hard limit held without a cache in its headroom is a failure, not a hang.
                assertTrue(held.size() < 640, "the cache never counted itself in its headroom");
                held.add(memory.allocate(256 << 10));
            }
            long waited = BeTree.holdWritersBack(List.of(tree), 0);
            assertTrue(waited >= BackPressure.MAX_ROOT_DELAY_NANOS / 2,
                    "a cache 80% into its headroom delays the writer: waited " + waited + " ns");
            assertTrue(waited < TimeUnit.SECONDS.toNanos(5), "a delay, not a stop: waited " + waited + " ns");
        } finally {
            held.forEach(memory::release);
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (tree.cacheHeadroomUsed() > BackPressure.MEMORY_SLOW_FROM) {
            assertTrue(System.nanoTime() < deadline, "the cache stayed in its headroom after the buffers went");
            Thread.onSpinWait(); // the footprint is re-measured within a millisecond
        }
        assertEquals(0, BeTree.holdWritersBack(List.of(tree), 0));
    }

    @Test
    void aRootKeptPastItsSetPointMakesThePaceGrowAndARootBackBelowMakesItFade() {
        long usual = TimeUnit.MILLISECONDS.toNanos(5);
        long[] first = new long[1];
        long[] last = new long[1];
        BeTree.withFlushesPaused(List.of(tree), () -> {
            writeUntilFullness(3.5); // three quarters into the band, half a band past the set point
            first[0] = BeTree.holdWritersBack(List.of(tree), usual);
            // Half a band past the set point for about a second takes the pace to its most.
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (tree.writePace.pace() < WritePace.MAX_PACE) {
                assertTrue(System.nanoTime() < until, "the pace stayed at " + tree.writePace.pace());
                last[0] = BeTree.holdWritersBack(List.of(tree), usual);
            }
            last[0] = BeTree.holdWritersBack(List.of(tree), usual);
            return null;
        });
        // The root's part of the delay stays the same (same fullness, 7.5 ms); the pace's part grew
        // to four usual commits, and a paced delay is waited whole.
        long atMostPace = BackPressure.MAX_ROOT_DELAY_NANOS * 3 / 4 + (long) (WritePace.MAX_PACE * usual);
        assertTrue(first[0] < atMostPace - usual, "the first delay, " + first[0] / 1_000 + " us, had a pace already");
        assertTrue(last[0] >= atMostPace - TimeUnit.MILLISECONDS.toNanos(1), "delay first " + first[0] / 1_000
                + " us, once the pace was at its most " + last[0] / 1_000 + " us");
        assertTrue(last[0] < BackPressure.MAX_DELAY_NANOS + TimeUnit.MILLISECONDS.toNanos(200),
                "the pace slows, never stops: waited " + last[0] / 1_000 + " us");
        while (tree.flushStep()) {
            // the flushers catch up
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (tree.writePace.pace() > 0) {
            assertTrue(System.nanoTime() < deadline, "the pace did not fade with the root below its set point: "
                    + tree.writePace.pace());
            BeTree.holdWritersBack(List.of(tree), usual);
        }
        assertEquals(0, BeTree.holdWritersBack(List.of(tree), usual), "no pace, a small root: no delay");
    }

    @Test
    void pastFourTimesTheRootSizeAWriterWaitsForTheFlushers() throws Exception {
        CountDownLatch rootFull = new CountDownLatch(1);
        CountDownLatch checked = new CountDownLatch(1);
        CompletableFuture<Long> writer = new CompletableFuture<>();
        Thread pauser = new Thread(() -> BeTree.withFlushesPaused(List.of(tree), () -> {
            writeUntilFullness(4.5);
            rootFull.countDown();
            try {
                checked.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return null;
        }));
        pauser.start();
        assertTrue(rootFull.await(60, TimeUnit.SECONDS));
        Thread held = new Thread(() -> writer.complete(BeTree.holdWritersBack(List.of(tree), 0)));
        held.start();
        try {
            writer.get(300, TimeUnit.MILLISECONDS);
            throw new AssertionError("the writer went on while the root was past four times its size");
        } catch (TimeoutException expected) {
            // Still held back: nothing can flush while the pause lasts.
        }
        assertTrue(tree.rootFullness() >= BackPressure.STOP_AT, "the writer must not have flushed by itself");
        checked.countDown();
        pauser.join();
        assertTrue(writer.get(60, TimeUnit.SECONDS) > 0);
        assertFalse(tree.rootFullness() >= BackPressure.STOP_AT, "released only once the root was below the stop");
        held.join();
    }

    /** A writer's wait while {@code others} writers count as held on the tree. */
    private long holdBackWithOthersHeld(int others) {
        tree.heldWriters.addAndGet(others);
        try {
            return BeTree.holdWritersBack(List.of(tree), 0);
        } finally {
            tree.heldWriters.addAndGet(-others);
        }
    }

    private void writeUntilFullness(double fullness) {
        while (tree.rootFullness() < fullness) {
            byte[] key = ByteBuffer.allocate(8).putLong(rnd.nextLong()).array();
            byte[] value = new byte[100];
            rnd.nextBytes(value);
            tree.write(MessageType.PUT, key, value, ++msn);
        }
    }
}
