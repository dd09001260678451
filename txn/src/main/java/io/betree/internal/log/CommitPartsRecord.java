package io.betree.internal.log;

import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * Payload of a {@link LogRecordType#COMMIT_PARTS} record: a transaction whose writes were logged
 * beforehand in {@link WritesRecord} parts committed. Recovery applies the parts, read at their
 * LSNs, as one commit at its timestamp; the log keeps every part until a checkpoint covers the
 * commit.
 *
 * <p>Encoding (big-endian): commit timestamp (8), write count (8), part count (4), then the LSN of
 * each part (8 each), in part order.
 *
 * @param commitTs the transaction's commit timestamp
 * @param writes the writes in all parts
 * @param partLsns the LSNs of the parts, in order (copied)
 */
public record CommitPartsRecord(long commitTs, long writes, long[] partLsns) implements LogPayload {

    /** Copies the LSNs. */
    public CommitPartsRecord {
        partLsns = partLsns.clone();
    }

    /** The LSNs of the parts, in order (a copy). */
    @Override
    public long[] partLsns() {
        return partLsns.clone();
    }

    @Override
    public LogRecordType type() {
        return LogRecordType.COMMIT_PARTS;
    }

    @Override
    public ByteBuffer encode() {
        ByteBuffer out = ByteBuffer.allocate(CommitRecord.checkedSize(20 + 8L * partLsns.length, "commit parts"));
        out.putLong(commitTs).putLong(writes).putInt(partLsns.length);
        for (long lsn : partLsns) {
            out.putLong(lsn);
        }
        return out.flip();
    }

    /**
     * Decodes the remaining bytes of {@code payload} without moving its position.
     *
     * @throws IllegalArgumentException if the bytes are not exactly one well-formed record
     */
    public static CommitPartsRecord decode(ByteBuffer payload) {
        PayloadReader in = new PayloadReader(payload, "commit parts");
        long ts = in.i64("commit timestamp");
        long writes = in.i64("write count");
        int n = in.count(in.i32("part count"), 8, "part count");
        long[] lsns = new long[n];
        for (int i = 0; i < n; i++) {
            lsns[i] = in.i64("part LSN");
        }
        in.end();
        return new CommitPartsRecord(ts, writes, lsns);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof CommitPartsRecord other && commitTs == other.commitTs && writes == other.writes
                && Arrays.equals(partLsns, other.partLsns);
    }

    @Override
    public int hashCode() {
        return Long.hashCode(commitTs) * 31 + Arrays.hashCode(partLsns);
    }

    @Override
    public String describe() {
        return "ts=" + commitTs + " writes=" + writes + " parts=" + partLsns.length
                + (partLsns.length == 0 ? "" : " first part at LSN " + partLsns[0]);
    }
}
