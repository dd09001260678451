package io.betree.internal.tree;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.LongConsumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@link ReadAhead}: reads run side by side; none outlives {@code close()}; one still queued is given up. */
class ReadAheadTest {

    /**
     * A window's worth of reads is started, as many running side by side as there are threads; one
     * beyond the window waits for room and, given up, never runs; nor do those still queued at close.
     */
    @Test
    @Timeout(30)
    void closeWaitsForReadsUnderWayAndGivesUpTheOthers() throws Exception {
        CountDownLatch letGo = new CountDownLatch(1);
        CountDownLatch threadsBusy = new CountDownLatch(ReadAhead.THREADS);
        Set<Long> read = ConcurrentHashMap.newKeySet();
        ReadAhead ahead = new ReadAhead(heldRead(threadsBusy, letGo, read));
        try {
            for (long b = 0; b <= ReadAhead.WINDOW; b++) {
                ahead.add(b);
            }
            assertTrue(threadsBusy.await(10, TimeUnit.SECONDS), "reads run side by side on every thread");
            long beyond = ReadAhead.WINDOW;
            ahead.await(beyond); // not begun: the caller reads it itself
            Thread closing = new Thread(ahead::close);
            closing.start();
            // Waiting means it gave the queued reads up and now waits for one under way.
            while (closing.getState() != Thread.State.WAITING) {
                assertTrue(closing.isAlive(), "close waits for the reads under way");
                Thread.sleep(1);
            }
            letGo.countDown();
            closing.join(10_000);
            assertFalse(closing.isAlive(), "close returned once the reads under way ended");
            assertEquals(ReadAhead.THREADS, read.size(),
                    "each read under way ended before close returned, and none still queued began");
            Thread.sleep(100);
            assertFalse(read.contains(beyond), "the read given up never ran");
        } finally {
            letGo.countDown();
            ahead.close();
        }
    }

    /** A read queued behind other steps' reads on the shared threads is given up when its step gets there first. */
    @Test
    @Timeout(30)
    void aReadQueuedOnTheThreadsIsGivenUp() throws Exception {
        CountDownLatch letGo = new CountDownLatch(1);
        CountDownLatch busy = new CountDownLatch(ReadAhead.THREADS);
        Set<Long> read = ConcurrentHashMap.newKeySet();
        ReadAhead others = new ReadAhead(heldRead(busy, letGo, ConcurrentHashMap.newKeySet()));
        ReadAhead mine = new ReadAhead(read::add);
        try {
            for (long b = 0; b < ReadAhead.THREADS; b++) {
                others.add(b);
            }
            assertTrue(busy.await(10, TimeUnit.SECONDS), "every read-ahead thread is busy");
            mine.add(99);
            mine.await(99);
            letGo.countDown();
            others.close();
            mine.close();
            Thread.sleep(100);
            assertFalse(read.contains(99L), "the queued read never ran");
        } finally {
            letGo.countDown();
            others.close();
            mine.close();
        }
    }

    /** A read that fails only loses its head start: the failure goes nowhere, and the caller reads the block itself. */
    @Test
    @Timeout(30)
    void aFailedReadOnlyLosesItsHeadStart() throws Exception {
        Thread.UncaughtExceptionHandler before = Thread.getDefaultUncaughtExceptionHandler();
        List<Throwable> escaped = new CopyOnWriteArrayList<>();
        Thread.setDefaultUncaughtExceptionHandler((t, e) -> escaped.add(e));
        try {
            CountDownLatch begun = new CountDownLatch(1);
            try (ReadAhead ahead = new ReadAhead(block -> {
                begun.countDown();
                throw new IllegalStateException("unreadable block " + block);
            })) {
                ahead.add(7);
                assertTrue(begun.await(10, TimeUnit.SECONDS), "the read began");
                ahead.await(7); // returns; the caller's own pin meets the failure
            }
            Thread.sleep(100); // a read-ahead thread ended by the failure would report it about now
            assertEquals(List.of(), escaped, "the failure escaped the read-ahead thread");
        } finally {
            Thread.setDefaultUncaughtExceptionHandler(before);
        }
    }

    /** A read that counts down {@code begun}, waits for {@code letGo}, then records its block in {@code read}. */
    private static LongConsumer heldRead(CountDownLatch begun, CountDownLatch letGo, Set<Long> read) {
        return block -> {
            begun.countDown();
            awaitQuietly(letGo);
            read.add(block);
        };
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
