package io.betree.systest;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.betree.Cursor;
import io.betree.Durability;
import io.betree.Environment;
import io.betree.EnvironmentOptions;
import io.betree.Index;
import io.betree.IndexOptions;
import io.betree.Transaction;
import io.betree.WriteConflictException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordingStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Drives the engine from virtual threads (JDK 21+; skipped on older JDKs, where they do not exist):
 * hundreds of them commit with {@link Durability#SYNC} (each waits for an fsync), read, scan and
 * checkpoint at once. While they run, JFR records every time a virtual thread blocked while pinned
 * to its carrier; none of those may be inside betree, whose waits all go through
 * {@code java.util.concurrent} locks rather than monitors.
 */
class VirtualThreadsTest {
    private static final int THREADS = 200;
    private static final int COMMITS_PER_THREAD = 20;

    @TempDir
    Path dir;

    @Test
    void hundredsOfVirtualThreadsCommitReadAndCheckpointWithoutPinning() throws Exception {
        assumeTrue(Runtime.version().feature() >= 21, "virtual threads need JDK 21+");
        List<String> pinnedInBetree = new CopyOnWriteArrayList<>();
        try (RecordingStream jfr = new RecordingStream();
                Environment env = Environment.open(dir, EnvironmentOptions.defaults()
                        .cacheBytes(16L << 20).durability(Durability.SYNC)
                        .checkpointInterval(Duration.ofMillis(200)))) {
            jfr.enable("jdk.VirtualThreadPinned").withThreshold(Duration.ZERO).withStackTrace();
            jfr.onEvent("jdk.VirtualThreadPinned", e -> {
                if (e.getStackTrace() == null) {
                    return;
                }
                StringBuilder trace = new StringBuilder();
                boolean inBetree = false;
                boolean loadingClasses = false;
                for (RecordedFrame f : e.getStackTrace().getFrames()) {
                    String type = f.getMethod().getType().getName();
                    inBetree |= type.startsWith("io.betree.") && !type.startsWith("io.betree.systest.");
                    loadingClasses |= type.equals("java.lang.ClassLoader");
                    trace.append("\n    at ").append(type).append('.').append(f.getMethod().getName());
                }
                // Loading a class pins in the JVM itself, whoever asks; the warm-up below loads
                // betree's classes first, and what is left is not betree's doing.
                if (inBetree && !loadingClasses) {
                    pinnedInBetree.add(trace.toString());
                }
            });
            IndexOptions shape = IndexOptions.defaults().nodeSize(256 << 10).basementSize(16 << 10);
            work(env, env.openIndex("warm-up", shape), 0);
            jfr.startAsync();
            Index index = env.openIndex("vt", shape);
            // ExecutorService is AutoCloseable only from JDK 19 on, and this compiles for 17.
            ExecutorService threads = virtualThreadPerTask();
            try {
                List<Future<?>> done = new ArrayList<>();
                for (int t = 0; t < THREADS; t++) {
                    int thread = t;
                    done.add(threads.submit(() -> work(env, index, thread)));
                }
                for (Future<?> f : done) {
                    f.get(2, TimeUnit.MINUTES);
                }
            } finally {
                threads.shutdownNow();
            }
            env.checkpoint();
            long rows = 0;
            try (Cursor c = index.scan()) {
                while (c.next()) {
                    rows++;
                }
            }
            assertEquals((long) THREADS * COMMITS_PER_THREAD, rows);
            assertArrayEquals(value(7, COMMITS_PER_THREAD - 1), index.get(key(7, COMMITS_PER_THREAD - 1)));
        }
        assertEquals(List.of(), pinnedInBetree, "virtual threads pinned their carrier inside betree");
    }

    private static void work(Environment env, Index index, int thread) {
        for (int i = 0; i < COMMITS_PER_THREAD; i++) {
            try (Transaction txn = env.begin()) {
                index.put(txn, key(thread, i), value(thread, i));
                txn.commit();
            } catch (WriteConflictException e) {
                throw new AssertionError("threads write disjoint keys", e);
            }
            assertArrayEquals(value(thread, i), index.get(key(thread, i)));
            if (i % 5 == 4) {
                try (Cursor c = index.scan(key(thread, 0), key(thread + 1, 0))) {
                    int n = 0;
                    while (c.next()) {
                        n++;
                    }
                    assertEquals(i + 1, n, "rows of thread " + thread);
                }
            }
            if (thread % 50 == 0 && i == COMMITS_PER_THREAD / 2) {
                env.checkpoint();
            }
        }
    }

    private static byte[] key(int thread, int i) {
        return ByteBuffer.allocate(8).putInt(thread).putInt(i).array();
    }

    private static byte[] value(int thread, int i) {
        return ("value " + thread + "/" + i).getBytes(java.nio.charset.StandardCharsets.UTF_8);
    }

    /** {@code Executors.newVirtualThreadPerTaskExecutor()}, called reflectively: this code compiles for JDK 17. */
    private static ExecutorService virtualThreadPerTask() throws ReflectiveOperationException {
        return (ExecutorService) java.util.concurrent.Executors.class.getMethod("newVirtualThreadPerTaskExecutor")
                .invoke(null);
    }
}
