package io.betree.internal.tree;

/**
 * One write of a batch given to {@link BeTree#writeAll}: a {@link MessageType#PUT} of
 * {@link #value()} under {@link #key()}, a {@link MessageType#DELETE} (value null), an
 * {@link MessageType#UPDATE} (value an {@link UpdateList}), or a message over the key range from
 * {@link #key()} (inclusive; empty for no bound), a {@link MessageType#RANGE_DELETE} or
 * {@link MessageType#RANGE_UPDATE}, whose value holds its upper bound and update list
 * ({@link RangeMessage#encodeValue}). The layer above implements it with its own write records, so a commit's writes
 * reach the tree uncopied.
 */
public interface TreeWrite {
    /** One of the {@link MessageType} values. */
    byte type();

    /** The key; not changed by the tree. */
    byte[] key();

    /** The value of a put, null for a delete (see above for the others); not changed by the tree. */
    byte[] value();

}
