package io.betree.internal.log;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;

/**
 * Payload of a {@link LogRecordType#COMMIT} record: the writes of one committed transaction, in the
 * order they are to be applied, and its commit timestamp.
 *
 * <p>Encoding (big-endian): commit timestamp (8), op count (4), then per op: index id (4), op
 * code (1: {@link #PUT}, {@link #DELETE}, {@link #UPDATE}, {@link #RANGE_UPDATE},
 * {@link #RANGE_DELETE} or {@link #PUT_EXPIRING}), key length (4), key, value length (4, -1 when
 * the op has no value), value. The op codes are the log's own: they are stored on disk and never change,
 * whatever the tree calls its messages.
 *
 * @param commitTs the transaction's commit timestamp
 * @param ops the writes, in application order (copied; never null)
 */
public record CommitRecord(long commitTs, List<Op> ops) implements LogPayload {

    /** Op code of a put: store the value under the key. */
    public static final byte PUT = 1;
    /** Op code of a delete: remove the key. */
    public static final byte DELETE = 2;
    /** Op code of an update: the value is a list of function calls ({@code UpdateList}) to apply to the key's value. */
    public static final byte UPDATE = 3;
    /**
     * Op code of a broadcast: the key is the range's lower bound, the value its upper bound and a
     * list of calls to apply to every key present in it ({@code RangeMessage.encodeValue}).
     */
    public static final byte RANGE_UPDATE = 4;
    /** Op code of a range delete: the key is the range's lower bound, the value its upper bound ({@code RangeMessage.encodeValue}). */
    public static final byte RANGE_DELETE = 5;
    /** Op code of a put whose value expires: the value is the expiry (8, milliseconds since the epoch) and the value. */
    public static final byte PUT_EXPIRING = 6;

    /** Fixed bytes before the op count. */
    private static final int FIXED_BYTES = 8;
    /** Fixed bytes of one op besides its key and value. */
    private static final int OP_FIXED_BYTES = 13;
    /** Ops and key/value bytes rendered by {@link #describe()} before it abbreviates. */
    private static final int DESCRIBE_OPS = 8;
    private static final int DESCRIBE_BYTES = 16;

    /**
     * One write of a transaction.
     *
     * @param indexId the index written to
     * @param type the op code ({@link #PUT}, {@link #DELETE}, {@link #UPDATE}, {@link #RANGE_UPDATE},
     *     {@link #RANGE_DELETE} or {@link #PUT_EXPIRING})
     * @param key the key (not null); of a range op, the range's lower bound
     * @param value the value, or null for a delete; the list of calls of an update; the bounds and
     *     calls of a range op; the expiry and value of an expiring put
     */
    public record Op(int indexId, byte type, byte[] key, byte[] value) implements LoggedWrite {

        /** Checks the key is present. The arrays are not copied: do not modify them afterwards. */
        public Op {
            Objects.requireNonNull(key, "key");
        }

        /** Bytes the op takes encoded, in a log record or a spill file. */
        public int encodedBytes() {
            return CommitRecord.encodedBytes(this);
        }

        /** The op code, {@link #type}. */
        @Override
        public byte opCode() {
            return type;
        }

        /** A put of {@code value} under {@code key}. */
        public static Op put(int indexId, byte[] key, byte[] value) {
            return new Op(indexId, PUT, key, Objects.requireNonNull(value, "value"));
        }

        /** A delete of {@code key}. */
        public static Op delete(int indexId, byte[] key) {
            return new Op(indexId, DELETE, key, null);
        }

        /** Compares the key and value by content. */
        @Override
        public boolean equals(Object o) {
            return o instanceof Op other && indexId == other.indexId && type == other.type
                    && Arrays.equals(key, other.key) && Arrays.equals(value, other.value);
        }

        @Override
        public int hashCode() {
            return Objects.hash(indexId, type, Arrays.hashCode(key), Arrays.hashCode(value));
        }

        @Override
        public String toString() {
            return "Op[" + describe() + "]";
        }

        /** Renders the op with abbreviated hexadecimal key and value. */
        String describe() {
            String name = type == PUT ? "put" : type == DELETE ? "delete" : type == UPDATE ? "update"
                    : type == RANGE_UPDATE ? "range update" : type == RANGE_DELETE ? "range delete"
                    : type == PUT_EXPIRING ? "expiring put" : "type" + type;
            return name + " index=" + indexId + " key=" + hex(key)
                    + (value == null ? "" : " value=" + hex(value));
        }
    }

    /** Copies {@code ops}; rejects null elements. */
    public CommitRecord {
        ops = List.copyOf(ops);
    }

    @Override
    public LogRecordType type() {
        return LogRecordType.COMMIT;
    }

    /**
     * {@inheritDoc}
     *
     * @throws IllegalArgumentException if the encoding would exceed {@link WriteAheadLog#MAX_PAYLOAD_BYTES}
     */
    @Override
    public ByteBuffer encode() {
        ByteBuffer out = encodeUnstamped(ops);
        stamp(out, commitTs);
        return out;
    }

    /**
     * Encodes a commit record of {@code writes} with a commit timestamp of 0, for {@link #stamp}
     * to fill in: a committing transaction encodes its record before it takes the commit gate,
     * where its timestamp is decided.
     *
     * @throws IllegalArgumentException if the encoding would exceed {@link WriteAheadLog#MAX_PAYLOAD_BYTES}
     */
    public static ByteBuffer encodeUnstamped(List<? extends LoggedWrite> writes) {
        ByteBuffer out = ByteBuffer.allocate(checkedSize(FIXED_BYTES + opsBytes(writes), "commit"));
        out.putLong(0);
        return putOps(out, writes).flip();
    }

    /** Writes {@code commitTs} into a record {@link #encodeUnstamped} made; its position does not move. */
    public static void stamp(ByteBuffer record, long commitTs) {
        record.putLong(record.position(), commitTs);
    }

    /** Bytes {@code write} takes encoded. */
    static int encodedBytes(LoggedWrite write) {
        return OP_FIXED_BYTES + write.key().length + (write.value() == null ? 0 : write.value().length);
    }

    /** Encoded bytes of {@code ops}, their count included. */
    static long opsBytes(List<? extends LoggedWrite> ops) {
        long size = 4;
        for (LoggedWrite op : ops) {
            size += encodedBytes(op);
        }
        return size;
    }

    /** @throws IllegalArgumentException if {@code size} exceeds {@link WriteAheadLog#MAX_PAYLOAD_BYTES} */
    static int checkedSize(long size, String what) {
        if (size > WriteAheadLog.MAX_PAYLOAD_BYTES) {
            throw new IllegalArgumentException(what + " record of " + size + " bytes exceeds the limit of "
                    + WriteAheadLog.MAX_PAYLOAD_BYTES);
        }
        return (int) size;
    }

    /** Puts the op count and the ops. */
    static ByteBuffer putOps(ByteBuffer out, List<? extends LoggedWrite> ops) {
        out.putInt(ops.size());
        for (LoggedWrite op : ops) {
            byte[] value = op.value();
            out.putInt(op.indexId()).put(op.opCode()).putInt(op.key().length).put(op.key());
            if (value == null) {
                out.putInt(-1);
            } else {
                out.putInt(value.length).put(value);
            }
        }
        return out;
    }

    /** Reads what {@link #putOps} put. */
    static List<Op> readOps(PayloadReader in) {
        int n = in.count(in.i32("op count"), OP_FIXED_BYTES, "op count");
        List<Op> ops = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            int indexId = in.i32("index id");
            byte type = in.i8("op type");
            byte[] key = in.bytes(in.i32("key length"), "key");
            int valueLength = in.i32("value length");
            byte[] value = valueLength == -1 ? null : in.bytes(valueLength, "value");
            ops.add(new Op(indexId, type, key, value));
        }
        return ops;
    }

    /**
     * Decodes the remaining bytes of {@code payload} without moving its position.
     *
     * @throws IllegalArgumentException if the bytes are not exactly one well-formed commit record
     */
    public static CommitRecord decode(ByteBuffer payload) {
        PayloadReader in = new PayloadReader(payload, "commit");
        long ts = in.i64("commit timestamp");
        List<Op> ops = readOps(in);
        in.end();
        return new CommitRecord(ts, ops);
    }

    @Override
    public String describe() {
        return "ts=" + commitTs + " " + describeOps(ops);
    }

    /** The op count and the first few ops, abbreviated. */
    static String describeOps(List<Op> ops) {
        StringBuilder sb = new StringBuilder("ops=").append(ops.size());
        for (int i = 0; i < Math.min(ops.size(), DESCRIBE_OPS); i++) {
            sb.append(i == 0 ? " [" : "; ").append(ops.get(i).describe());
        }
        if (ops.size() > DESCRIBE_OPS) {
            sb.append("; ...");
        }
        return ops.isEmpty() ? sb.toString() : sb.append(']').toString();
    }

    /** Hexadecimal rendering of at most {@link #DESCRIBE_BYTES} bytes, with the length when abbreviated. */
    static String hex(byte[] bytes) {
        HexFormat hex = HexFormat.of();
        if (bytes.length <= DESCRIBE_BYTES) {
            return "0x" + hex.formatHex(bytes);
        }
        return "0x" + hex.formatHex(bytes, 0, DESCRIBE_BYTES) + "...(" + bytes.length + " bytes)";
    }
}
