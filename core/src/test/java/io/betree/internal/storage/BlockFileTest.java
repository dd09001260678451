package io.betree.internal.storage;

import static io.betree.internal.storage.StorageTestSupport.payload;
import static io.betree.internal.storage.StorageTestSupport.read;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.betree.compression.BlockCompressor;
import io.betree.compression.Compressors;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Round trips, space management and concurrency of {@link BlockFile} on real files. */
class BlockFileTest {

    private static final StorageEnv ENV = StorageEnv.defaultEnv();
    private static final BlockCompressor NONE = Compressors.forId(0);

    @TempDir
    Path dir;

    private Path file() {
        return dir.resolve("data.betree");
    }

    @Test
    void newFileIsValidImmediately() throws IOException {
        try (BlockFile f = BlockFile.open(ENV, file())) {
            assertNull(f.rootRecord());
            assertEquals(1, f.checkpointSequence());
        }
        assertFalse(Files.exists(dir.resolve("data.betree" + BlockFile.CREATING_SUFFIX)));
        try (BlockFile f = BlockFile.open(ENV, file())) {
            assertNull(f.rootRecord());
            assertEquals(1, f.checkpointSequence());
            assertEquals(0, f.stats().blockCount());
        }
    }

    @Test
    void roundTripWithEveryCodec() throws IOException {
        Set<Integer> ids = new TreeSet<>();
        Map<Long, byte[]> expected = new HashMap<>();
        try (BlockFile f = BlockFile.open(ENV, file())) {
            long seed = 0;
            for (String name : Compressors.names()) {
                BlockCompressor codec = Compressors.create(name);
                ids.add(codec.id());
                for (int size : new int[] {0, 1, 100, 4096 - BlockHeader.SIZE, 70_000}) {
                    for (boolean compressible : new boolean[] {true, false}) {
                        long b = f.allocateBlockNumber();
                        byte[] data = payload(seed++, size, compressible);
                        f.write(b, ByteBuffer.wrap(data), codec);
                        expected.put(b, data);
                        assertArrayEquals(data, read(f, b), name + " size " + size);
                    }
                }
            }
            f.checkpoint(null);
        }
        assertTrue(ids.containsAll(List.of(0, 1, 2, 3, 4)), "codec ids " + ids);
        try (BlockFile f = BlockFile.open(ENV, file())) {
            for (Map.Entry<Long, byte[]> e : expected.entrySet()) {
                assertArrayEquals(e.getValue(), read(f, e.getKey()));
            }
        }
    }

    @Test
    void compressesWhenItHelpsAndStoresRawOtherwise() throws IOException {
        BlockCompressor zstd = Compressors.create("zstd");
        try (BlockFile f = BlockFile.open(ENV, file())) {
            long small = f.allocateBlockNumber();
            f.write(small, ByteBuffer.wrap(payload(1, 200_000, true)), zstd);
            long raw = f.allocateBlockNumber();
            f.write(raw, ByteBuffer.wrap(payload(2, 200_000, false)), zstd);
            long smallLive = f.liveBytes();
            assertTrue(smallLive < 200_000 + BlockFormat.alignUp(200_000 + BlockHeader.SIZE), "live " + smallLive);
            assertArrayEquals(payload(2, 200_000, false), read(f, raw));
        }
    }

    @Test
    void aPrefixReadTakesThePartOfARawBlockItAsksForAndWholeBlocksOtherwise() throws IOException {
        BlockCompressor lz4 = Compressors.create("lz4");
        try (BlockFile f = BlockFile.open(ENV, file())) {
            long raw = f.allocateBlockNumber();
            byte[] rawData = payload(1, 50_000, false);
            f.write(raw, ByteBuffer.wrap(rawData), lz4); // random bytes: stored raw
            long packed = f.allocateBlockNumber();
            byte[] packedData = payload(2, 50_000, true);
            f.write(packed, ByteBuffer.wrap(packedData), lz4);
            long small = f.allocateBlockNumber();
            byte[] smallData = payload(3, 1_000, false);
            f.write(small, ByteBuffer.wrap(smallData), NONE);
            f.checkpoint(null);

            assertArrayEquals(java.util.Arrays.copyOf(rawData, 8_000), prefix(f, raw, 8_000));
            assertArrayEquals(packedData, prefix(f, packed, 8_000), "a compressed block is read whole");
            assertArrayEquals(smallData, prefix(f, small, 8_000), "a block no longer than the prefix is read whole");
            assertArrayEquals(rawData, prefix(f, raw, Integer.MAX_VALUE));
            assertArrayEquals(smallData, prefix(f, small, 1_000), "a payload of exactly the part's size");
            assertArrayEquals(java.util.Arrays.copyOf(smallData, 999), prefix(f, small, 999), "one byte short");
            assertArrayEquals(smallData, prefix(f, small, 1_001));
            assertThrows(IllegalArgumentException.class, () -> f.readPrefix(raw, 0, ByteBuffer::allocate));
            assertThrows(IllegalArgumentException.class,
                    () -> f.readPrefix(f.allocateBlockNumber(), 100, ByteBuffer::allocate));

            // Damage past the prefix goes unseen by the prefix (its reader checks what it takes),
            // not by a whole read; damage to the header is seen by both.
            StorageTestSupport.flipByte(file(), f.blockOffset(raw) + BlockHeader.SIZE + 20_000);
            assertArrayEquals(java.util.Arrays.copyOf(rawData, 8_000), prefix(f, raw, 8_000));
            assertThrows(io.betree.internal.fault.CorruptionException.class, () -> read(f, raw));
            StorageTestSupport.flipByte(file(), f.blockOffset(raw) + 8);
            assertThrows(io.betree.internal.fault.CorruptionException.class, () -> prefix(f, raw, 8_000));
        }
    }

    private static byte[] prefix(BlockFile f, long block, int bytes) throws IOException {
        ByteBuffer buf = f.readPrefix(block, bytes, ByteBuffer::allocate);
        byte[] out = new byte[buf.remaining()];
        buf.get(out);
        return out;
    }

    @Test
    void payloadBufferIsLeftUntouchedAndSlicesWork() throws IOException {
        try (BlockFile f = BlockFile.open(ENV, file())) {
            long b = f.allocateBlockNumber();
            byte[] data = payload(3, 1000, true);
            ByteBuffer direct = ByteBuffer.allocateDirect(1200);
            direct.position(100);
            direct.put(data);
            direct.position(100).limit(1100);
            f.write(b, direct, Compressors.create("lz4"));
            assertEquals(100, direct.position());
            assertEquals(1100, direct.limit());
            ByteBuffer out = f.read(b, n -> ByteBuffer.allocateDirect(n + 10));
            assertEquals(0, out.position());
            assertEquals(1000, out.remaining());
            byte[] back = new byte[1000];
            out.get(back);
            assertArrayEquals(data, back);
        }
    }

    @Test
    void largeBlocksRoundTrip() throws IOException {
        try (BlockFile f = BlockFile.open(ENV, file())) {
            long b = f.allocateBlockNumber();
            byte[] data = payload(4, 12 << 20, true);
            f.write(b, ByteBuffer.wrap(data), Compressors.create("lz4"));
            assertArrayEquals(data, read(f, b));
        }
    }

    @Test
    void misuseIsRejected() throws IOException {
        BlockFile f = BlockFile.open(ENV, file());
        assertThrows(IllegalArgumentException.class, () -> f.read(7, ByteBuffer::allocate));
        assertThrows(IllegalArgumentException.class, () -> f.write(7, ByteBuffer.allocate(1), NONE));
        assertThrows(IllegalArgumentException.class, () -> f.freeBlockNumber(7));
        long b = f.allocateBlockNumber();
        assertThrows(IllegalArgumentException.class, () -> f.read(b, ByteBuffer::allocate));
        assertThrows(IllegalArgumentException.class,
                () -> f.write(b, ByteBuffer.allocate(BlockFile.MAX_BLOCK_SIZE + 1), NONE));
        assertThrows(IllegalArgumentException.class,
                () -> f.checkpoint(ByteBuffer.allocate(BlockFile.MAX_ROOT_RECORD_SIZE + 1)));
        f.close();
        f.close();
        assertThrows(IllegalStateException.class, f::allocateBlockNumber);
        assertThrows(IllegalStateException.class, () -> f.read(b, ByteBuffer::allocate));
        assertThrows(IllegalStateException.class, () -> f.checkpoint(null));
    }

    @Test
    void blockNumbersAreReusedLowestFirstAndSurviveReopen() throws IOException {
        try (BlockFile f = BlockFile.open(ENV, file())) {
            for (int i = 0; i < 5; i++) {
                assertEquals(i, f.allocateBlockNumber());
            }
            f.freeBlockNumber(1);
            f.freeBlockNumber(3);
            assertEquals(1, f.allocateBlockNumber());
            f.write(1, ByteBuffer.wrap(new byte[] {42}), NONE);
            f.checkpoint(null);
        }
        try (BlockFile f = BlockFile.open(ENV, file())) {
            assertTrue(f.isAllocated(0));
            assertTrue(f.isAllocated(1));
            assertFalse(f.isAllocated(3));
            assertTrue(f.isAllocated(4));
            assertEquals(0, f.blockOffset(0), "allocated but never written");
            assertArrayEquals(new byte[] {42}, read(f, 1));
            assertEquals(3, f.allocateBlockNumber());
            assertEquals(5, f.allocateBlockNumber());
        }
    }

    @Test
    void rootRecordIsKeptWithTheCheckpoint() throws IOException {
        byte[] catalog = "catalog v1".getBytes(StandardCharsets.UTF_8);
        try (BlockFile f = BlockFile.open(ENV, file())) {
            ByteBuffer root = ByteBuffer.wrap(catalog);
            f.checkpoint(root);
            assertEquals(0, root.position());
            assertEquals(ByteBuffer.wrap(catalog), f.rootRecord());
            f.checkpoint(ByteBuffer.allocate(0));
            assertEquals(0, f.rootRecord().remaining());
            f.checkpoint(ByteBuffer.wrap(catalog));
        }
        try (BlockFile f = BlockFile.open(ENV, file())) {
            assertEquals(ByteBuffer.wrap(catalog), f.rootRecord());
            assertTrue(f.rootRecord().isReadOnly());
            assertEquals(4, f.checkpointSequence());
        }
    }

    @Test
    void spaceIsReusedAcrossCheckpoints() throws IOException {
        BlockCompressor codec = NONE;
        try (BlockFile f = BlockFile.open(ENV, file())) {
            long[] blocks = new long[20];
            for (int i = 0; i < blocks.length; i++) {
                blocks[i] = f.allocateBlockNumber();
            }
            long maxSize = 0;
            for (int round = 0; round < 60; round++) {
                for (long b : blocks) {
                    f.write(b, ByteBuffer.wrap(payload(round * 100 + b, 10_000, false)), codec);
                }
                f.checkpoint(ByteBuffer.wrap(new byte[] {(byte) round}));
                maxSize = Math.max(maxSize, f.fileSize());
            }
            long live = f.liveBytes();
            assertEquals(20 * BlockFormat.alignUp(10_000 + BlockHeader.SIZE), live);
            // Current versions, the checkpointed versions and a table or two: bounded, not growing.
            assertTrue(maxSize <= 2 * live + 64 * 1024, "file grew to " + maxSize + " for live " + live);
            assertTrue(Files.size(file()) <= f.fileSize());
        }
    }

    @Test
    void spaceWrittenSinceTheCheckpointIsReusedAtOnce() throws IOException {
        try (BlockFile f = BlockFile.open(ENV, file())) {
            long b = f.allocateBlockNumber();
            f.write(b, ByteBuffer.wrap(payload(1, 5000, false)), NONE);
            long offset = f.blockOffset(b);
            f.write(b, ByteBuffer.wrap(payload(2, 5000, false)), NONE);
            long second = f.blockOffset(b);
            assertTrue(second != offset);
            f.write(b, ByteBuffer.wrap(payload(3, 5000, false)), NONE);
            assertEquals(offset, f.blockOffset(b), "the uncheckpointed first version's space is reused");
            f.checkpoint(null);
            long checkpointed = f.blockOffset(b);
            f.write(b, ByteBuffer.wrap(payload(4, 5000, false)), NONE);
            f.write(b, ByteBuffer.wrap(payload(5, 5000, false)), NONE);
            f.write(b, ByteBuffer.wrap(payload(6, 5000, false)), NONE);
            assertTrue(f.blockOffset(b) != checkpointed);
            assertArrayEquals(payload(6, 5000, false), read(f, b));
        }
    }

    @Test
    void freeTailIsTruncatedAfterCheckpoints() throws IOException {
        try (BlockFile f = BlockFile.open(ENV, file())) {
            List<Long> blocks = new ArrayList<>();
            for (int i = 0; i < 30; i++) {
                long b = f.allocateBlockNumber();
                f.write(b, ByteBuffer.wrap(payload(i, 20_000, false)), NONE);
                blocks.add(b);
            }
            f.checkpoint(null);
            long full = f.fileSize();
            for (int i = 5; i < 30; i++) {
                f.freeBlockNumber(blocks.get(i));
            }
            f.checkpoint(null);
            f.checkpoint(null);
            long shrunk = f.fileSize();
            assertTrue(shrunk < full / 3, "file " + full + " -> " + shrunk);
            assertTrue(Files.size(file()) <= shrunk);
            assertTrue(f.stats().freeBytes() <= 2 * BlockFormat.ALIGNMENT, "the freed tail is gone: " + f.stats());
        }
        try (BlockFile f = BlockFile.open(ENV, file())) {
            for (int i = 0; i < 5; i++) {
                assertArrayEquals(payload(i, 20_000, false), read(f, i));
            }
        }
    }

    @Test
    void statsAddUp() throws IOException {
        try (BlockFile f = BlockFile.open(ENV, file())) {
            long b = f.allocateBlockNumber();
            f.write(b, ByteBuffer.wrap(payload(1, 10_000, false)), NONE);
            f.checkpoint(null);
            f.write(b, ByteBuffer.wrap(payload(2, 10_000, false)), NONE);
            BlockFileStats s = f.stats();
            assertEquals(1, s.blockCount());
            assertEquals(2, s.checkpointSequence());
            assertEquals(BlockFormat.alignUp(10_000 + BlockHeader.SIZE), s.liveBytes());
            assertTrue(s.pinnedBytes() >= s.liveBytes(), "the checkpointed version is pinned: " + s);
            assertEquals(s.fileSize(), BlockFormat.DATA_START + s.liveBytes() + s.freeBytes() + s.pinnedBytes());
        }
    }

    @Test
    void anAllocatorThatWritesBlocksDoesNotDisturbTheRead() throws IOException {
        BlockCompressor zstd = Compressors.create("zstd");
        try (BlockFile f = BlockFile.open(ENV, file())) {
            long a = f.allocateBlockNumber();
            long b = f.allocateBlockNumber();
            f.write(a, ByteBuffer.wrap(payload(1, 50_000, true)), zstd);
            ByteBuffer out = f.read(a, n -> {
                try {
                    f.write(b, ByteBuffer.wrap(payload(2, 60_000, true)), zstd); // e.g. an eviction's write-back
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
                return ByteBuffer.allocate(n);
            });
            byte[] back = new byte[out.remaining()];
            out.get(back);
            assertArrayEquals(payload(1, 50_000, true), back);
            assertArrayEquals(payload(2, 60_000, true), read(f, b));
        }
    }

    @Test
    void readsRacingWithRewritesOfTheSameBlockSeeAWholeVersion() throws Exception {
        try (BlockFile f = BlockFile.open(ENV, file())) {
            long b = f.allocateBlockNumber();
            long other = f.allocateBlockNumber();
            f.write(b, ByteBuffer.wrap(payload(0, 20_000, false)), NONE);
            ExecutorService pool = Executors.newFixedThreadPool(2);
            try {
                Future<?> writer = pool.submit(() -> {
                    for (int v = 1; v <= 300; v++) {
                        f.write(b, ByteBuffer.wrap(payload(v % 3, 20_000, false)), NONE);
                        f.write(other, ByteBuffer.wrap(payload(7, 20_000, false)), NONE);
                    }
                    return null;
                });
                Future<?> reader = pool.submit(() -> {
                    List<byte[]> versions = List.of(payload(0, 20_000, false), payload(1, 20_000, false),
                            payload(2, 20_000, false));
                    while (!writer.isDone()) {
                        byte[] seen = read(f, b);
                        assertTrue(versions.stream().anyMatch(v -> java.util.Arrays.equals(v, seen)));
                    }
                    return null;
                });
                writer.get(30, TimeUnit.SECONDS);
                reader.get(30, TimeUnit.SECONDS);
            } finally {
                pool.shutdownNow();
            }
        }
    }

    @Test
    void concurrentReadersWritersAndCheckpoints() throws Exception {
        int threads = 4;
        int perThread = 25;
        BlockFile f = BlockFile.open(ENV, file());
        ExecutorService pool = Executors.newFixedThreadPool(threads + 1);
        try {
            {
                List<Future<Map<Long, Long>>> results = new ArrayList<>();
                for (int t = 0; t < threads; t++) {
                    int id = t;
                    results.add(pool.submit(() -> {
                        BlockCompressor codec = Compressors.forId(id % 5);
                        Map<Long, Long> mine = new HashMap<>();
                        for (int i = 0; i < perThread; i++) {
                            long b = f.allocateBlockNumber();
                            for (int v = 0; v < 4; v++) {
                                long seed = id * 1_000_000L + i * 10L + v;
                                f.write(b, ByteBuffer.wrap(payload(seed, 3000 + (int) (seed % 9000), v % 2 == 0)),
                                        codec);
                                mine.put(b, seed);
                                assertArrayEquals(payload(seed, 3000 + (int) (seed % 9000), v % 2 == 0), read(f, b));
                            }
                        }
                        return mine;
                    }));
                }
                Future<?> checkpointer = pool.submit(() -> {
                    for (int i = 0; i < 20; i++) {
                        f.checkpoint(ByteBuffer.wrap(new byte[] {(byte) i}));
                    }
                    return null;
                });
                Map<Long, Long> all = new HashMap<>();
                for (Future<Map<Long, Long>> r : results) {
                    all.putAll(r.get(60, TimeUnit.SECONDS));
                }
                checkpointer.get(60, TimeUnit.SECONDS);
                f.checkpoint(null);
                f.close();
                try (BlockFile g = BlockFile.open(ENV, file())) {
                    assertEquals(threads * perThread, g.stats().blockCount());
                    for (Map.Entry<Long, Long> e : all.entrySet()) {
                        long seed = e.getValue();
                        assertArrayEquals(payload(seed, 3000 + (int) (seed % 9000), seed % 10 % 2 == 0),
                                read(g, e.getKey()));
                    }
                }
            }
        } finally {
            pool.shutdownNow();
            f.close();
        }
    }
}
