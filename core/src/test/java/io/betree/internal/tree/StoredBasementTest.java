package io.betree.internal.tree;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.betree.compression.BlockCompressor;
import io.betree.compression.Compressors;
import io.betree.internal.memory.NodeMemory;
import io.netty.buffer.ByteBuf;
import java.nio.ByteBuffer;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The chunked stored form of a basement ({@link StoredBasement}): it reads back to the same rows and
 * the same map for every codec; each chunk alone answers point reads as the whole basement does,
 * for every key and snapshot; a chunk checked under another stamp or with a flipped byte is stale,
 * never an answer.
 */
class StoredBasementTest {
    private static final long BLOCK = 77;
    private final NodeMemory memory = new NodeMemory();
    private final Random rnd = new Random(20261127);

    @AfterEach
    void noMemoryLeft() {
        assertEquals(0, memory.used(), "off-heap bytes left");
    }

    private static byte[] key(int k) {
        return ByteBuffer.allocate(6).putInt(k).putShort((short) 7).array();
    }

    /**
     * A basement of {@code keys} keys in order; every fifth key has two versions (timestamps 20 and
     * 10, newest first) and every seventh a row of 9,000 bytes, longer than a chunk.
     */
    private Basement basement(BlockCompressor codec, int keys) {
        Basement b = Basement.empty(BLOCK, memory, codec);
        for (int k = 0; k < keys; k++) {
            if (k % 5 == 0) {
                b.appendLast(key(k), value(k, 20), 20);
            }
            b.appendLast(key(k), value(k, 10), 10);
        }
        return b;
    }

    private byte[] value(int k, int version) {
        byte[] v = new byte[k % 7 == 3 ? 9_000 : 20 + k % 90];
        // Half random, half repeated: something for the codecs to compress.
        for (int i = 0; i < v.length; i++) {
            v[i] = i < v.length / 2 ? (byte) rnd.nextInt() : (byte) (k + version);
        }
        return v;
    }

    /**
     * Stores {@code b} into a buffer of its size bound, which the caller releases, and reads it
     * back: rows and map as written.
     */
    private Stored roundTrip(Basement b, BlockCompressor codec) {
        int[] cuts = StoredBasement.cuts(b, codec);
        ByteBuf stored = memory.allocate(StoredBasement.sizeBound(b, codec, cuts));
        int capacity = stored.capacity();
        ChunkMap map = StoredBasement.write(b, BLOCK, codec, cuts, stored);
        assertEquals(capacity, stored.capacity(), "the size bound held: the buffer did not grow");
        ByteBuf rows = memory.allocate(b.bytes());
        ByteBuf back = null;
        try {
            b.writeRows(rows);
            StoredBasement.Parsed parsed = StoredBasement.read(stored.duplicate(), memory);
            back = parsed.rows();
            assertEquals(rows, back, "rows read back");
            assertEquals(map.chunkCount(), parsed.map(b).chunkCount());
            assertEquals(map.stamp, parsed.map(b).stamp);
            for (int c = 0; c <= map.chunkCount(); c++) {
                assertEquals(c == map.chunkCount() ? stored.readableBytes() : map.start(c), parsed.map(b).start(c));
            }
        } finally {
            memory.release(rows);
            memory.release(back);
        }
        return new Stored(stored, map);
    }

    private record Stored(ByteBuf bytes, ChunkMap map) {
    }

    @ParameterizedTest
    @ValueSource(strings = {"none", "lz4", "zstd", "deflate", "xz"})
    void everyCodecReadsBackItsRowsAndEachChunkAnswersLikeTheBasement(String codecName) {
        BlockCompressor codec = Compressors.create(codecName);
        Basement b = basement(codec, 600);
        Stored st = roundTrip(b, codec);
        ByteBuf stored = st.bytes();
        ChunkMap map = st.map();
        try {
            boolean smallChunks = !codecName.equals("deflate") && !codecName.equals("xz");
            assertTrue(smallChunks ? map.chunkCount() > 20 : map.chunkCount() == 1, map.chunkCount() + " chunks");
            for (int k = -1; k <= 600; k++) {
                byte[] key = key(k);
                for (long ts : new long[] {5, 10, 15, 20, Long.MAX_VALUE}) {
                    byte[] expected = b.get(key, ts);
                    byte[] got = fromChunk(stored, map, map.stamp, key, ts, -1);
                    assertArrayEquals(expected, got, "key " + k + " at " + ts);
                }
                byte[] between = ByteBuffer.allocate(7).put(key).put((byte) 1).array();
                assertNull(fromChunk(stored, map, map.stamp, between, Long.MAX_VALUE, -1), "a key between rows");
            }
        } finally {
            memory.release(stored);
            b.releaseMemory();
        }
    }

    @Test
    void aChunkUnderAnotherStampOrWithAFlippedByteIsStale() {
        BlockCompressor codec = Compressors.create("lz4");
        Basement b = basement(codec, 300);
        Stored st = roundTrip(b, codec);
        ByteBuf stored = st.bytes();
        ChunkMap map = st.map();
        try {
            byte[] key = key(123);
            int c = map.chunkFor(key);
            assertArrayEquals(b.get(key, Long.MAX_VALUE), fromChunk(stored, map, map.stamp, key, Long.MAX_VALUE, -1));
            assertSame(ChunkMap.STALE, fromChunk(stored, map, map.stamp + 1, key, Long.MAX_VALUE, -1),
                    "another version's stamp");
            for (int at = 0; at < map.length(c); at += 3) {
                assertSame(ChunkMap.STALE, fromChunk(stored, map, map.stamp, key, Long.MAX_VALUE, at),
                        "byte " + at + " of the chunk flipped");
            }
        } finally {
            memory.release(stored);
            b.releaseMemory();
        }
    }

    @Test
    void anEmptyBasementIsOneEmptyChunk() {
        BlockCompressor codec = Compressors.create("lz4");
        Basement b = Basement.empty(BLOCK, memory, codec);
        Stored st = roundTrip(b, codec);
        ByteBuf stored = st.bytes();
        ChunkMap map = st.map();
        try {
            assertEquals(1, map.chunkCount());
            assertNull(fromChunk(stored, map, map.stamp, key(1), Long.MAX_VALUE, -1));
        } finally {
            memory.release(stored);
            b.releaseMemory();
        }
    }

    /**
     * Answers a read from the one chunk of {@code stored} that {@code map} names for {@code key}, as
     * {@link NodeStore#readFromChunk} does, checked under {@code stamp}; with {@code flip >= 0}, that
     * byte of the chunk's record is flipped first.
     */
    private static byte[] fromChunk(ByteBuf stored, ChunkMap map, long stamp, byte[] key, long ts, int flip) {
        int c = map.chunkFor(key);
        byte[] record = new byte[map.length(c)];
        stored.getBytes(stored.readerIndex() + map.start(c), record);
        if (flip >= 0) {
            record[flip] ^= 0x10;
        }
        ChunkMap checkedAs = stamp == map.stamp ? map : withStamp(map, stamp);
        return StoredBasement.get(ByteBuffer.wrap(record), BLOCK, checkedAs, key, ts);
    }

    private static ChunkMap withStamp(ChunkMap map, long stamp) {
        ByteBuf buf = io.netty.buffer.Unpooled.buffer(map.serializedSize());
        map.write(buf);
        buf.setLong(1, stamp);
        return ChunkMap.read(buf);
    }
}
