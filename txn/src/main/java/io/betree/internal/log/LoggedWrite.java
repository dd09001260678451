package io.betree.internal.log;

/**
 * One write as a commit record encodes it ({@link CommitRecord#encodeUnstamped}): what a committing
 * transaction hands the log without making a {@link CommitRecord.Op} per write first. The arrays
 * are read, not copied, while the record is encoded.
 */
public interface LoggedWrite {
    /** The index written to. */
    int indexId();

    /** The log's op code: {@link CommitRecord#PUT} or {@link CommitRecord#DELETE}. */
    byte opCode();

    /** The key; never null. */
    byte[] key();

    /** The value, or null for a delete. */
    byte[] value();
}
