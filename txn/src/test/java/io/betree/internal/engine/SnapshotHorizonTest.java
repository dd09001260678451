package io.betree.internal.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.betree.compression.Compressors;
import io.betree.internal.storage.StorageEnv;
import io.betree.internal.tree.TreeConfig;
import io.betree.internal.txn.WriteOp;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The horizon below which flushes drop versions never passes a snapshot being started: not after
 * it is registered, and not while it is, although the visibility watermark it is read from moves
 * outside the commit gate. Writers commit as fast as they can, so the watermark moves all the
 * time; one thread starts and ends snapshots, and another reads the horizon over and over. Every
 * horizon read that ends while a snapshot is being started or is live must be at or below it (a
 * read begun before the start saw a watermark at or below the snapshot, which is read from the
 * watermark later).
 */
class SnapshotHorizonTest {
    private static final int WRITERS = 2;
    /**
     * Commits to run snapshots against: a snapshot starts and ends far faster than a commit, 0.4 to
     * 1.5 million of them in a run (the code before the floor let the horizon pass 3 to 5 of them).
     */
    private static final long COMMITS = 20_000;
    private static final long MAX_NANOS = TimeUnit.SECONDS.toNanos(60);

    @TempDir
    Path dir;

    @Test
    @Timeout(120)
    void theHorizonNeverPassesASnapshotBeingStarted() throws Exception {
        EngineSettings settings = new EngineSettings(16L << 20, false, Duration.ofSeconds(60), Duration.ofSeconds(600),
                64L << 20);
        TreeConfig config = new TreeConfig(1 << 20, 64 << 10, 16, Compressors.create("none"));
        try (Engine engine = Engine.open(dir, StorageEnv.defaultEnv(), settings)) {
            StoredIndex index = engine.openIndex("rows", config);
            AtomicBoolean stop = new AtomicBoolean();
            AtomicBoolean watching = new AtomicBoolean();
            AtomicLong highestWhileWatching = new AtomicLong(Long.MIN_VALUE);
            AtomicReference<Throwable> failure = new AtomicReference<>();
            List<Thread> threads = new ArrayList<>();
            for (int w = 0; w < WRITERS; w++) {
                int writer = w;
                threads.add(new Thread(() -> {
                    try {
                        for (long i = 0; !stop.get(); i++) {
                            byte[] key = ByteBuffer.allocate(12).putInt(writer).putLong(i % 1000).array();
                            engine.commit(-1, List.of(WriteOp.put(index.id(), index.tree(), key, key)));
                        }
                    } catch (Throwable e) {
                        failure.compareAndSet(null, e);
                    }
                }));
            }
            threads.add(new Thread(() -> {
                while (!stop.get()) {
                    long horizon = engine.horizon();
                    if (watching.get()) {
                        highestWhileWatching.accumulateAndGet(horizon, Math::max);
                    }
                }
            }));
            for (Thread t : threads) {
                t.setDaemon(true); // not left running should the test time out in join
                t.start();
            }
            int violations = 0;
            int snapshots = 0;
            String first = null;
            long start = System.nanoTime();
            try {
                for (; engine.visibleTs() < COMMITS && failure.get() == null
                        && System.nanoTime() - start < MAX_NANOS; snapshots++) {
                    highestWhileWatching.set(Long.MIN_VALUE);
                    watching.set(true);
                    long ts = engine.beginSnapshot();
                    Thread.onSpinWait();
                    watching.set(false);
                    long highest = highestWhileWatching.get();
                    engine.endSnapshot(ts);
                    if (highest > ts) {
                        violations++;
                        if (first == null) {
                            first = "horizon " + highest + " passed snapshot " + ts;
                        }
                    }
                }
            } finally {
                stop.set(true);
                for (Thread t : threads) {
                    t.join();
                }
            }
            if (failure.get() != null) {
                throw new AssertionError("a writer failed", failure.get());
            }
            assertTrue(engine.visibleTs() >= COMMITS / 10, "the watermark hardly moved: " + engine.visibleTs());
            assertEquals(0, violations, violations + " of " + snapshots + " snapshots were passed; first: " + first);
        }
    }
}
