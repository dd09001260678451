package io.betree.internal.tree;

/**
 * Kinds of messages that travel down the tree. The byte values are stored on disk and never change.
 * Types 1-3 and 6 are keyed; 4 and 5 cover a key range ({@link RangeMessage}).
 */
public final class MessageType {
    private MessageType() {
    }

    /** Insert or overwrite the key's value. */
    public static final byte PUT = 1;
    /** Remove the key. */
    public static final byte DELETE = 2;
    /**
     * Change the key's value by registered functions, without reading it: the value is an
     * {@link UpdateList}, applied where the message meets the key's value (a basement, or a read).
     */
    public static final byte UPDATE = 3;
    /**
     * A broadcast: change every row present in a key range (all keys, for {@code updateAll}) by an
     * {@link UpdateList}; absent keys stay absent.
     */
    public static final byte RANGE_UPDATE = 4;
    /** Remove every key in a key range. */
    public static final byte RANGE_DELETE = 5;
    /** A put whose value expires: the value is its {@link Expiry} stored form. */
    public static final byte PUT_EXPIRING = 6;

    /** Whether {@code type} is a value this version understands. */
    public static boolean isKnown(byte type) {
        return type >= PUT && type <= PUT_EXPIRING;
    }

    /** Whether {@code type} stores a value under a key: a put, expiring or not. */
    public static boolean isPut(byte type) {
        return type == PUT || type == PUT_EXPIRING;
    }

    /** Whether {@code type} is a message that covers a key range ({@link RangeMessage}). */
    public static boolean isRange(byte type) {
        return type == RANGE_UPDATE || type == RANGE_DELETE;
    }
}
