package io.betree.internal.tree;

/**
 * Kinds of messages that travel down the tree. The byte values are stored on disk and never change.
 * Broadcast updates and range deletes will take further values (docs/design-messages.md).
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

    /** Whether {@code type} is a value this version understands. */
    public static boolean isKnown(byte type) {
        return type == PUT || type == DELETE || type == UPDATE;
    }
}
