package io.betree.internal.tree;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.betree.compression.BlockCompressor;
import io.betree.compression.Compressors;
import io.betree.internal.memory.NodeMemory;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.ByteBuffer;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The segmented stored form of a basement: it reads back to the same rows whole and segment by
 * segment, a key's versions stay in one segment, and a segment read by a layout of another
 * version or with a damaged byte is refused.
 */
class SegmentedBasementTest {
    private final NodeMemory memory = new NodeMemory();

    @ParameterizedTest
    @ValueSource(strings = {"lz4", "none", "zstd"})
    void everyKeyReadsTheSameWholeAndBySegment(String codecName) {
        BlockCompressor codec = Compressors.create(codecName);
        Random rnd = new Random(20261126);
        for (int round = 0; round < 20; round++) {
            Basement basement = randomBasement(rnd, codec, round);
            ByteBuf stored = memory.allocate(basement.serializedSizeBound());
            ByteBuf rows = null;
            try {
                SegmentLayout written = basement.writeCheckCopy(stored);
                assertTrue(stored.readableBytes() <= basement.serializedSizeBound());
                SegmentLayout read = SegmentedBasement.layout(stored);
                assertEquals(written.writeId, read.writeId);
                assertEquals(basement.count(), read.rowCount);
                rows = SegmentedBasement.rows(stored, read, memory);
                assertEquals(ByteBuffer.wrap(bytes(basement.rowsView(), basement.bytes())),
                        ByteBuffer.wrap(bytes(NodeMemory.view(rows), rows.writerIndex())), "round " + round);
                long ts = 1_000;
                for (int p = 0; p < basement.count(); p = basement.keyEnd(p)) {
                    byte[] key = basement.key(p);
                    int s = read.segmentFor(key);
                    assertTrue(s >= 0, "a stored key precedes the first segment");
                    ByteBuffer segment = rowsOf(stored, read, s);
                    for (long snapshot : new long[] {0, 5, 50, ts}) {
                        assertArrayEquals(basement.get(key, snapshot),
                                Basement.find(segment, 0, segment.limit(), key, snapshot), "round " + round);
                    }
                }
                for (int s = 1; s < read.segmentCount(); s++) {
                    ByteBuffer before = rowsOf(stored, read, s - 1);
                    ByteBuffer first = rowsOf(stored, read, s);
                    assertNotEquals(ByteBuffer.wrap(lastKey(before)), ByteBuffer.wrap(firstKey(first)),
                            "a key's versions straddle segments " + (s - 1) + " and " + s);
                }
            } finally {
                memory.release(stored);
                memory.release(rows);
                basement.releaseMemory();
            }
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"lz4", "none"})
    void aSegmentOfAnotherVersionOrWithADamagedByteIsRefused(String codecName) {
        BlockCompressor codec = Compressors.create(codecName);
        Basement basement = randomBasement(new Random(7), codec, 3);
        ByteBuf first = memory.allocate(basement.serializedSizeBound());
        ByteBuf second = memory.allocate(basement.serializedSizeBound());
        try {
            SegmentLayout a = basement.writeCheckCopy(first);
            SegmentLayout b = basement.writeCheckCopy(second);
            assertTrue(a.segmentCount() > 1, "the basement fits one segment");
            assertNotEquals(a.writeId, b.writeId);
            for (int s = 0; s < a.segmentCount(); s++) {
                assertTrue(a.matches(s, span(first, a, s)));
                assertFalse(a.matches(s, span(second, b, s)), "a layout vouched for another version's segment " + s);
                ByteBuffer damaged = copy(span(first, a, s));
                int at = SegmentLayout.SEGMENT_PREFIX + damaged.remaining() / 2 % Math.max(1, a.storedLength(s));
                damaged.put(Math.min(at, damaged.limit() - 1), (byte) (damaged.get(Math.min(at, damaged.limit() - 1)) ^ 1));
                assertFalse(a.matches(s, damaged), "a damaged segment " + s + " passed");
            }
        } finally {
            memory.release(first);
            memory.release(second);
            basement.releaseMemory();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"lz4"})
    void anEmptyBasementHasNoSegmentsAndReadsBackEmpty(String codecName) {
        Basement basement = Basement.empty(1, memory, Compressors.create(codecName));
        ByteBuf stored = memory.allocate(basement.serializedSizeBound());
        ByteBuf rows = null;
        try {
            basement.writeCheckCopy(stored);
            SegmentLayout layout = SegmentedBasement.layout(stored);
            assertEquals(0, layout.segmentCount());
            assertEquals(-1, layout.segmentFor(new byte[] {1}));
            rows = SegmentedBasement.rows(stored, layout, memory);
            assertEquals(5, rows.writerIndex());
        } finally {
            memory.release(stored);
            memory.release(rows);
            basement.releaseMemory();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"lz4"})
    void aMalformedLayoutIsRefused(String codecName) {
        Basement basement = randomBasement(new Random(11), Compressors.create(codecName), 2);
        ByteBuf stored = memory.allocate(basement.serializedSizeBound());
        try {
            basement.writeCheckCopy(stored);
            ByteBuf cut = Unpooled.copiedBuffer(stored.nioBuffer(0, stored.readableBytes() - 1));
            assertThrows(IllegalArgumentException.class, () -> SegmentedBasement.layout(cut));
            ByteBuf rowsOverstated = Unpooled.copiedBuffer(stored.nioBuffer());
            rowsOverstated.setInt(2, rowsOverstated.getInt(2) + 1); // the row count after tag and codec id
            assertThrows(IllegalArgumentException.class, () -> SegmentedBasement.layout(rowsOverstated));
        } finally {
            memory.release(stored);
            basement.releaseMemory();
        }
    }

    /**
     * A basement of a few hundred keys, some with several versions, some tombstoned, some with
     * values larger than a segment.
     */
    private Basement randomBasement(Random rnd, BlockCompressor codec, int round) {
        Basement basement = Basement.empty(1, memory, codec);
        long ts = 0;
        for (int batch = 0; batch < 4; batch++) {
            MessageBuffer messages = new MessageBuffer(memory);
            int n = 50 + rnd.nextInt(300);
            for (int i = 0; i < n; i++) {
                byte[] key = new byte[1 + rnd.nextInt(12)];
                rnd.nextBytes(key);
                key[0] = (byte) rnd.nextInt(round % 3 == 0 ? 4 : 256); // few first bytes: more versions per key
                boolean delete = rnd.nextInt(8) == 0;
                byte[] value = delete ? null : new byte[rnd.nextInt(50) == 0 ? 5_000 + rnd.nextInt(5_000)
                        : rnd.nextInt(200)];
                if (value != null) {
                    for (int v = 0; v < value.length; v++) {
                        value[v] = (byte) (rnd.nextInt(4) == 0 ? rnd.nextInt() : v);
                    }
                }
                messages.append(delete ? MessageType.DELETE : MessageType.PUT, ++ts, 0L, key, value);
            }
            messages.consolidate();
            basement.apply(messages, 0, messages.sortedCount(), ts / 2);
            messages.release();
        }
        return basement;
    }

    private static ByteBuffer span(ByteBuf stored, SegmentLayout layout, int s) {
        return stored.nioBuffer(stored.readerIndex() + layout.offset(s), layout.span(s));
    }

    private static ByteBuffer rowsOf(ByteBuf stored, SegmentLayout layout, int s) {
        return SegmentedBasement.segmentRows(layout, s, span(stored, layout, s), ByteBuffer.allocate(layout.rawLength(s)));
    }

    private static ByteBuffer copy(ByteBuffer b) {
        ByteBuffer c = ByteBuffer.allocate(b.remaining());
        c.put(b.duplicate()).flip();
        return c;
    }

    private static byte[] bytes(ByteBuffer view, int length) {
        byte[] out = new byte[length];
        view.duplicate().position(0).get(out);
        return out;
    }

    /** The key of the first row of a segment's rows. */
    private static byte[] firstKey(ByteBuffer rows) {
        return keyAt(rows, 0);
    }

    /** The key of the last row of a segment's rows. */
    private static byte[] lastKey(ByteBuffer rows) {
        int off = 0;
        int last = 0;
        while (off < rows.limit()) {
            last = off;
            int flags = rows.get(off + 2);
            off += 7 + ((flags & 2) != 0 ? 8 : 0) + (rows.getShort(off) & 0xffff) + rows.getInt(off + 3);
        }
        return keyAt(rows, last);
    }

    private static byte[] keyAt(ByteBuffer rows, int off) {
        int flags = rows.get(off + 2);
        byte[] key = new byte[rows.getShort(off) & 0xffff];
        rows.get(off + 7 + ((flags & 2) != 0 ? 8 : 0), key);
        return key;
    }
}
