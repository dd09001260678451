package io.betree.internal.log;

import io.betree.internal.log.CommitRecord.Op;
import java.nio.ByteBuffer;
import java.util.List;

/**
 * Payload of a {@link LogRecordType#WRITES} record: one part of the writes of a transaction too large
 * to keep on the heap, logged before it commits. Recovery applies a part only through the
 * {@link CommitPartsRecord} that names its LSN; a part no commit names (its transaction failed a
 * conflict check or the process crashed first) is ignored.
 *
 * <p>Encoding (big-endian): the part's number within its transaction (4, from 0), then the ops as
 * in {@link CommitRecord}: count (4) and per op index id, op code, key and value.
 *
 * @param part the part's number within its transaction
 * @param ops the writes (copied; never null)
 */
public record WritesRecord(int part, List<Op> ops) implements LogPayload {

    /** Copies {@code ops}; rejects null elements. */
    public WritesRecord {
        ops = List.copyOf(ops);
    }

    /** Encoded bytes of a part holding {@code ops}. */
    public static long encodedBytes(List<Op> ops) {
        return 4 + CommitRecord.opsBytes(ops);
    }

    @Override
    public LogRecordType type() {
        return LogRecordType.WRITES;
    }

    @Override
    public ByteBuffer encode() {
        ByteBuffer out = ByteBuffer.allocate(CommitRecord.checkedSize(encodedBytes(ops), "writes"));
        out.putInt(part);
        return CommitRecord.putOps(out, ops).flip();
    }

    /**
     * Decodes the remaining bytes of {@code payload} without moving its position.
     *
     * @throws IllegalArgumentException if the bytes are not exactly one well-formed part
     */
    public static WritesRecord decode(ByteBuffer payload) {
        PayloadReader in = new PayloadReader(payload, "writes");
        int part = in.i32("part number");
        List<Op> ops = CommitRecord.readOps(in);
        in.end();
        return new WritesRecord(part, ops);
    }

    @Override
    public String describe() {
        return "part=" + part + " " + CommitRecord.describeOps(ops);
    }
}
