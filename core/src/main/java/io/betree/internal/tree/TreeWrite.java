package io.betree.internal.tree;

/**
 * One write of a batch given to {@link BeTree#writeAll}: a {@link MessageType#PUT} of
 * {@link #value()} under {@link #key()}, a {@link MessageType#DELETE} (value null), an
 * {@link MessageType#UPDATE} (value an {@link UpdateList}), or a message over the key range from
 * {@link #key()} (inclusive; empty for no bound) to {@link #upperBound()}: a
 * {@link MessageType#RANGE_DELETE} (value null) or a {@link MessageType#RANGE_UPDATE} (value an
 * update list). The layer above implements it with its own write records, so a commit's writes
 * reach the tree uncopied.
 */
public interface TreeWrite {
    /** One of the {@link MessageType} values. */
    byte type();

    /** The key; not changed by the tree. */
    byte[] key();

    /** The value of a put, null for a delete; not changed by the tree. */
    byte[] value();

    /**
     * Of a range message, the first key above the range (exclusive), or null for no bound; not
     * changed by the tree. Null for keyed messages.
     */
    default byte[] upperBound() {
        return null;
    }
}
