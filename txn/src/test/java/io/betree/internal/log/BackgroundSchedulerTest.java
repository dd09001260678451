package io.betree.internal.log;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;

/**
 * The shared scheduler of periodic work: a task that fails ends alone, cancelling waits out the
 * task's own run and nobody else's, and log syncs do not wait behind a checkpoint.
 */
class BackgroundSchedulerTest {
    private static final long PERIOD = TimeUnit.MILLISECONDS.toNanos(2);

    @Test
    void aFailingTaskEndsAloneAndTheOthersGoOn() throws Exception {
        AtomicInteger healthyRuns = new AtomicInteger();
        AtomicInteger failingRuns = new AtomicInteger();
        RuntimeException boom = new IllegalStateException("boom");
        PeriodicTask failing = BackgroundScheduler.scheduleLogSync("failing", PERIOD, () -> {
            failingRuns.incrementAndGet();
            throw boom;
        });
        PeriodicTask healthy = BackgroundScheduler.scheduleLogSync("healthy", PERIOD, healthyRuns::incrementAndGet);
        try {
            waitUntil(() -> failing.isCancelled() && healthyRuns.get() >= 20, "the failing task ends, the other runs on");
            assertSame(boom, failing.failure());
            assertEquals(1, failingRuns.get(), "a failed task runs no more");
            int runs = healthyRuns.get();
            waitUntil(() -> healthyRuns.get() >= runs + 10, "the other task keeps running on the same thread");
            assertNull(healthy.failure());
            assertFalse(healthy.isCancelled());
        } finally {
            healthy.cancel();
            failing.cancel();
        }
    }

    @Test
    void cancelWaitsOutItsOwnRunAndNothingRunsAfterIt() throws Exception {
        CountDownLatch inRun = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger runs = new AtomicInteger();
        AtomicInteger runsInProgress = new AtomicInteger();
        PeriodicTask task = BackgroundScheduler.scheduleCheckpoint("slow", PERIOD, () -> {
            runsInProgress.incrementAndGet();
            runs.incrementAndGet();
            inRun.countDown();
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            runsInProgress.decrementAndGet();
        });
        assertTrue(inRun.await(10, TimeUnit.SECONDS));
        Thread canceller = new Thread(task::cancel);
        canceller.start();
        canceller.join(200);
        assertTrue(canceller.isAlive(), "cancel waits for the run in progress");
        release.countDown();
        canceller.join(10_000);
        assertFalse(canceller.isAlive());
        assertEquals(0, runsInProgress.get(), "no run in progress once cancel returned");
        int after = runs.get();
        Thread.sleep(50);
        assertEquals(after, runs.get(), "no run starts after cancel");
        assertTrue(task.isCancelled());
    }

    @Test
    void aLongRunDelaysNeitherAnotherTasksCancelNorTheLogSyncs() throws Exception {
        CountDownLatch inRun = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        PeriodicTask longCheckpoint = BackgroundScheduler.scheduleCheckpoint("long", PERIOD, () -> {
            inRun.countDown();
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        AtomicInteger syncs = new AtomicInteger();
        PeriodicTask otherCheckpoint = null;
        PeriodicTask sync = null;
        try {
            assertTrue(inRun.await(10, TimeUnit.SECONDS));
            PeriodicTask other = BackgroundScheduler.scheduleCheckpoint("other", PERIOD, () -> { });
            otherCheckpoint = other;
            // The checkpoint thread is busy with the long run; the other task waits its turn, and
            // cancelling it must not wait for the long run.
            assertTimeoutPreemptively(Duration.ofSeconds(5), other::cancel);
            sync = BackgroundScheduler.scheduleLogSync("sync", PERIOD, syncs::incrementAndGet);
            waitUntil(() -> syncs.get() >= 10, "log syncs run while a checkpoint does");
        } finally {
            release.countDown();
            longCheckpoint.cancel();
            if (otherCheckpoint != null) {
                otherCheckpoint.cancel();
            }
            if (sync != null) {
                sync.cancel();
            }
        }
    }

    @Test
    void cancelFromTheTaskItselfReturns() throws Exception {
        AtomicReference<PeriodicTask> self = new AtomicReference<>();
        CountDownLatch ran = new CountDownLatch(1);
        AtomicInteger runs = new AtomicInteger();
        PeriodicTask task = BackgroundScheduler.scheduleLogSync("self-cancelling", PERIOD, () -> {
            runs.incrementAndGet();
            PeriodicTask t = self.get();
            if (t != null) {
                t.cancel();
                ran.countDown();
            }
        });
        self.set(task);
        assertTrue(ran.await(10, TimeUnit.SECONDS));
        assertTrue(task.isCancelled());
        int after = runs.get();
        Thread.sleep(50);
        assertEquals(after, runs.get());
    }

    @Test
    void rejectsAPeriodThatIsNotPositive() {
        assertThrows(IllegalArgumentException.class,
                () -> BackgroundScheduler.scheduleLogSync("zero", 0, () -> { }));
    }

    private static void waitUntil(BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting: " + what);
            }
            Thread.sleep(2);
        }
    }
}
