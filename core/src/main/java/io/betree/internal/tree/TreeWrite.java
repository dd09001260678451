package io.betree.internal.tree;

/**
 * One write of a batch given to {@link BeTree#writeAll}: a {@link MessageType#PUT} of
 * {@link #value()} under {@link #key()}, or a {@link MessageType#DELETE} (value null). The layer
 * above implements it with its own write records, so a commit's writes reach the tree uncopied.
 */
public interface TreeWrite {
    /** {@link MessageType#PUT} or {@link MessageType#DELETE}. */
    byte type();

    /** The key; not changed by the tree. */
    byte[] key();

    /** The value of a put, null for a delete; not changed by the tree. */
    byte[] value();
}
