package io.betree.internal.storage;

import static io.betree.internal.storage.StorageTestSupport.payload;
import static io.betree.internal.storage.StorageTestSupport.read;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.betree.compression.BlockCompressor;
import io.betree.compression.Compressors;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Crash safety and I/O fault handling of {@link BlockFile}, through {@link FaultInjectingStorageEnv}. */
class BlockFileCrashTest {

    private static final BlockCompressor LZ4 = Compressors.create("lz4");

    @TempDir
    Path dir;

    private final FaultInjectingStorageEnv env = new FaultInjectingStorageEnv();

    private Path file() {
        return dir.resolve("data.betree");
    }

    /** Block number to payload seed; what a checkpoint should hold. */
    private static Map<Long, Long> model(BlockFile f, Map<Long, Long> blocks, long version) throws IOException {
        for (Map.Entry<Long, Long> e : blocks.entrySet()) {
            e.setValue(version * 1000 + e.getKey());
            f.write(e.getKey(), ByteBuffer.wrap(payload(e.getValue(), 6000, true)), LZ4);
        }
        return new HashMap<>(blocks);
    }

    private static void assertHolds(BlockFile f, Map<Long, Long> expected) throws IOException {
        assertEquals(expected.size(), f.stats().blockCount());
        for (Map.Entry<Long, Long> e : expected.entrySet()) {
            assertArrayEquals(payload(e.getValue(), 6000, true), read(f, e.getKey()), "block " + e.getKey());
        }
    }

    private static byte[] rawBytes(Path path, long offset, int length) throws IOException {
        byte[] all = Files.readAllBytes(path);
        byte[] out = new byte[length];
        System.arraycopy(all, (int) offset, out, 0, length);
        return out;
    }

    @Test
    void checkpointedBlocksAreNeverOverwrittenAndSurviveACrash() throws IOException {
        Map<Long, Long> checkpointed;
        long rewritten;
        long checkpointedOffset;
        byte[] checkpointedBytes;
        BlockFile f = BlockFile.open(env, file());
        Map<Long, Long> blocks = new HashMap<>();
        for (int i = 0; i < 8; i++) {
            blocks.put(f.allocateBlockNumber(), 0L);
        }
        checkpointed = model(f, blocks, 1);
        f.checkpoint(ByteBuffer.wrap(new byte[] {1}));
        rewritten = 3;
        checkpointedOffset = f.blockOffset(rewritten);
        checkpointedBytes = rawBytes(file(), checkpointedOffset, 4096);
        for (int round = 2; round < 6; round++) {
            model(f, blocks, round);
        }
        f.freeBlockNumber(5);
        long added = f.allocateBlockNumber();
        f.write(added, ByteBuffer.wrap(payload(99, 6000, true)), LZ4);
        assertArrayEquals(checkpointedBytes, rawBytes(file(), checkpointedOffset, 4096));
        env.crash();

        try (BlockFile g = BlockFile.open(env, file())) {
            assertEquals(ByteBuffer.wrap(new byte[] {1}), g.rootRecord());
            assertHolds(g, checkpointed);
            assertEquals(checkpointedOffset, g.blockOffset(rewritten));
        }
    }

    @Test
    void aCrashAtEveryWriteOfACheckpointLeavesTheOldOrTheNewCheckpoint() throws IOException {
        for (int k = 0; ; k++) {
            Path path = dir.resolve("k" + k + ".betree");
            BlockFile f = BlockFile.open(env, path);
            Map<Long, Long> blocks = new HashMap<>();
            for (int i = 0; i < 6; i++) {
                blocks.put(f.allocateBlockNumber(), 0L);
            }
            Map<Long, Long> old = model(f, blocks, 1);
            f.checkpoint(ByteBuffer.wrap(new byte[] {1}));
            Map<Long, Long> next = model(f, blocks, 2);
            env.onlyFiles(path::equals);
            env.failWritesAfter(k);
            boolean done;
            try {
                f.checkpoint(ByteBuffer.wrap(new byte[] {2}));
                done = true;
            } catch (IOException e) {
                assertTrue(e.getMessage().contains("simulated"), e.getMessage());
                done = false;
            }
            env.crash(new Random(k));
            try (BlockFile g = BlockFile.open(env, path)) {
                byte root = g.rootRecord().get(0);
                assertTrue(root == 1 || root == 2);
                if (done) {
                    assertEquals(2, root);
                }
                assertHolds(g, root == 1 ? old : next);
            }
            if (done) {
                assertTrue(k >= 2, "a checkpoint writes at least a table and a header");
                return;
            }
        }
    }

    @Test
    void aFailedSyncLeavesTheOldCheckpointAndRefusesFurtherWrites() throws IOException {
        for (int failingSync = 1; failingSync <= 2; failingSync++) {
            Path path = dir.resolve("s" + failingSync + ".betree");
            BlockFile f = BlockFile.open(env, path);
            Map<Long, Long> blocks = new HashMap<>();
            blocks.put(f.allocateBlockNumber(), 0L);
            Map<Long, Long> old = model(f, blocks, 1);
            f.checkpoint(null);
            model(f, blocks, 2);
            env.failSync(failingSync);
            IOException e = assertThrows(IOException.class, () -> f.checkpoint(null));
            assertTrue(e.getMessage().contains("simulated sync failure"), e.getMessage());
            IOException refused = assertThrows(IOException.class,
                    () -> f.write(0, ByteBuffer.wrap(new byte[10]), LZ4));
            assertTrue(refused.getMessage().contains("reopen"), refused.getMessage());
            assertThrows(IOException.class, () -> f.checkpoint(null));
            read(f, 0);
            env.crash();
            try (BlockFile g = BlockFile.open(env, path)) {
                assertHolds(g, old);
                g.write(0, ByteBuffer.wrap(payload(5, 6000, true)), LZ4);
                g.checkpoint(null);
            }
        }
    }

    @Test
    void aFailedBlockWriteKeepsThePreviousVersionAndTheFileUsable() throws IOException {
        try (BlockFile f = BlockFile.open(env, file())) {
            long b = f.allocateBlockNumber();
            f.write(b, ByteBuffer.wrap(payload(1, 6000, true)), LZ4);
            env.failWrite(1);
            assertThrows(IOException.class, () -> f.write(b, ByteBuffer.wrap(payload(2, 6000, true)), LZ4));
            assertArrayEquals(payload(1, 6000, true), read(f, b));
            env.tearWrite(1, 100);
            assertThrows(IOException.class, () -> f.write(b, ByteBuffer.wrap(payload(3, 6000, true)), LZ4));
            assertArrayEquals(payload(1, 6000, true), read(f, b));
            f.write(b, ByteBuffer.wrap(payload(4, 6000, true)), LZ4);
            f.checkpoint(null);
            assertEquals(BlockFormat.ALIGNMENT, f.stats().pinnedBytes(), "only the table is pinned: " + f.stats());
        }
        try (BlockFile f = BlockFile.open(env, file())) {
            assertArrayEquals(payload(4, 6000, true), read(f, 0));
        }
    }

    @Test
    void diskFullFailsWritesAndCheckpointsCleanly() throws IOException {
        Map<Long, Long> durable = new HashMap<>();
        try (BlockFile f = BlockFile.open(env, file())) {
            for (int i = 0; i < 4; i++) {
                long b = f.allocateBlockNumber();
                f.write(b, ByteBuffer.wrap(payload(b, 6000, false)), Compressors.forId(0));
                durable.put(b, b);
            }
            f.checkpoint(null);
            env.setSpaceBudget(50_000);
            List<Long> added = new ArrayList<>();
            IOException full = null;
            for (int i = 0; i < 100 && full == null; i++) {
                try {
                    long b = f.allocateBlockNumber();
                    added.add(b);
                    f.write(b, ByteBuffer.wrap(payload(100 + i, 6000, false)), Compressors.forId(0));
                    f.checkpoint(null);
                } catch (IOException e) {
                    full = e;
                }
            }
            assertTrue(full != null && full.getMessage().contains("No space left on device"), String.valueOf(full));
            env.clearFaults();
            for (long b : added) {
                f.freeBlockNumber(b);
            }
            f.checkpoint(null);
        }
        env.crash();
        try (BlockFile f = BlockFile.open(env, file())) {
            for (Map.Entry<Long, Long> e : durable.entrySet()) {
                assertArrayEquals(payload(e.getValue(), 6000, false), read(f, e.getKey()));
            }
            assertFalse(f.isAllocated(4));
        }
    }

    @Test
    void aTornHeaderFallsBackToThePreviousCheckpoint() throws IOException {
        BlockFile f = BlockFile.open(env, file());
        Map<Long, Long> blocks = new HashMap<>();
        blocks.put(f.allocateBlockNumber(), 0L);
        Map<Long, Long> old = model(f, blocks, 1);
        f.checkpoint(ByteBuffer.wrap(new byte[] {1}));
        model(f, blocks, 2);
        env.tearWrite(2, 60); // write 1: the table; write 2: the header
        assertThrows(IOException.class, () -> f.checkpoint(ByteBuffer.wrap(new byte[] {2})));
        f.close();
        // The process died, but the torn header reached the disk: no crash() to undo it.
        try (BlockFile g = BlockFile.open(StorageEnv.defaultEnv(), file())) {
            assertEquals(ByteBuffer.wrap(new byte[] {1}), g.rootRecord());
            assertHolds(g, old);
        }
    }

    @Test
    void aCrashWhileCreatingLeavesNoFileOrAValidOne() throws IOException {
        env.failSync(1);
        assertThrows(IOException.class, () -> BlockFile.open(env, file()));
        assertFalse(Files.exists(file()));
        env.crash();
        env.failWritesAfter(1);
        assertThrows(IOException.class, () -> BlockFile.open(env, file()));
        env.clearFaults();
        try (BlockFile f = BlockFile.open(env, file())) {
            assertNull(f.rootRecord());
        }
        env.crash(new Random(7));
        try (BlockFile f = BlockFile.open(env, file())) {
            assertNull(f.rootRecord());
            assertEquals(1, f.checkpointSequence());
        }
    }

    @Test
    void aFailedBackgroundSyncMakesTheFileRefuseWrites() throws Exception {
        try (BlockFile f = BlockFile.open(env, file())) {
            f.checkpoint(ByteBuffer.wrap(new byte[] {1}));
            long syncsBefore = env.syncCount();
            env.failAllSyncs(true);
            // Incompressible blocks, so that the bytes written pass the background sync's threshold.
            Random rnd = new Random(11);
            long written = 0;
            IOException refused = null;
            long deadline = System.nanoTime() + 30_000_000_000L;
            while (refused == null && System.nanoTime() < deadline) {
                byte[] bytes = new byte[256 << 10];
                rnd.nextBytes(bytes);
                try {
                    f.write(f.allocateBlockNumber(), ByteBuffer.wrap(bytes), LZ4);
                    written += bytes.length;
                } catch (IOException e) {
                    refused = e;
                }
                if (written >= BlockFile.SYNC_AHEAD_BYTES) {
                    Thread.sleep(1); // the sync runs on the background thread
                }
            }
            assertTrue(env.syncCount() > syncsBefore, "no background sync was attempted");
            assertTrue(refused != null && refused.getMessage().contains("refuses writes"),
                    "a failed background sync must make the file refuse writes: " + refused);
            assertThrows(IOException.class, () -> f.checkpoint(ByteBuffer.wrap(new byte[] {2})));
        }
        env.clearFaults();
        try (BlockFile g = BlockFile.open(env, file())) {
            assertEquals(ByteBuffer.wrap(new byte[] {1}), g.rootRecord(), "reopening finds the last checkpoint");
        }
    }

    @Test
    void readErrorsAreIoExceptionsNotCorruption() throws IOException {
        try (BlockFile f = BlockFile.open(env, file())) {
            long b = f.allocateBlockNumber();
            f.write(b, ByteBuffer.wrap(payload(1, 100, true)), LZ4);
            env.failReads(true);
            IOException e = assertThrows(IOException.class, () -> f.read(b, ByteBuffer::allocate));
            assertTrue(e.getMessage().contains("simulated read failure"));
        }
    }

    /**
     * Random operations with checkpoints, some of which fail half way, then a crash that lets a random
     * subset of the unsynced writes reach the disk, some torn: the reopened file must hold exactly the
     * last successful checkpoint, or the failed one after it.
     */
    @Test
    void randomOperationsAndRandomCrashes() throws IOException {
        int failedCheckpoints = 0;
        int lostWrites = 0;
        for (int seed = 0; seed < 40; seed++) {
            Random random = new Random(seed);
            Path path = dir.resolve("r" + seed + ".betree");
            BlockFile f = BlockFile.open(env, path);
            Map<Long, Long> live = new HashMap<>();
            Map<Long, Long> lastCheckpoint = new HashMap<>();
            Map<Long, Long> attempted = null;
            List<Long> numbers = new ArrayList<>();
            int steps = 20 + random.nextInt(60);
            try {
                for (int step = 0; step < steps; step++) {
                    int op = random.nextInt(10);
                    if (op < 2 || numbers.isEmpty()) {
                        long b = f.allocateBlockNumber();
                        numbers.add(b);
                        write(f, live, b, random.nextLong());
                    } else if (op < 7) {
                        write(f, live, numbers.get(random.nextInt(numbers.size())), random.nextLong());
                    } else if (op < 8) {
                        long b = numbers.remove(random.nextInt(numbers.size()));
                        f.freeBlockNumber(b);
                        live.remove(b);
                    } else {
                        boolean failing = random.nextInt(4) == 0;
                        if (failing) {
                            env.onlyFiles(path::equals);
                            if (random.nextBoolean()) {
                                env.failWritesAfter(random.nextInt(2));
                            } else {
                                env.failSync(1 + random.nextInt(2));
                            }
                        }
                        try {
                            f.checkpoint(ByteBuffer.allocate(8).putLong(0, step));
                            lastCheckpoint = new HashMap<>(live);
                        } catch (IOException e) {
                            attempted = new HashMap<>(live);
                            break;
                        }
                    }
                }
            } finally {
                lostWrites += env.hasUnsyncedChanges(path) ? 1 : 0;
                env.crash(random);
            }
            failedCheckpoints += attempted != null ? 1 : 0;
            try (BlockFile g = BlockFile.open(env, path)) {
                Map<Long, Long> expected = lastCheckpoint;
                if (attempted != null && !matches(g, lastCheckpoint)) {
                    expected = attempted;
                }
                if (!matches(g, expected)) {
                    fail("seed " + seed + ": reopened file matches neither checkpoint");
                }
            }
        }
        assertTrue(failedCheckpoints > 3 && lostWrites > 10, failedCheckpoints + " failed checkpoints, "
                + lostWrites + " crashes with unsynced writes");
    }

    private static void write(BlockFile f, Map<Long, Long> live, long b, long seed) throws IOException {
        int size = 100 + (int) Math.floorMod(seed, 9000L);
        f.write(b, ByteBuffer.wrap(payload(seed, size, seed % 2 == 0)), LZ4);
        live.put(b, seed);
    }

    private static boolean matches(BlockFile f, Map<Long, Long> expected) throws IOException {
        if (f.stats().blockCount() != expected.size()) {
            return false;
        }
        for (Map.Entry<Long, Long> e : expected.entrySet()) {
            long seed = e.getValue();
            int size = 100 + (int) Math.floorMod(seed, 9000L);
            if (!f.isAllocated(e.getKey())
                    || !java.util.Arrays.equals(payload(seed, size, seed % 2 == 0), read(f, e.getKey()))) {
                return false;
            }
        }
        return true;
    }
}
