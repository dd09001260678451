package io.betree.internal.log;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class LogRecordCodecTest {

    private static CommitRecord sampleCommit() {
        return new CommitRecord(42L, List.of(
                CommitRecord.Op.put(7, "k1".getBytes(StandardCharsets.UTF_8), "v1".getBytes(StandardCharsets.UTF_8)),
                CommitRecord.Op.delete(7, new byte[] {0, (byte) 0xff}),
                CommitRecord.Op.put(9, new byte[0], new byte[0]),
                CommitRecord.Op.put(9, LogTestSupport.payload(1, 40), LogTestSupport.payload(2, 3000))));
    }

    @Test
    void typeCodesAreStableAndUnique() {
        assertEquals(1, LogRecordType.COMMIT.code());
        assertEquals(2, LogRecordType.CREATE_INDEX.code());
        assertEquals(4, LogRecordType.WRITES.code());
        assertEquals(5, LogRecordType.COMMIT_PARTS.code());
        assertNull(LogRecordType.fromCode((byte) 3), "code 3 stays reserved for the checkpoint record never written");
        for (LogRecordType t : LogRecordType.values()) {
            assertSame(t, LogRecordType.fromCode(t.code()));
        }
        assertNull(LogRecordType.fromCode((byte) 0));
        assertNull(LogRecordType.fromCode((byte) 6));
        assertNull(LogRecordType.fromCode((byte) -1));
    }

    @Test
    void writesAndCommitPartsRoundTrip() {
        WritesRecord part = new WritesRecord(3, sampleCommit().ops());
        ByteBuffer encoded = part.encode();
        assertEquals(part, LogRecordType.WRITES.decode(encoded));
        assertEquals(0, encoded.position(), "decode must not move the buffer");
        assertEquals(WritesRecord.encodedBytes(part.ops()), encoded.remaining());
        CommitPartsRecord parts = new CommitPartsRecord(42, 1_000_000, new long[] {0, 4 << 20, 9 << 20});
        assertEquals(parts, LogRecordType.COMMIT_PARTS.decode(parts.encode()));
        assertTrue(parts.describe().contains("parts=3"), parts.describe());
        ByteBuffer truncated = parts.encode().limit(parts.encode().remaining() - 1);
        assertThrows(IllegalArgumentException.class, () -> CommitPartsRecord.decode(truncated));
    }

    @Test
    void commitRoundTrip() {
        CommitRecord r = sampleCommit();
        ByteBuffer encoded = r.encode();
        assertEquals(r, CommitRecord.decode(encoded));
        assertEquals(r, LogRecordType.COMMIT.decode(encoded));
        assertEquals(0, encoded.position(), "decode must not move the buffer");
        assertNull(r.ops().get(1).value());
        CommitRecord empty = new CommitRecord(-1, List.of());
        assertEquals(empty, CommitRecord.decode(empty.encode()));
        assertEquals(LogRecordType.COMMIT, r.type());
    }

    @Test
    void anUnstampedCommitOfOtherWritesDecodesAsTheSameOpsOnceStamped() {
        CommitRecord r = sampleCommit();
        // Writes of another type than Op, as a committing transaction hands them over.
        List<LoggedWrite> writes = new ArrayList<>();
        for (CommitRecord.Op op : r.ops()) {
            writes.add(new LoggedWrite() {
                @Override
                public int indexId() {
                    return op.indexId();
                }

                @Override
                public byte opCode() {
                    return op.type();
                }

                @Override
                public byte[] key() {
                    return op.key();
                }

                @Override
                public byte[] value() {
                    return op.value();
                }
            });
        }
        ByteBuffer encoded = CommitRecord.encodeUnstamped(writes);
        assertEquals(0, CommitRecord.decode(encoded).commitTs());
        CommitRecord.stamp(encoded, r.commitTs());
        assertEquals(0, encoded.position(), "stamping must not move the buffer");
        assertEquals(r, CommitRecord.decode(encoded));
    }

    @Test
    void commitEncodingIsBigEndianAsDocumented() {
        CommitRecord r = new CommitRecord(0x0102030405060708L,
                List.of(new CommitRecord.Op(0x0a0b0c0d, CommitRecord.DELETE, new byte[] {5}, null)));
        byte[] expected = {1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 1, 0x0a, 0x0b, 0x0c, 0x0d, CommitRecord.DELETE, 0, 0, 0, 1, 5,
            -1, -1, -1, -1};
        ByteBuffer b = r.encode();
        byte[] actual = new byte[b.remaining()];
        b.get(actual);
        assertTrue(Arrays.equals(expected, actual), Arrays.toString(actual));
    }

    @Test
    void createIndexRoundTrip() {
        CreateIndexRecord r = new CreateIndexRecord(3, "orders/ünïcode", "ZSTD", 3, 4 << 20, 64 << 10, 16);
        assertEquals(r, CreateIndexRecord.decode(r.encode()));
        assertEquals(r, LogRecordType.CREATE_INDEX.decode(r.encode()));
        assertThrows(IllegalArgumentException.class,
                () -> new CreateIndexRecord(1, "x".repeat(70_000), "NONE", 0, 1, 1, 1));
    }

    @Test
    void everyTruncationOfAPayloadIsRejected() {
        for (LogPayload p : List.of(sampleCommit(), new CreateIndexRecord(1, "idx", "LZ4", 0, 1, 2, 3))) {
            ByteBuffer full = p.encode();
            for (int cut = 0; cut < full.remaining(); cut++) {
                ByteBuffer truncated = full.duplicate().limit(cut);
                assertThrows(IllegalArgumentException.class, () -> p.type().decode(truncated),
                        p.type() + " cut at " + cut);
            }
            ByteBuffer longer = ByteBuffer.allocate(full.remaining() + 1).put(full.duplicate()).put((byte) 0).flip();
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> p.type().decode(longer));
            assertTrue(e.getMessage().contains("trailing"), e.getMessage());
        }
    }

    @Test
    void impossibleCountsAndLengthsAreRejectedBeforeAllocating() {
        ByteBuffer hugeCount = ByteBuffer.allocate(12).putLong(1).putInt(Integer.MAX_VALUE).flip();
        assertThrows(IllegalArgumentException.class, () -> CommitRecord.decode(hugeCount));
        ByteBuffer negativeCount = ByteBuffer.allocate(12).putLong(1).putInt(-1).flip();
        assertThrows(IllegalArgumentException.class, () -> CommitRecord.decode(negativeCount));
        ByteBuffer hugeKey = ByteBuffer.allocate(40).putLong(1).putInt(1).putInt(0).put((byte) 1)
                .putInt(Integer.MAX_VALUE).flip().limit(40);
        assertThrows(IllegalArgumentException.class, () -> CommitRecord.decode(hugeKey));
        ByteBuffer negativeValue = ByteBuffer.allocate(30).putLong(1).putInt(1).putInt(0).put((byte) 1).putInt(1)
                .put((byte) 9).putInt(-2).flip();
        assertThrows(IllegalArgumentException.class, () -> CommitRecord.decode(negativeValue));
        ByteBuffer badUtf8 = ByteBuffer.allocate(30).putInt(1).putShort((short) 1).put((byte) 0xff).put((byte) 0)
                .putInt(0).putInt(0).putInt(0).putInt(0).flip();
        assertThrows(IllegalArgumentException.class, () -> CreateIndexRecord.decode(badUtf8));
    }

    @Test
    void describeNamesTheFieldsAndSurvivesGarbage() {
        String d = LogRecordType.COMMIT.describe(sampleCommit().encode());
        assertTrue(d.contains("ts=42") && d.contains("ops=4") && d.contains("put index=7 key=0x6b31")
                && d.contains("delete index=7 key=0x00ff") && d.contains("(40 bytes)"), d);
        String c = LogRecordType.CREATE_INDEX.describe(new CreateIndexRecord(5, "users", "ZSTD", 3, 1, 2, 16).encode());
        assertTrue(c.contains("name=\"users\"") && c.contains("codec=ZSTD"), c);
        String bad = LogRecordType.CREATE_INDEX.describe(ByteBuffer.allocate(3));
        assertTrue(bad.startsWith("undecodable 3-byte payload"), bad);
    }
}
