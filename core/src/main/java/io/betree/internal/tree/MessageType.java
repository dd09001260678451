package io.betree.internal.tree;

/**
 * Kinds of messages that travel down the tree. The byte values are stored on disk and never change.
 * Update functions and broadcast messages will take further values.
 */
public final class MessageType {
    private MessageType() {
    }

    /** Insert or overwrite the key's value. */
    public static final byte PUT = 1;
    /** Remove the key. */
    public static final byte DELETE = 2;

    /** Whether {@code type} is a value this version understands. */
    public static boolean isKnown(byte type) {
        return type == PUT || type == DELETE;
    }
}
