package io.betree.internal.storage;

import static io.betree.internal.storage.StorageTestSupport.flipByte;
import static io.betree.internal.storage.StorageTestSupport.overwrite;
import static io.betree.internal.storage.StorageTestSupport.payload;
import static io.betree.internal.storage.StorageTestSupport.read;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.betree.internal.fault.BetreeException;
import io.betree.internal.fault.CorruptionException;
import io.betree.compression.BlockCompressor;
import io.betree.compression.CompressionFormatException;
import io.betree.compression.Compressors;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Damaged and foreign files: every problem is a clear exception, never wrong data or a crash. */
class BlockFileCorruptionTest {

    private static final StorageEnv ENV = StorageEnv.defaultEnv();
    private static final BlockCompressor LZ4 = Compressors.create("lz4");
    private static final int BLOCKS = 6;

    @TempDir
    Path dir;

    private Path file() {
        return dir.resolve("data.betree");
    }

    /** A file with two checkpoints: root 1 with version-1 blocks, then root 2 with version-2 blocks. */
    private void twoCheckpoints() throws IOException {
        try (BlockFile f = BlockFile.open(ENV, file())) {
            for (int i = 0; i < BLOCKS; i++) {
                f.allocateBlockNumber();
            }
            for (int version = 1; version <= 2; version++) {
                for (int b = 0; b < BLOCKS; b++) {
                    f.write(b, ByteBuffer.wrap(payload(version * 100 + b, 5000, true)), LZ4);
                }
                f.checkpoint(ByteBuffer.wrap(new byte[] {(byte) version}));
            }
        }
    }

    private static void assertVersion(BlockFile f, int version) throws IOException {
        assertEquals(ByteBuffer.wrap(new byte[] {(byte) version}), f.rootRecord());
        for (int b = 0; b < BLOCKS; b++) {
            assertArrayEquals(payload(version * 100 + b, 5000, true), read(f, b));
        }
    }

    private FileHeader header(int slot) throws IOException {
        ByteBuffer buf = ByteBuffer.wrap(Files.readAllBytes(file()), slot * BlockFormat.HEADER_SLOT_SIZE,
                BlockFormat.HEADER_SLOT_SIZE);
        return FileHeader.parse(buf).header();
    }

    private int newestSlot() throws IOException {
        return header(0).sequence() > header(1).sequence() ? 0 : 1;
    }

    private CorruptionException openFails() {
        return assertThrows(CorruptionException.class, () -> BlockFile.open(ENV, file()).close());
    }

    @Test
    void aDamagedNewestHeaderFallsBackToTheOlderCheckpoint() throws IOException {
        twoCheckpoints();
        flipByte(file(), newestSlot() * (long) BlockFormat.HEADER_SLOT_SIZE + 20);
        try (BlockFile f = BlockFile.open(ENV, file())) {
            assertVersion(f, 1);
        }
    }

    @Test
    void bothHeadersDamagedIsCorruption() throws IOException {
        twoCheckpoints();
        flipByte(file(), 30);
        flipByte(file(), BlockFormat.HEADER_SLOT_SIZE + 40);
        CorruptionException e = openFails();
        assertTrue(e.getMessage().contains(file().toString()), e.getMessage());
        assertTrue(e.getMessage().contains("no valid header"), e.getMessage());
        assertEquals(file(), e.file());
    }

    @Test
    void foreignFilesAreRejected() throws IOException {
        byte[] random = new byte[100_000];
        new Random(1).nextBytes(random);
        byte[][] contents = {random, new byte[0], new byte[8192], "hello, world\n".getBytes(StandardCharsets.UTF_8),
            "BeTreeBF".getBytes(StandardCharsets.US_ASCII)};
        for (byte[] content : contents) {
            Files.write(file(), content);
            CorruptionException e = openFails();
            assertTrue(e.getMessage().contains(file().toString()), e.getMessage());
            assertTrue(e.getMessage().contains("not a betree block file") || e.getMessage().contains("no valid header"),
                    e.getMessage());
        }
    }

    @Test
    void aNewerFormatVersionIsAClearError() throws IOException {
        BetreeException e = openWithHeaderVersion(FileHeader.FORMAT_VERSION + 1);
        assertTrue(e.getMessage().contains("newer version"), e.getMessage());
    }

    @Test
    void anOlderFormatVersionIsRefusedByName() throws IOException {
        int version = FileHeader.OLDEST_READABLE_VERSION - 1;
        BetreeException e = openWithHeaderVersion(version);
        assertTrue(e.getMessage().contains("older version of betree (block file format " + version
                + "; this version reads formats " + FileHeader.OLDEST_READABLE_VERSION + " to "
                + FileHeader.FORMAT_VERSION), e.getMessage());
        assertTrue(e.getMessage().contains(file().toString()), e.getMessage());
    }

    @Test
    void theOldestReadableVersionOpensAndItsNextCheckpointWritesTheCurrentOne() throws IOException {
        writeHeaderVersion(FileHeader.OLDEST_READABLE_VERSION);
        try (BlockFile f = BlockFile.open(ENV, file())) {
            f.checkpoint(null);
            f.checkpoint(null); // both header slots
        }
        ByteBuffer slots = ByteBuffer.wrap(Files.readAllBytes(file())).order(ByteOrder.LITTLE_ENDIAN);
        assertEquals(FileHeader.FORMAT_VERSION, slots.getInt(8));
        assertEquals(FileHeader.FORMAT_VERSION, slots.getInt(BlockFormat.HEADER_SLOT_SIZE + 8));
    }

    /** Opens a file whose intact header says {@code version}; returns the refusal, which is not corruption. */
    private BetreeException openWithHeaderVersion(int version) throws IOException {
        writeHeaderVersion(version);
        BetreeException e = assertThrows(BetreeException.class, () -> BlockFile.open(ENV, file()).close());
        assertFalse(e instanceof CorruptionException);
        return e;
    }

    /** Writes a file with one checkpoint and makes the intact version of both its header slots {@code version}. */
    private void writeHeaderVersion(int version) throws IOException {
        try (BlockFile f = BlockFile.open(ENV, file())) {
            f.checkpoint(null);
        }
        byte[] file = Files.readAllBytes(file());
        for (int slot = 0; slot < 2; slot++) {
            int at = slot * BlockFormat.HEADER_SLOT_SIZE;
            ByteBuffer h = ByteBuffer.wrap(file, at, FileHeader.SIZE).slice().order(ByteOrder.LITTLE_ENDIAN);
            assertEquals(FileHeader.FORMAT_VERSION, h.getInt(8), "slot " + slot + " holds no header");
            h.putInt(8, version);
            h.putInt(FileHeader.SIZE - 4, BlockFormat.crc32c(h, 0, FileHeader.SIZE - 4));
            byte[] bytes = new byte[FileHeader.SIZE];
            h.get(0, bytes);
            overwrite(file(), at, bytes);
        }
    }

    @Test
    void aFlippedByteInABlockIsCorruptionNamingTheBlock() throws IOException {
        twoCheckpoints();
        long[] offsets = new long[BLOCKS];
        try (BlockFile f = BlockFile.open(ENV, file())) {
            for (int b = 0; b < BLOCKS; b++) {
                offsets[b] = f.blockOffset(b);
            }
        }
        int[] where = {0, 4, 9, 17, 21, 29, BlockHeader.SIZE, BlockHeader.SIZE + 50};
        for (int i = 0; i < where.length; i++) {
            int b = i % BLOCKS;
            long at = offsets[b] + where[i];
            flipByte(file(), at);
            try (BlockFile f = BlockFile.open(ENV, file())) {
                CorruptionException e = assertThrows(CorruptionException.class, () -> f.read(b, ByteBuffer::allocate));
                assertEquals(b, e.blockNumber());
                assertTrue(e.getMessage().contains("block " + b + " at offset " + offsets[b]), e.getMessage());
                assertTrue(e.getMessage().contains(file().toString()), e.getMessage());
                for (int other = 0; other < BLOCKS; other++) {
                    if (other != b) {
                        assertArrayEquals(payload(200 + other, 5000, true), read(f, other));
                    }
                }
            }
            flipByte(file(), at);
        }
    }

    @Test
    void hugeLengthsAreRejectedWithoutAllocating() throws IOException {
        twoCheckpoints();
        long offset;
        try (BlockFile f = BlockFile.open(ENV, file())) {
            offset = f.blockOffset(2);
        }
        overwrite(file(), offset + 16, new byte[] {-1, -1, -1, 0x7f, -1, -1, -1, 0x7f});
        try (BlockFile f = BlockFile.open(ENV, file())) {
            int[] allocations = {0};
            CorruptionException e = assertThrows(CorruptionException.class, () -> f.read(2, n -> {
                allocations[0]++;
                return ByteBuffer.allocate(n);
            }));
            assertEquals(0, allocations[0]);
            assertTrue(e.getMessage().contains("length"), e.getMessage());
        }
    }

    @Test
    void undecodableDataWithAValidChecksumIsCorruption() throws IOException {
        twoCheckpoints();
        long offset;
        try (BlockFile f = BlockFile.open(ENV, file())) {
            offset = f.blockOffset(1);
        }
        // Garbage compressed bytes, then an unknown codec id, each with a recomputed CRC.
        for (int codec : new int[] {LZ4.id(), 200}) {
            ByteBuffer block;
            try (FileChannel ch = FileChannel.open(file(), StandardOpenOption.READ, StandardOpenOption.WRITE)) {
                block = ByteBuffer.allocate(4096);
                ch.read(block, offset);
                block.put(4, (byte) codec);
                for (int i = BlockHeader.SIZE; i < BlockHeader.SIZE + 64; i++) {
                    block.put(i, (byte) 0xA5);
                }
                int stored = block.order(ByteOrder.LITTLE_ENDIAN).getInt(20);
                block.putInt(28, BlockHeader.crc(block, stored));
                ch.write(block.clear(), offset);
            }
            try (BlockFile f = BlockFile.open(ENV, file())) {
                CorruptionException e = assertThrows(CorruptionException.class, () -> f.read(1, ByteBuffer::allocate));
                assertEquals(1, e.blockNumber());
                assertInstanceOf(CompressionFormatException.class, e.getCause());
            }
        }
    }

    @Test
    void aDamagedTranslationTableIsCorruption() throws IOException {
        twoCheckpoints();
        FileHeader newest = header(newestSlot());
        flipByte(file(), newest.tableOffset() + newest.tableLength() - 3);
        CorruptionException e = openFails();
        assertTrue(e.getMessage().contains("translation table"), e.getMessage());
    }

    @Test
    void aTruncatedFileIsCorruption() throws IOException {
        twoCheckpoints();
        FileHeader newest = header(newestSlot());
        long cut;
        try (BlockFile f = BlockFile.open(ENV, file())) {
            cut = Math.max(f.blockOffset(0), f.blockOffset(BLOCKS - 1)) + 100;
        }
        if (cut < newest.tableOffset()) {
            try (FileChannel ch = FileChannel.open(file(), StandardOpenOption.WRITE)) {
                ch.truncate(cut);
            }
        } else {
            try (FileChannel ch = FileChannel.open(file(), StandardOpenOption.WRITE)) {
                ch.truncate(newest.tableOffset() + 10);
            }
        }
        CorruptionException e = openFails();
        assertTrue(e.getMessage().contains(file().toString()), e.getMessage());
    }

    /** Random damage anywhere: the file opens with one of its checkpoints intact, or fails cleanly. */
    @Test
    void randomDamageNeverYieldsWrongDataOrAnUncleanFailure() throws IOException {
        twoCheckpoints();
        byte[] pristine = Files.readAllBytes(file());
        FileHeader table = header(newestSlot());
        Random random = new Random(42);
        int rejected = 0;
        int badBlocks = 0;
        int olderCheckpoint = 0;
        for (int round = 0; round < 150; round++) {
            byte[] damaged = pristine.clone();
            int flips = 1 + random.nextInt(3);
            for (int i = 0; i < flips; i++) {
                int at;
                switch (random.nextInt(3)) {
                    case 0 -> at = random.nextInt(2) * BlockFormat.HEADER_SLOT_SIZE + random.nextInt(FileHeader.SIZE);
                    case 1 -> at = (int) (table.tableOffset() + random.nextInt((int) table.tableLength()));
                    default -> at = random.nextInt(damaged.length);
                }
                damaged[at] ^= (byte) (1 << random.nextInt(8));
            }
            Files.write(file(), damaged);
            BlockFile f;
            try {
                f = BlockFile.open(ENV, file());
            } catch (CorruptionException e) {
                rejected++;
                continue;
            }
            try (f) {
                int version = f.rootRecord().get(0);
                assertTrue(version == 1 || version == 2);
                olderCheckpoint += version == 1 ? 1 : 0;
                for (int b = 0; b < BLOCKS; b++) {
                    try {
                        assertArrayEquals(payload(version * 100 + b, 5000, true), read(f, b), "round " + round);
                    } catch (CorruptionException e) {
                        assertEquals(b, e.blockNumber());
                        badBlocks++;
                    }
                }
            }
        }
        assertTrue(rejected > 0 && badBlocks > 0 && olderCheckpoint > 0,
                "rejected " + rejected + ", bad blocks " + badBlocks + ", fallbacks " + olderCheckpoint);
    }
}
