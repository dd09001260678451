package io.betree.internal.tree;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** {@link ReadAhead}: reads run side by side; none outlives {@code close()}; one still queued is given up. */
class ReadAheadTest {

    @Test
    void closeWaitsForReadsUnderWayAndGivesUpQueuedOnes() throws Exception {
        CountDownLatch letGo = new CountDownLatch(1);
        CountDownLatch allStarted = new CountDownLatch(ReadAhead.THREADS);
        Set<Long> read = ConcurrentHashMap.newKeySet();
        ReadAhead ahead = new ReadAhead();
        try {
            for (long b = 0; b < ReadAhead.THREADS; b++) {
                ahead.start(b, block -> {
                    allStarted.countDown();
                    awaitQuietly(letGo);
                    read.add(block);
                });
            }
            assertTrue(allStarted.await(10, TimeUnit.SECONDS), "the reads run side by side");
            long queued = ReadAhead.THREADS;
            ahead.start(queued, read::add);
            ahead.await(queued); // every thread busy: given up, the caller reads it itself
            CompletableFuture<Void> closing = CompletableFuture.runAsync(ahead::close);
            Thread.sleep(100);
            assertFalse(closing.isDone(), "close waits for the reads under way");
            letGo.countDown();
            closing.get(10, TimeUnit.SECONDS);
            assertEquals(ReadAhead.THREADS, read.size(), "each read under way ended before close returned");
            Thread.sleep(100);
            assertFalse(read.contains(queued), "the read given up never ran");
        } finally {
            letGo.countDown();
            ahead.close();
        }
    }

    @Test
    void aFailedReadOnlyLosesItsHeadStart() {
        try (ReadAhead ahead = new ReadAhead()) {
            ahead.start(7, block -> {
                throw new IllegalStateException("unreadable block " + block);
            });
            ahead.await(7); // returns; the caller's own pin meets the failure
        }
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
