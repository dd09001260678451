package io.betree.internal.tree;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.betree.compression.Compressors;
import io.betree.internal.cache.NodeCache;
import io.betree.internal.fault.FailureListener;
import io.betree.internal.memory.NodeMemory;
import io.betree.internal.storage.BlockFile;
import io.betree.internal.storage.StorageEnv;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Flush steps of one tree run in several subtrees at once ({@link SubtreeLatches}) while a writer
 * appends, readers look keys up and scan ranges at snapshots of their own, and a checker walks the
 * whole tree now and then. Small nodes and a small cache give a tree of several levels whose root
 * children split and merge often, with evicted nodes read back by steps and readers alike. Every
 * read is checked against the writer's history of each key: a reader must see, for every key, the
 * newest write at or below its snapshot, never a later one and never a gap left by a buffer in
 * transit between the root and a child. The tree passes its checker at the end and leaves no
 * memory behind.
 */
class SubtreeConcurrencyTest {
    private static final int KEYS = 4_000;
    private static final int WRITES = 150_000;
    private static final int READERS = 3;

    @TempDir
    Path dir;

    /** msns of every write of each key, in order; a list is read and appended under its own lock. */
    private final List<List<Long>> history = new ArrayList<>();
    /** Every write up to this msn is in the tree. */
    private final AtomicLong applied = new AtomicLong();
    /** Each reader's floor while it reads (at or below its snapshot), else {@link Long#MAX_VALUE}. */
    private final AtomicLongArray snapshots = new AtomicLongArray(READERS);

    @Test
    void readersSeeTheirSnapshotsWhileStepsRunInSeveralSubtrees() throws Exception {
        for (int k = 0; k < KEYS; k++) {
            history.add(new ArrayList<>());
        }
        for (int r = 0; r < READERS; r++) {
            snapshots.set(r, Long.MAX_VALUE);
        }
        // A reader registers the applied msn as a floor, then takes its snapshot from the applied
        // msn read again (at or above it). The horizon reads the applied msn first: a horizon
        // computed before the floor is registered is at most the applied msn then, at or below the
        // snapshot read later; one that sees the floor is at most the floor. (Registering the
        // snapshot itself, read before, let a horizon read in between pass it.)
        MvccHorizon horizon = () -> {
            long oldest = applied.get();
            for (int r = 0; r < READERS; r++) {
                oldest = Math.min(oldest, snapshots.get(r));
            }
            return oldest;
        };
        BlockFile file = BlockFile.open(StorageEnv.defaultEnv(), dir.resolve("tree.data"));
        NodeMemory memory = new NodeMemory();
        NodeCache cache = new NodeCache(new BlockFileBacking(file, memory), memory, 8L << 20);
        TreeConfig config = new TreeConfig(48 << 10, 4 << 10, 6, Compressors.create("lz4"));
        BeTree tree = BeTree.create(cache, file, config, horizon, FailureListener.IGNORE);
        AtomicBoolean done = new AtomicBoolean();
        ExecutorService pool = Executors.newFixedThreadPool(READERS + 1);
        try {
            List<Future<Long>> readers = new ArrayList<>();
            for (int r = 0; r < READERS; r++) {
                int id = r;
                readers.add(pool.submit(() -> read(tree, id, done)));
            }
            Future<?> checker = pool.submit(() -> {
                while (!done.get()) {
                    tree.checkInvariants(file.path());
                    Thread.sleep(50);
                }
                return null;
            });
            write(tree);
            done.set(true);
            checker.get(60, TimeUnit.SECONDS);
            for (Future<Long> f : readers) {
                assertTrue(f.get(60, TimeUnit.SECONDS) > 100, "each reader checks many reads while writes go on");
            }
            while (tree.flushStep()) {
                // Leaves no flush to do, so that the final reads also cross leaves.
            }
            for (int k = 0; k < KEYS; k++) {
                checkGet(tree, k, applied.get());
            }
            tree.checkInvariants(file.path());
        } finally {
            done.set(true);
            pool.shutdownNow();
            tree.close();
            cache.releaseAll();
            file.close();
        }
        assertEquals(0, memory.used(), "off-heap bytes left after the cache released everything");
    }

    private void write(BeTree tree) {
        Random rnd = new Random(20261125);
        for (long msn = 1; msn <= WRITES; msn++) {
            int k = rnd.nextInt(KEYS);
            List<Long> h = history.get(k);
            synchronized (h) {
                h.add(msn);
            }
            if (isDelete(msn)) {
                tree.write(MessageType.DELETE, key(k), null, msn);
            } else {
                tree.write(MessageType.PUT, key(k), value(k, msn), msn);
            }
            applied.set(msn);
        }
    }

    /** A reader's loop: point reads and scans at fresh snapshots; returns how many reads it checked. */
    private long read(BeTree tree, int id, AtomicBoolean done) {
        Random rnd = new Random(id);
        long reads = 0;
        while (!done.get()) {
            snapshots.set(id, applied.get());
            long snapshot = applied.get();
            try {
                if (rnd.nextInt(8) == 0) {
                    int from = rnd.nextInt(KEYS);
                    reads += checkScan(tree, from, Math.min(KEYS, from + 1 + rnd.nextInt(400)), snapshot);
                } else {
                    for (int i = 0; i < 50; i++) {
                        checkGet(tree, rnd.nextInt(KEYS), snapshot);
                        reads++;
                    }
                }
            } finally {
                snapshots.set(id, Long.MAX_VALUE);
            }
        }
        return reads;
    }

    private void checkGet(BeTree tree, int k, long snapshot) {
        byte[] expected = expected(k, snapshot);
        byte[] actual = tree.get(key(k), snapshot);
        if (expected == null) {
            assertNull(actual, () -> "key " + k + " at snapshot " + snapshot + " should be absent");
        } else {
            assertArrayEquals(expected, actual, () -> "key " + k + " at snapshot " + snapshot);
        }
    }

    /** Scans keys {@code [from, to)} batch by batch; returns how many keys it compared. */
    private int checkScan(BeTree tree, int from, int to, long snapshot) {
        List<Integer> seen = new ArrayList<>();
        byte[] next = key(from);
        while (next != null) {
            ScanBatch batch = tree.scanBatch(next, key(to), snapshot, null, null);
            for (int i = 0; i < batch.size(); i++) {
                int k = ByteBuffer.wrap(batch.key(i)).getInt();
                assertArrayEquals(expected(k, snapshot), batch.value(i), () -> "scanned key " + k + " at " + snapshot);
                seen.add(k);
            }
            next = batch.resumeKey();
        }
        List<Integer> live = new ArrayList<>();
        for (int k = from; k < to; k++) {
            if (expected(k, snapshot) != null) {
                live.add(k);
            }
        }
        assertEquals(live, seen, () -> "keys of [" + from + ", " + to + ") at snapshot " + snapshot);
        return to - from;
    }

    /** The value of key {@code k} a snapshot at {@code snapshot} sees, from the writer's history. */
    private byte[] expected(int k, long snapshot) {
        List<Long> h = history.get(k);
        long newest = 0;
        synchronized (h) {
            for (int i = h.size() - 1; i >= 0; i--) {
                if (h.get(i) <= snapshot) {
                    newest = h.get(i);
                    break;
                }
            }
        }
        return newest == 0 || isDelete(newest) ? null : value(k, newest);
    }

    private static boolean isDelete(long msn) {
        return msn % 5 == 0;
    }

    private static byte[] key(int k) {
        return ByteBuffer.allocate(4).putInt(k).array();
    }

    private static byte[] value(int k, long msn) {
        byte[] v = new byte[12 + (int) ((msn * 31 + k) % 90)];
        ByteBuffer.wrap(v).putLong(msn).putInt(k);
        Arrays.fill(v, 12, v.length, (byte) msn);
        return v;
    }
}
