package io.betree.internal.tree;

import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * The stored form of a value that expires (a {@link MessageType#PUT_EXPIRING} message's value, an
 * expiring row's value in a basement): the expiry instant, milliseconds since the epoch (8 bytes,
 * big-endian), then the value. A value is visible while the clock ({@link UpdateFunctions#nowMillis})
 * is before its expiry, and gone from its expiry on, for every reader and snapshot alike. Stateless.
 */
public final class Expiry {
    /** Bytes the expiry adds in front of a value. */
    public static final int BYTES = 8;

    private Expiry() {
    }

    /** The stored form of {@code value} expiring at {@code expiresAtMillis}. */
    public static byte[] wrap(long expiresAtMillis, byte[] value) {
        return ByteBuffer.allocate(BYTES + value.length).putLong(expiresAtMillis).put(value).array();
    }

    /** The expiry of a stored form. */
    public static long of(byte[] stored) {
        return ByteBuffer.wrap(stored).getLong(0);
    }

    /** The value of a stored form. */
    public static byte[] value(byte[] stored) {
        return Arrays.copyOfRange(stored, BYTES, stored.length);
    }

    /** The value of a stored form if it has not expired at {@code nowMillis}, else null. */
    public static byte[] live(byte[] stored, long nowMillis) {
        return of(stored) <= nowMillis ? null : value(stored);
    }

    /**
     * What a put message of {@code type} with {@code value} (its stored form for an expiring put)
     * reads as at {@code nowMillis}: the value, or null once it expired.
     */
    static byte[] ofPut(byte type, byte[] value, long nowMillis) {
        return type == MessageType.PUT_EXPIRING ? live(value, nowMillis) : value;
    }
}
