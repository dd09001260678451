package io.betree.internal.log;

import java.io.IOException;
import java.nio.ByteBuffer;

/** Receives the records of a log replay or read, in LSN order. */
@FunctionalInterface
public interface RecordVisitor {

    /**
     * Called once per record.
     *
     * @param lsn the record's LSN (its position in the log)
     * @param type the record's type
     * @param payload the payload, read-only, from its position to its limit; valid only during this
     *     call (the buffer is reused afterwards), so copy or decode what must be kept
     * @throws IOException to abort the replay, which then throws it on
     */
    void visit(long lsn, LogRecordType type, ByteBuffer payload) throws IOException;
}
