package io.betree.internal.log;

import java.nio.ByteBuffer;

/**
 * Payload of a {@link LogRecordType#CHECKPOINT} record: a checkpoint became durable, and recovery from
 * it needs the log from {@code checkpointLsn} on.
 *
 * <p>Encoding (big-endian): checkpoint LSN (8), checkpoint timestamp (8).
 *
 * @param checkpointLsn the LSN recovery from this checkpoint starts at
 * @param checkpointTs the newest commit timestamp the checkpoint contains
 */
public record CheckpointRecord(long checkpointLsn, long checkpointTs) implements LogPayload {

    private static final int BYTES = 16;

    @Override
    public LogRecordType type() {
        return LogRecordType.CHECKPOINT;
    }

    @Override
    public ByteBuffer encode() {
        return ByteBuffer.allocate(BYTES).putLong(checkpointLsn).putLong(checkpointTs).flip();
    }

    /**
     * Decodes the remaining bytes of {@code payload} without moving its position.
     *
     * @throws IllegalArgumentException unless the payload is exactly 16 bytes
     */
    public static CheckpointRecord decode(ByteBuffer payload) {
        PayloadReader in = new PayloadReader(payload, "checkpoint");
        long lsn = in.i64("checkpoint LSN");
        long ts = in.i64("checkpoint timestamp");
        in.end();
        return new CheckpointRecord(lsn, ts);
    }

    @Override
    public String describe() {
        return "checkpointLsn=" + checkpointLsn + " checkpointTs=" + checkpointTs;
    }
}
