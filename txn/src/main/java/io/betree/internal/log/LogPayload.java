package io.betree.internal.log;

import java.nio.ByteBuffer;

/**
 * The decoded payload of a log record. Each implementation is the codec of one
 * {@link LogRecordType}: it encodes itself and is produced by {@link LogRecordType#decode}.
 */
public sealed interface LogPayload permits CommitRecord, CreateIndexRecord, WritesRecord, CommitPartsRecord {

    /** The record type this payload is stored under. */
    LogRecordType type();

    /** The payload's bytes (big-endian), in a new buffer positioned at 0. */
    ByteBuffer encode();

    /** A one-line human-readable rendering, for log dumps and messages. */
    String describe();
}
