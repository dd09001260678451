package io.betree.internal.log;

import java.nio.ByteBuffer;

/**
 * The kinds of log records: the one place record types are defined. The writer stores
 * {@link #code()}, the reader maps it back with {@link #fromCode}, and recovery and the log dump decode
 * payloads through {@link #decode} and {@link #describe}. Codes are stored on disk and never change;
 * a new type takes a new code. Code 3 is taken: format version 1 defined a checkpoint record that
 * no version ever wrote (recovery starts from the position the data file's catalog records).
 */
public enum LogRecordType {

    /** A committed transaction's writes ({@link CommitRecord}). */
    COMMIT(1) {
        @Override
        public CommitRecord decode(ByteBuffer payload) {
            return CommitRecord.decode(payload);
        }
    },

    /** An index was created ({@link CreateIndexRecord}). */
    CREATE_INDEX(2) {
        @Override
        public CreateIndexRecord decode(ByteBuffer payload) {
            return CreateIndexRecord.decode(payload);
        }
    },

    /** A part of a large transaction's writes, logged before it commits ({@link WritesRecord}). */
    WRITES(4) {
        @Override
        public WritesRecord decode(ByteBuffer payload) {
            return WritesRecord.decode(payload);
        }
    },

    /** A large transaction committed the parts it names ({@link CommitPartsRecord}). */
    COMMIT_PARTS(5) {
        @Override
        public CommitPartsRecord decode(ByteBuffer payload) {
            return CommitPartsRecord.decode(payload);
        }
    };

    /** Types by code; codes are small, so an array indexed by code. */
    private static final LogRecordType[] BY_CODE = new LogRecordType[256];

    static {
        for (LogRecordType t : values()) {
            if (BY_CODE[t.code & 0xff] != null) {
                throw new ExceptionInInitializerError("duplicate log record type code " + t.code);
            }
            BY_CODE[t.code & 0xff] = t;
        }
    }

    private final byte code;

    LogRecordType(int code) {
        this.code = (byte) code;
    }

    /** The code stored on disk. */
    public byte code() {
        return code;
    }

    /** The type stored as {@code code}, or null if this version knows no such type. */
    public static LogRecordType fromCode(byte code) {
        return BY_CODE[code & 0xff];
    }

    /**
     * Decodes the remaining bytes of {@code payload}, without moving its position, into this type's
     * payload record.
     *
     * @throws IllegalArgumentException if the bytes are not a well-formed payload of this type
     */
    public abstract LogPayload decode(ByteBuffer payload);

    /**
     * A one-line description of {@code payload} for dumps; a malformed payload is described as such
     * instead of throwing.
     */
    public String describe(ByteBuffer payload) {
        try {
            return decode(payload).describe();
        } catch (IllegalArgumentException e) {
            return "undecodable " + payload.remaining() + "-byte payload: " + e.getMessage();
        }
    }
}
