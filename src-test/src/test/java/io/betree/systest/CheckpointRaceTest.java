package io.betree.systest;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.betree.Environment;
import io.betree.EnvironmentOptions;
import io.betree.Index;
import io.betree.IndexOptions;
import io.betree.StorageSeam;
import io.betree.internal.storage.FaultInjectingStorageEnv;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Checkpoints racing with the creation of indexes: while one thread checkpoints in a loop and another
 * keeps the commit lock busy, the test thread creates indexes and writes a row to each, and one more
 * to the index before (SYNC, so each row is acknowledged durable); then the power is cut (without a clean close, whose final checkpoint
 * would hide the problem) and every index with its row must come back.
 *
 * <p>{@code -Dbetree.seed=N}; {@code -Dbetree.raceRounds=N} (default 40).
 */
class CheckpointRaceTest {
    private static final int ROUNDS = Integer.getInteger("betree.raceRounds", 40);

    @TempDir
    Path work;

    private static IndexOptions shape() {
        return IndexOptions.defaults().nodeSize(64 << 10).basementSize(4 << 10).fanout(6);
    }

    private static byte[] bytes(long n) {
        return ByteBuffer.allocate(8).putLong(n).array();
    }

    @Test
    void indexesCreatedDuringCheckpointsSurviveACrash() throws Exception {
        long seed = Long.getLong("betree.seed", System.nanoTime());
        System.out.println("CheckpointRaceTest: seed " + seed);
        Random rnd = new Random(seed);
        for (int round = 0; round < ROUNDS; round++) {
            try {
                round(work.resolve("round-" + round), rnd);
            } catch (AssertionError | RuntimeException e) {
                throw new AssertionError("round " + round + " (-Dbetree.seed=" + seed + "): " + e.getMessage(), e);
            }
        }
    }

    private void round(Path dir, Random rnd) throws Exception {
        FaultInjectingStorageEnv fi = new FaultInjectingStorageEnv();
        FencedStorageEnv fenced = new FencedStorageEnv(fi);
        EnvironmentOptions options = StorageSeam.withStorage(EnvironmentOptions.defaults()
                .cacheBytes(16L << 20).checkpointInterval(Duration.ZERO), fenced);
        Environment env = Environment.open(dir, options);
        Index busy = env.openIndex("busy", shape());
        AtomicBoolean stop = new AtomicBoolean();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        List<Thread> threads = new ArrayList<>();
        threads.add(new Thread(() -> {
            long n = 0;
            while (!stop.get()) {
                try {
                    busy.put(bytes(n % 500), bytes(n));
                    n++;
                } catch (RuntimeException e) {
                    if (!stop.get()) {
                        failure.compareAndSet(null, e);
                    }
                    return;
                }
            }
        }, "busy-committer"));
        threads.add(new Thread(() -> {
            while (!stop.get()) {
                try {
                    env.checkpoint();
                } catch (RuntimeException e) {
                    if (!stop.get()) {
                        failure.compareAndSet(null, e);
                    }
                    return;
                }
            }
        }, "checkpointer"));
        threads.forEach(Thread::start);
        int created = 0;
        long deadline = System.nanoTime() + (100 + rnd.nextInt(300)) * 1_000_000L;
        Index previous = null;
        while (System.nanoTime() < deadline && failure.get() == null) {
            Index ix = env.openIndex("ix-" + created, shape());
            ix.put(bytes(created), bytes(created)); // SYNC: durable when it returns
            if (previous != null) {
                previous.put(bytes(-1), bytes(created - 1)); // a later commit to the previous index
            }
            previous = ix;
            created++;
        }
        stop.set(true);
        fenced.fenceAndThen(() -> fi.crash(rnd));
        for (Thread t : threads) {
            t.join(30_000);
            assertFalse(t.isAlive(), t.getName() + " hangs after the crash");
        }
        try {
            env.close();
        } catch (RuntimeException ignored) {
            // The files died under it.
        }
        if (failure.get() != null) {
            throw new AssertionError("before the crash: " + failure.get(), failure.get());
        }
        try (Environment again = Environment.open(dir, EnvironmentOptions.defaults()
                .cacheBytes(16L << 20).checkpointInterval(Duration.ZERO))) {
            List<String> names = again.indexNames();
            List<String> missing = new ArrayList<>();
            for (int i = 0; i < created; i++) {
                if (!names.contains("ix-" + i)) {
                    missing.add("ix-" + i);
                }
            }
            assertTrue(missing.isEmpty(), "indexes created (and written, SYNC) before the crash are missing after "
                    + "recovery: " + missing + " of " + created);
            for (int i = 0; i < created; i++) {
                Index ix = again.openIndex("ix-" + i, shape());
                assertArrayEquals(bytes(i), ix.get(bytes(i)), "the acknowledged row of ix-" + i);
                if (i < created - 1) {
                    assertArrayEquals(bytes(i), ix.get(bytes(-1)), "the second acknowledged row of ix-" + i);
                }
            }
            System.out.printf(Locale.ROOT, "CheckpointRaceTest: %d indexes created during checkpoints, all recovered%n",
                    created);
        }
    }
}
