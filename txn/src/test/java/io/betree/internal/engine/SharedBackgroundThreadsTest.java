package io.betree.internal.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.betree.compression.Compressors;
import io.betree.internal.log.BackgroundScheduler;
import io.betree.internal.storage.FileHandle;
import io.betree.internal.storage.ForwardingFileHandle;
import io.betree.internal.storage.ForwardingStorageEnv;
import io.betree.internal.storage.StorageEnv;
import io.betree.internal.tree.TreeConfig;
import io.betree.internal.txn.WriteOp;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Many environments in one process share the background threads: their periodic checkpoints and
 * log syncs run on the process's {@link BackgroundScheduler}, every environment still gets them, and
 * closing takes its tasks away. The node caches' evictors are shared too ({@code betree-evictor}).
 */
class SharedBackgroundThreadsTest {
    private static final int ENVIRONMENTS = 50;
    private static final Duration CHECKPOINT_EVERY = Duration.ofMillis(100);
    private static final Duration SYNC_EVERY = Duration.ofMillis(20);
    /** Small log segments, so that a few commits roll the log and a checkpoint then deletes some. */
    private static final long SEGMENT_BYTES = 4096;
    /** Threads the process may add beyond those one environment brought: none expected. */
    private static final int SLACK = 2;

    @TempDir
    Path root;

    private final SyncLedger storage = new SyncLedger(StorageEnv.defaultEnv());

    @Test
    void manyEnvironmentsShareTheBackgroundThreadsAndEachGetsItsPeriodicWork() throws Exception {
        int tasksBefore = BackgroundScheduler.scheduledTasks();
        EngineSettings settings = new EngineSettings(16L << 20, false, SYNC_EVERY, CHECKPOINT_EVERY, SEGMENT_BYTES);
        TreeConfig config = new TreeConfig(4 << 20, 64 << 10, 16, Compressors.create("none"));
        List<Engine> engines = new ArrayList<>();
        try {
            engines.add(Engine.open(root.resolve(name(0)), storage, settings));
            write(engines.get(0), config);
            List<String> oneEnvironment = backgroundThreads();

            for (int i = 1; i < ENVIRONMENTS; i++) {
                Engine e = Engine.open(root.resolve(name(i)), storage, settings);
                engines.add(e);
                write(e, config);
            }
            List<String> all = backgroundThreads();
            assertTrue(all.size() <= oneEnvironment.size() + SLACK, "betree threads with one"
                    + " environment: " + oneEnvironment + "; with " + ENVIRONMENTS + ": " + all);
            for (String t : all) {
                assertTrue(!t.contains("env-"), "a thread of one environment: " + t + " in " + all);
            }
            assertTrue(count(all, "betree-checkpointer") <= 1 && count(all, "betree-log-syncer") <= 1, all.toString());
            // Two tasks per environment (a checkpoint and a log sync); a run in progress is out of
            // the queue, at most one per thread.
            int scheduled = BackgroundScheduler.scheduledTasks() - tasksBefore;
            assertTrue(scheduled <= 2 * ENVIRONMENTS && scheduled >= 2 * ENVIRONMENTS - 2,
                    scheduled + " tasks scheduled for " + ENVIRONMENTS + " environments");

            // Periodic checkpoints, on the shared thread, for every environment: the data file is
            // synced there, and the log segments the commits filled are deleted.
            waitUntil(() -> {
                for (int i = 0; i < ENVIRONMENTS; i++) {
                    if (storage.syncs(name(i), "betree.data", "betree-checkpointer") == 0
                            || logSegments(root.resolve(name(i))).size() != 1) {
                        return false;
                    }
                }
                return true;
            }, () -> "a periodic checkpoint of every environment; " + storage);
            for (int i = 0; i < ENVIRONMENTS; i++) {
                String segment = logSegments(root.resolve(name(i))).get(0);
                assertTrue(!segment.equals("wal-00000000000000000000.log"),
                        name(i) + ": the log rolled and the segments before the checkpoint were deleted: " + segment);
            }

            // Periodic log syncs, on the shared thread, for every environment: commit once more
            // (commits do not sync themselves here) and see the log synced there.
            Map<String, Long> before = new ConcurrentHashMap<>();
            for (int i = 0; i < ENVIRONMENTS; i++) {
                before.put(name(i), storage.syncs(name(i), "wal-", "betree-log-syncer"));
                put(engines.get(i), "last", config);
            }
            waitUntil(() -> {
                for (int i = 0; i < ENVIRONMENTS; i++) {
                    if (storage.syncs(name(i), "wal-", "betree-log-syncer") <= before.get(name(i))) {
                        return false;
                    }
                }
                return true;
            }, () -> "a periodic log sync of every environment; " + storage);
        } finally {
            for (Engine e : engines) {
                e.close();
            }
        }
        assertEquals(tasksBefore, BackgroundScheduler.scheduledTasks(), "tasks left behind by closed environments");
        long syncsAtClose = storage.total();
        Thread.sleep(3 * CHECKPOINT_EVERY.toMillis());
        assertEquals(syncsAtClose, storage.total(), "a closed environment's periodic checkpoint or sync ran: "
                + storage);
    }

    private static String name(int i) {
        return String.format("env-%02d", i);
    }

    /** Enough commits to roll the small log segments a few times. */
    private static void write(Engine engine, TreeConfig config) {
        for (int i = 0; i < 40; i++) {
            put(engine, "key-" + i, config);
        }
    }

    private static void put(Engine engine, String key, TreeConfig config) {
        StoredIndex index = engine.openIndex("rows", config);
        byte[] value = new byte[200];
        engine.commit(-1, List.of(WriteOp.put(index.id(), index.tree(), key.getBytes(StandardCharsets.UTF_8), value)));
    }

    /** Live betree threads, by name. */
    private static List<String> backgroundThreads() {
        return Thread.getAllStackTraces().keySet().stream().filter(Thread::isAlive).map(Thread::getName)
                .filter(n -> n.startsWith("betree-")).sorted()
                .collect(Collectors.toList());
    }

    private static long count(List<String> names, String name) {
        return names.stream().filter(name::equals).count();
    }

    private static List<String> logSegments(Path dir) {
        try (Stream<Path> files = Files.list(dir)) {
            return files.map(p -> p.getFileName().toString()).filter(n -> n.startsWith("wal-") && n.endsWith(".log"))
                    .sorted().collect(Collectors.toList());
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    private static void waitUntil(BooleanSupplier condition, Supplier<String> what)
            throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting for " + what.get());
            }
            Thread.sleep(10);
        }
    }

    /** Counts file syncs by environment directory, file name prefix and the thread that made them. */
    private static final class SyncLedger extends ForwardingStorageEnv {
        private final Map<String, AtomicLong> syncs = new ConcurrentHashMap<>();
        private final AtomicLong total = new AtomicLong();

        SyncLedger(StorageEnv delegate) {
            super(delegate);
        }

        long syncs(String environment, String filePrefix, String thread) {
            long n = 0;
            for (Map.Entry<String, AtomicLong> e : syncs.entrySet()) {
                String[] k = e.getKey().split("\\|");
                if (k[0].equals(environment) && k[1].startsWith(filePrefix) && k[2].equals(thread)) {
                    n += e.getValue().get();
                }
            }
            return n;
        }

        long total() {
            return total.get();
        }

        @Override
        public String toString() {
            return "syncs " + new TreeMap<>(syncs);
        }

        @Override
        public FileHandle open(Path path) throws IOException {
            FileHandle file = delegate.open(path);
            String key = path.getParent().getFileName() + "|" + path.getFileName() + "|";
            return new ForwardingFileHandle(file) {
                @Override
                public void sync() throws IOException {
                    total.incrementAndGet();
                    syncs.computeIfAbsent(key + Thread.currentThread().getName(), k -> new AtomicLong())
                            .incrementAndGet();
                    super.sync();
                }
            };
        }
    }
}
